// The payments ledger: one row per x402 payment attempt that reached the facilitator, written by the
// payment gate and updated as the attempt's status changes (not one row per event):
//
//   verified ─┬─→ settled         the transfer is on chain (tx hash, settled amount)
//             ├─→ settle_failed   the facilitator refused to settle, or the authorization expired unused (reason)
//             ├─→ cancelled       never settled: the handler failed, the ledger was too slow, or the same
//             │                   authorization is settled on another row (reason)
//             └─→ unknown         neither the facilitator nor the chain could say whether the transfer landed
//   verified | unknown ──→ settled | settle_failed | cancelled   (found out from the chain by
//                          src/payments/reconciler.ts, or by hand: `npm run payments -- resolve`)
//
// One settled row per (network, payer, authorization nonce), enforced by the database (payment-outcome.ts).
//
// No payment is taken that cannot be recorded: `recordVerified` runs before the handler and fails
// fast (DatabaseUnavailableError, 503, within DB_TIMEOUT_MS) when the row cannot be written, so the
// gate refuses the call before settling anything. Once money has moved the other rule holds: a final
// status that cannot be written never turns the payer's success into an error — `recordOutcome`
// never throws; the write is retried in the background, logged loudly and counted.
import { randomUUID } from 'node:crypto';
import { escapeControl, escapeControlOrNull } from '../lib/control-chars.ts';
import { claimAnswer, listPayments, noteChainState, summarizePayments, unansweredPayment, unfinishedPayments } from './payment-reports.ts';
import { writeOutcome } from './payment-outcome.ts';
import { DatabaseUnavailableError, type DatabaseService, type DbLog } from './service.ts';

export { listPayments, resolvePayment, summarizePayments, type Resolution } from './payment-reports.ts';

