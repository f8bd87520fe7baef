// The payments ledger: one row per x402 payment attempt that reached the facilitator, written by the
// payment gate and updated as the attempt's status changes (not one row per event):
//
//   verified ─┬─→ settled         the transfer is on chain (tx hash, settled amount)
//             ├─→ settle_failed   the facilitator refused or failed to settle (error reason)
//             ├─→ cancelled       never settled: the handler failed, or the ledger was too slow (reason)
//             └─→ unknown         settlement timed out: the transfer may still land (reconcile it)
//   unknown ──→ settled | settle_failed | cancelled   (reconciled later, by hand: `npm run payments -- resolve`)
//
// No payment is taken that cannot be recorded: `recordVerified` runs before the handler and fails
// fast (DatabaseUnavailableError, 503, within DB_TIMEOUT_MS) when the row cannot be written, so the
// gate refuses the call before settling anything. Once money has moved the other rule holds: a final
// status that cannot be written never turns the payer's success into an error — `recordOutcome`
// never throws; the write is retried in the background, logged loudly and counted.
import { randomUUID } from 'node:crypto';
import { AppError } from '../http/errors.ts';
import type { Database, Queryable } from './database.ts';
import { DatabaseUnavailableError, type DatabaseService, type DbLog } from './service.ts';

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

/** How an attempt ended. */
export type PaymentOutcome =
  | { status: 'settled'; txHash: string | null; settledAmount: string; payer?: string | null }
  | { status: 'settle_failed'; errorReason: string; txHash?: string | null }
  | { status: 'cancelled'; reason: string }
  | { status: 'unknown'; errorReason: string; txHash?: string | null };

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

/** From which statuses each outcome may be written. */
const ALLOWED_FROM: Record<PaymentOutcome['status'], readonly PaymentStatus[]> = {
  settled: ['verified', 'unknown'],
  settle_failed: ['verified', 'unknown'],
  cancelled: ['verified', 'unknown'],
  unknown: ['verified'],
};

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
            p.resourceUrl,
            p.scheme,
            p.network,
            p.asset,
            p.amountRequired,
            p.payTo,
            p.payer,
            p.payloadHash,
            p.paymentIdentifier ?? null,
            p.authorizationNonce ?? null,
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

  recordSettled(id: string, s: { txHash: string | null; settledAmount: string; payer?: string | null }) {
    return this.recordOutcome(id, { status: 'settled', ...s });
  }

  recordSettleFailed(id: string, f: { errorReason: string; txHash?: string | null }) {
    return this.recordOutcome(id, { status: 'settle_failed', ...f });
  }

  recordCancelled(id: string, reason: string) {
    return this.recordOutcome(id, { status: 'cancelled', reason });
  }

  recordUnknown(id: string, u: { errorReason: string; txHash?: string | null }) {
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

/** Moves a row to its final status when its current status allows; true when a row changed. */
async function writeOutcome(db: Queryable, id: string, o: PaymentOutcome, now: Date): Promise<boolean> {
  const txHash = 'txHash' in o ? (o.txHash ?? null) : null;
  const settledAmount = o.status === 'settled' ? o.settledAmount : null;
  const payer = o.status === 'settled' ? (o.payer ?? null) : null;
  const reason = o.status === 'cancelled' ? o.reason : o.status === 'settled' ? null : o.errorReason;
  const finished = o.status === 'unknown' ? null : now;
  const rows = await db.query(
    `UPDATE payments SET status = $2, tx_hash = coalesce($3, tx_hash), settled_amount = $4, payer = coalesce($5, payer),
       error_reason = $6, updated_at = $7, finished_at = $8
     WHERE id = $1 AND status IN (${ALLOWED_FROM[o.status].map((s) => `'${s}'`).join(', ')}) RETURNING id`,
    [id, o.status, txHash, settledAmount, payer, reason, now, finished],
  );
  return rows.length > 0;
}

const RECORD_COLUMNS = `id, request_id, route, resource_url, scheme, network, asset, amount_required::text AS amount_required, pay_to, payer,
  payload_hash, payment_identifier, authorization_nonce, valid_before, status, tx_hash, settled_amount::text AS settled_amount, facilitator,
  error_reason, verified_at, updated_at, finished_at`;

type RawRecord = Omit<PaymentRecord, 'valid_before' | 'verified_at' | 'updated_at' | 'finished_at'> & {
  valid_before: Date | null;
  verified_at: Date;
  updated_at: Date;
  finished_at: Date | null;
};

export async function listPayments(db: Queryable, f: PaymentFilter): Promise<PaymentRecord[]> {
  const rows = await db.query<RawRecord>(
    `SELECT ${RECORD_COLUMNS} FROM payments
     WHERE ($1::timestamptz IS NULL OR verified_at >= $1) AND ($2::timestamptz IS NULL OR verified_at < $2) AND ($3::text IS NULL OR status = $3)
     ORDER BY verified_at DESC, id LIMIT $4`,
    [f.since ?? null, f.until ?? null, f.status ?? null, f.limit ?? 100],
  );
  return rows.map((r) => ({
    ...r,
    valid_before: r.valid_before?.toISOString() ?? null,
    verified_at: r.verified_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
  }));
}

export async function summarizePayments(db: Queryable, f: Pick<PaymentFilter, 'since' | 'until'>): Promise<PaymentSummaryRow[]> {
  return db.query<PaymentSummaryRow>(
    `SELECT to_char(verified_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, route, status, asset, count(*)::integer AS count,
       sum(amount_required)::text AS amount_required, coalesce(sum(settled_amount), 0)::text AS amount_settled
     FROM payments
     WHERE ($1::timestamptz IS NULL OR verified_at >= $1) AND ($2::timestamptz IS NULL OR verified_at < $2)
     GROUP BY 1, route, status, asset ORDER BY 1 DESC, route, status, asset`,
    [f.since ?? null, f.until ?? null],
  );
}

/** An operator's verdict on an attempt whose outcome was not known. */
export type Resolution =
  | { status: 'settled'; txHash: string; settledAmount?: string }
  | Extract<PaymentOutcome, { status: 'settle_failed' }>
  | Extract<PaymentOutcome, { status: 'cancelled' }>;

/**
 * Reconciliation by hand (`npm run payments -- resolve`): gives an `unknown` attempt (or a `verified`
 * one left behind by a process that stopped mid-call) its final status. A settled resolution without
 * an amount takes the amount required. Throws a 404 for an unknown id and a 409 for a final row.
 */
export async function resolvePayment(db: Database, id: string, r: Resolution, now = new Date()): Promise<{ id: string; previous: PaymentStatus; status: PaymentStatus }> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ status: PaymentStatus; amount_required: string }>('SELECT status, amount_required::text AS amount_required FROM payments WHERE id = $1 FOR UPDATE', [id]);
    if (!row) throw new AppError(404, `no payment ${id} in the ledger`);
    if (row.status !== 'unknown' && row.status !== 'verified') throw new AppError(409, `payment ${id} is already ${row.status}`);
    const outcome: PaymentOutcome = r.status === 'settled' ? { ...r, settledAmount: r.settledAmount ?? row.amount_required } : r;
    await writeOutcome(tx, id, outcome, now);
    return { id, previous: row.status, status: r.status };
  });
}