export const PAYMENT_STATUSES = ['verified', 'settled', 'settle_failed', 'cancelled', 'unknown'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** What the gate knows once the facilitator has verified a payment, before the handler runs. */
export interface VerifiedPayment {
  /** The HTTP request's id (x-request-id). */
  requestId: string;
  /** The route as declared, e.g. `/v1/price`. */
  route: string;
  /** The x402 resource URL the payment was for. */
  resourceUrl: string;
  scheme: string;
  /** CAIP-2, e.g. `eip155:8453`. */
  network: string;
  /** Token contract address. */
  asset: string;
  /** Amount required, in the token's atomic units (a decimal string: 1000 = $0.001 of USDC). */
  amountRequired: string;
  payTo: string;
  /** The payer's address, as the facilitator's verification names it. */
  payer: string | null;
  /** SHA-256 (hex) of the payment payload as received. */
  payloadHash: string;
  /** The x402 payment-identifier extension's id, when the client sent one. */
  paymentIdentifier?: string | null;
  /** EIP-3009 authorization nonce and validBefore, for reconciling an `unknown` on chain. */
  authorizationNonce?: string | null;
  validBefore?: Date | null;
  /** Which facilitator verified it (`coinbase-cdp` or its URL). */
  facilitator: string;
}

/**
 * How an attempt ended. `chain`: what the chain said, when it was asked. `answered`: the paid answer went out
 * with this settlement. `strict`: a settlement the database refuses as a second one of its authorization is an
 * error (an operator's resolution), not a row marked duplicate.
 */
export type PaymentOutcome =
  | { status: 'settled'; txHash: string | null; settledAmount: string; payer?: string | null; answered?: boolean; chain?: string; strict?: boolean }
  | { status: 'settle_failed'; errorReason: string; txHash?: string | null; chain?: string }
  | { status: 'cancelled'; reason: string; chain?: string }
  | { status: 'unknown'; errorReason: string; txHash?: string | null; chain?: string };

/** A ledger row as the CLI and the admin channel show it (times as ISO-8601 strings). */
export interface PaymentRecord {
  id: string;
  request_id: string;
  route: string;
  resource_url: string;
  scheme: string;
  network: string;
  asset: string;
  amount_required: string;
  pay_to: string;
  payer: string | null;
  payload_hash: string;
  payment_identifier: string | null;
  authorization_nonce: string | null;
  valid_before: string | null;
  status: PaymentStatus;
  tx_hash: string | null;
  settled_amount: string | null;
  facilitator: string;
  error_reason: string | null;
  verified_at: string;
  updated_at: string;
  finished_at: string | null;
  /** When the paid answer went out (a retry of the same payment is then never answered again). */
  answered_at: string | null;
  /** When the chain was last asked about the authorization, and what it said. */
  chain_checked_at: string | null;
  chain_state: string | null;
}

/** One line of the summary: attempts and amounts per UTC day, route, status and asset. */
export interface PaymentSummaryRow {
  day: string;
  route: string;
  status: PaymentStatus;
  asset: string;
  count: number;
  /** Sum of the amounts required, atomic units. */
  amount_required: string;
  /** Sum of the amounts settled, atomic units. */
  amount_settled: string;
}

export interface PaymentFilter {
  since?: Date;
  until?: Date;
  status?: PaymentStatus;
  /** Newest first; default 100. */
  limit?: number;
}

/** How the ledger's final-status writes are doing (the admin channel shows it). */
export interface LedgerStats {
  /** Final-status writes that failed (each failed attempt counts). */
  final_write_failures: number;
  /** Final statuses waiting for a retry right now. */
  final_writes_pending: number;
  /** Final statuses given up on (logged in full at error level, to be recorded by hand). */
  final_writes_lost: number;
}

/** Waits between attempts of a final-status write; the last one repeats. */
export const RETRY_DELAYS_MS = [1000, 2000, 5000, 10_000, 30_000, 60_000];
/** Most final statuses held for retry; past it the oldest is given up (logged in full). */
const MAX_PENDING = 10_000;

interface PendingWrite {
  id: string;
  outcome: PaymentOutcome;
  attempts: number;
  nextAt: number;
  /** A compensation for a verified row that may never have landed: a missing row means done, and it is not counted as lost. */
  compensation: boolean;
}

export interface PaymentLedgerOptions {
  log: DbLog;
  clock?: () => number;
  retryDelaysMs?: readonly number[];
}

export class PaymentLedger {
  private readonly pending = new Map<string, PendingWrite>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly counts = { failures: 0, lost: 0 };
  private readonly clock: () => number;
  private readonly delays: readonly number[];

  constructor(
    private readonly db: DatabaseService,
    private readonly options: PaymentLedgerOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  }

  /**
   * Writes the `verified` row; resolves with its id. Rejects with DatabaseUnavailableError (503,
   * source "database") within DB_TIMEOUT_MS when the row cannot be written, whatever the cause: the
   * gate must then refuse the call before the handler runs and before anything is settled.
   */
  async recordVerified(p: VerifiedPayment): Promise<string> {
    const id = randomUUID();
    const now = new Date(this.clock());
    try {
      await this.db.use((db) =>
        db.query(
          `INSERT INTO payments (id, request_id, route, resource_url, scheme, network, asset, amount_required, pay_to, payer, payload_hash,
             payment_identifier, authorization_nonce, valid_before, status, facilitator, verified_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'verified', $15, $16, $16)`,
          [
            id,
            p.requestId,
            p.route,
            escapeControl(p.resourceUrl),
            p.scheme,
            p.network,
            p.asset,
            p.amountRequired,
            p.payTo,
            escapeControlOrNull(p.payer),
            p.payloadHash,
            escapeControlOrNull(p.paymentIdentifier),
            escapeControlOrNull(p.authorizationNonce),
            p.validBefore ?? null,
            p.facilitator,
            now,
          ],
        ),
      );
      return id;
    } catch (err) {
      // The insert may still land after we gave up on it (a slow database): mark such a row as
      // never settled, so it does not stay `verified` forever.
      this.enqueue({ id, outcome: { status: 'cancelled', reason: 'the ledger did not record the payment in time; refused before settlement' }, attempts: 0, nextAt: this.clock() + this.db.timeoutMs, compensation: true });
      this.options.log.error({ payment: id, request_id: p.requestId, err: String((err as Error)?.message ?? err) }, 'payment ledger: could not record a verified payment; the call is refused before settlement');
      // Whatever the cause, the payment cannot be taken: always the same 503 for the gate.
      throw err instanceof DatabaseUnavailableError ? err : new DatabaseUnavailableError(`payment ledger could not record the payment: ${(err as Error)?.message ?? err}`, { cause: err });
    }
  }

  /**
   * Records how an attempt ended. Never throws: resolves `recorded` when written now, `queued` when the
   * write failed and will be retried (logged at error level and counted in `stats()`).
   */
  async recordOutcome(id: string, outcome: PaymentOutcome): Promise<'recorded' | 'queued'> {
    const write: PendingWrite = { id, outcome, attempts: 0, nextAt: this.clock(), compensation: false };
    if (await this.attempt(write)) return 'recorded';
    this.enqueue(write);
    return 'queued';
  }

  recordSettled(id: string, s: Omit<Extract<PaymentOutcome, { status: 'settled' }>, 'status' | 'strict'>) {
    return this.recordOutcome(id, { status: 'settled', ...s });
  }

  recordSettleFailed(id: string, f: { errorReason: string; txHash?: string | null; chain?: string }) {
    return this.recordOutcome(id, { status: 'settle_failed', ...f });
  }

  recordCancelled(id: string, reason: string, chain?: string) {
    return this.recordOutcome(id, { status: 'cancelled', reason, chain });
  }

  recordUnknown(id: string, u: { errorReason: string; txHash?: string | null; chain?: string }) {
    return this.recordOutcome(id, { status: 'unknown', ...u });
  }

  stats(): LedgerStats {
    return { final_write_failures: this.counts.failures, final_writes_pending: [...this.pending.values()].filter((w) => !w.compensation).length, final_writes_lost: this.counts.lost };
  }

  /** Tries every pending write once now (oldest first), until `deadline` (epoch ms); returns how many are still pending. */
  async retryNow(deadline = Infinity): Promise<number> {
    for (const write of [...this.pending.values()]) {
      if (Date.now() >= deadline) break;
      if (await this.attempt(write)) this.pending.delete(write.id);
      else this.reschedule(write);
    }
    this.schedule();
    return this.pending.size;
  }

  /**
   * Last attempts for the pending writes, within `budgetMs` (the server's shutdown is itself bounded);
   * what is still pending is logged in full as lost.
   */
  async close(budgetMs = 3000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    await this.retryNow(Date.now() + budgetMs);
    clearTimeout(this.timer);
    for (const write of this.pending.values()) this.giveUp(write, 'the server is shutting down');
    this.pending.clear();
  }

  /** Rows newest first. */
  async list(filter: PaymentFilter = {}): Promise<PaymentRecord[]> {
    return this.db.use((db) => listPayments(db, filter));
  }

  /** Count and amounts by UTC day, route, status and asset. */
  async summary(filter: Pick<PaymentFilter, 'since' | 'until'> = {}): Promise<PaymentSummaryRow[]> {
    return this.db.use((db) => summarizePayments(db, filter));
  }

  /** Rows of `network` the chain may decide (left `verified` or `unknown`), oldest first, each at most once per `recheckMs`. */
  async unfinished(network: string, recheckMs: number, limit = 100): Promise<PaymentRecord[]> {
    return this.db.use((db) => unfinishedPayments(db, network, new Date(this.clock()), recheckMs, limit));
  }

  /** The row of this very payment (payload hash) whose answer never went out, if any. */
  async unanswered(payloadHash: string): Promise<PaymentRecord | undefined> {
    return this.db.use((db) => unansweredPayment(db, payloadHash));
  }

  /** Claims the answer of a settled payment for one retry; false when it (or its authorization) was answered already. */
  async claimAnswer(id: string): Promise<boolean> {
    return this.db.use((db) => claimAnswer(db, id, new Date(this.clock())));
  }

  /** Records what the chain said about a row it cannot decide yet. */
  async noteChain(id: string, state: string): Promise<void> {
    await this.db.use((db) => noteChainState(db, id, state, new Date(this.clock())));
  }

  /** One write attempt; true when the row now carries the outcome (or needs nothing more). */
  private async attempt(write: PendingWrite): Promise<boolean> {
    const { id, outcome } = write;
    write.attempts++;
    try {
      const now = new Date(this.clock());
      const changed = await this.db.use((db) => writeOutcome(db, id, outcome, now));
      if (changed) return true;
      // Nothing changed: the row is missing (its insert has not landed, or never will) or it is already final.
      const [row] = await this.db.use((db) => db.query<{ status: PaymentStatus }>('SELECT status FROM payments WHERE id = $1', [id]));
      if (row) {
        if (row.status !== outcome.status) this.options.log.warn({ payment: id, status: row.status, outcome: outcome.status }, 'payment ledger: the payment is already final; outcome not applied');
        return true;
      }
      if (write.compensation) return true;
      throw new Error(`no payment ${id} in the ledger yet`);
    } catch (err) {
      if (write.compensation) return false;
      this.counts.failures++;
      const level = write.attempts === 1 ? 'error' : 'warn';
      this.options.log[level](
        { payment: id, outcome, attempt: write.attempts, err: String((err as Error)?.message ?? err), failures_total: this.counts.failures },
        `payment ledger: could not record the ${outcome.status} status of payment ${id}; retrying (the payer's answer is unaffected)`,
      );
      return false;
    }
  }

  private enqueue(write: PendingWrite): void {
    if (this.closed) return this.giveUp(write, 'the ledger is closed');
    if (this.pending.size >= MAX_PENDING) {
      const oldest = this.pending.values().next().value!;
      this.pending.delete(oldest.id);
      this.giveUp(oldest, `more than ${MAX_PENDING} writes pending`);
    }
    if (write.attempts > 0) this.reschedule(write);
    this.pending.set(write.id, write);
    this.schedule();
  }

  private reschedule(write: PendingWrite): void {
    write.nextAt = this.clock() + this.delays[Math.min(write.attempts - 1, this.delays.length - 1)]!;
    if (write.compensation && write.attempts >= 3) this.pending.delete(write.id);
  }

  /** One timer, for the earliest pending write. */
  private schedule(): void {
    clearTimeout(this.timer);
    if (this.closed || this.pending.size === 0) return;
    const next = Math.min(...[...this.pending.values()].map((w) => w.nextAt));
    this.timer = setTimeout(() => void this.retryDue(), Math.max(0, next - this.clock()));
    this.timer.unref();
  }

  private async retryDue(): Promise<void> {
    const now = this.clock();
    for (const write of [...this.pending.values()]) {
      if (write.nextAt > now) continue;
      if (await this.attempt(write)) {
        this.pending.delete(write.id);
        if (write.attempts > 1 && !write.compensation) this.options.log.info({ payment: write.id, status: write.outcome.status, attempts: write.attempts }, 'payment ledger: final status recorded after retrying');
      } else this.reschedule(write);
    }
    this.schedule();
  }

  private giveUp(write: PendingWrite, why: string): void {
    if (write.compensation) return;
    this.counts.lost++;
    this.options.log.error(
      { payment: write.id, outcome: write.outcome, attempts: write.attempts, lost_total: this.counts.lost },
      `payment ledger: LOST the ${write.outcome.status} status of payment ${write.id} (${why}); record it by hand with npm run payments -- resolve`,
    );
  }
}

