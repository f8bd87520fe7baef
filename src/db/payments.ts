// The payment records: one row of `payments` per x402 payment attempt that reached the facilitator, written by
// the payments module and updated as the attempt's status changes (not one row per event):
//
//   verified ─┬─→ settled         the transfer is on chain (tx hash, settled amount)
//             ├─→ settle_failed   the facilitator refused to settle, or the authorization expired unused (reason)
//             ├─→ cancelled       never settled: the handler failed, the ledger was too slow, or the same
//             │                   authorization is settled on another row (reason)
//             └─→ unknown         neither the facilitator nor the chain could say whether the transfer landed
//   verified | unknown ──→ settled | settle_failed | cancelled   (found out from the chain by
//                          src/payments/core/reconciler.ts, or by hand: `npm run payments -- resolve`)
//
// One settled row per (network, payer, authorization nonce), enforced by the database (payment-outcome.ts).
//
// No payment is taken that cannot be recorded: `recordVerified` runs before the handler and fails
// fast (DatabaseUnavailableError, 503, within DB_TIMEOUT_MS) when the row cannot be written, so the
// gate refuses the call before settling anything. Once money has moved the other rule holds: a final
// status that cannot be written never turns the payer's success into an error — `recordOutcome`
// never throws; the write is retried in the background (retry-queue.ts), logged loudly and counted. The
// operator's reports are in payment-reports.ts; what finding out a payment's outcome reads, in payment-recovery.ts.
import { randomUUID } from 'node:crypto';
import { escapeControl, escapeControlOrNull } from '../lib/control-chars.ts';
import { writeOutcome } from './payment-outcome.ts';
import { claimAnswer, noteChainState, unansweredPayment, unfinishedPayments } from './payment-recovery.ts';
import { listPayments, summarizePayments } from './payment-reports.ts';
import type { FinalWriteStats, PaymentFilter, PaymentOutcome, PaymentRecord, PaymentStatus, PaymentSummaryRow, VerifiedPayment } from './payment-rows.ts';
import { MAX_PENDING, RetryQueue, type GiveUpReason } from './retry-queue.ts';
import { WriteBehind } from './write-behind.ts';
import { jsonRowsInsert, type JsonRowValue } from './json-rows.ts';
import { DatabaseUnavailableError, type DatabaseService, type DbLog } from './service.ts';
import type { Queryable } from './database.ts';

/** A row written behind: the verified payment, and its outcome when it came before the row was written. */
interface BehindRow {
  id: string;
  p: VerifiedPayment;
  at: Date;
  outcome: PaymentOutcome | undefined;
  finishedAt?: Date;
}

/** The columns of a row written behind, with their types (migrations.ts). */
const insertBehind = jsonRowsInsert('payments', [
  ['id', 'text'], ['request_id', 'text'], ['route', 'text'], ['resource_url', 'text'], ['scheme', 'text'], ['network', 'text'], ['asset', 'text'],
  ['amount_required', 'numeric'], ['pay_to', 'text'], ['payer', 'text'], ['payload_hash', 'text'], ['payment_identifier', 'text'],
  ['authorization_nonce', 'text'], ['valid_before', 'timestamptz'], ['status', 'text'], ['facilitator', 'text'], ['verified_at', 'timestamptz'],
  ['tx_hash', 'text'], ['settled_amount', 'numeric'], ['error_reason', 'text'], ['updated_at', 'timestamptz'], ['finished_at', 'timestamptz'],
  ['answered_at', 'timestamptz'],
]);

/** Rows written behind, in one statement (json-rows.ts: a few when there are more than ROWS_PER_STATEMENT): each as verified, or already with its outcome (as writeOutcome would set it). */
async function insertRows(db: Queryable, all: BehindRow[]): Promise<void> {
  await insertBehind(db, all.map(behindValues));
}

function behindValues(r: BehindRow): JsonRowValue[] {
  const o = r.outcome;
  const status = o?.status ?? 'verified';
  const final = status !== 'verified' && status !== 'unknown';
  return [
    r.id, r.p.requestId, r.p.route, escapeControl(r.p.resourceUrl), r.p.scheme, r.p.network, r.p.asset, r.p.amountRequired, r.p.payTo,
    escapeControlOrNull((o?.status === 'settled' ? o.payer : undefined) ?? r.p.payer), r.p.payloadHash, escapeControlOrNull(r.p.paymentIdentifier),
    escapeControlOrNull(r.p.authorizationNonce), r.p.validBefore ?? null, status, r.p.facilitator, r.at,
    o && 'txHash' in o ? (o.txHash ?? null) : null,
    o?.status === 'settled' ? o.settledAmount : null,
    escapeControlOrNull(o?.status === 'cancelled' ? o.reason : o && o.status !== 'settled' ? o.errorReason : null),
    r.finishedAt ?? r.at,
    final ? (r.finishedAt ?? r.at) : null,
    o?.status === 'settled' && o.answered === true ? (r.finishedAt ?? r.at) : null,
  ];
}

interface FinalWrite {
  id: string;
  outcome: PaymentOutcome;
  /** A compensation for a verified row that may never have landed: a missing row means done, and it is not counted as lost. */
  compensation: boolean;
}

export interface PaymentRecordsOptions {
  log: DbLog;
  clock?: () => number;
  retryDelaysMs?: readonly number[];
}

const GIVEN_UP: Record<GiveUpReason, string> = {
  full: `more than ${MAX_PENDING} writes pending`,
  closed: 'the ledger is closed',
  shutdown: 'the server is shutting down',
};

export class PaymentRecords {
  private readonly counts = { failures: 0, lost: 0 };
  private readonly clock: () => number;
  private readonly retries: RetryQueue<FinalWrite>;
  /** Rows written behind (recordVerifiedBehind), by id, until their batch is taken; with their outcome once known. */
  private readonly waiting = new Map<string, BehindRow>();
  private readonly behind: WriteBehind<BehindRow>;

  constructor(
    private readonly db: DatabaseService,
    private readonly options: PaymentRecordsOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.retries = new RetryQueue<FinalWrite>({
      attempt: (write, attempt) => this.attempt(write, attempt),
      giveUp: (write, reason, attempts) => this.giveUp(write, GIVEN_UP[reason], attempts),
      landed: (write, attempts) => {
        if (!write.compensation) this.options.log.info({ payment: write.id, status: write.outcome.status, attempts }, 'payment ledger: final status recorded after retrying');
      },
      // A compensation is given three tries: its row has most likely never landed.
      attemptsAtMost: (write) => (write.compensation ? 3 : undefined),
      delaysMs: options.retryDelaysMs,
      clock: this.clock,
    });
    this.behind = new WriteBehind<BehindRow>({
      write: (rows) => {
        for (const r of rows) this.waiting.delete(r.id);
        return this.db.use((db) => insertRows(db, rows)).catch((err: unknown) => {
          for (const r of rows) this.waiting.set(r.id, r);
          throw err;
        });
      },
      failed: (err, n) => {
        this.counts.failures++;
        this.options.log.error({ rows: n, err: String((err as Error)?.message ?? err) }, 'payment ledger: could not write the rows of voucher calls; retrying');
      },
      lost: (rows, why) => {
        this.counts.lost += rows.length;
        for (const r of rows) this.waiting.delete(r.id);
        this.options.log.error({ rows }, `payment ledger: LOST ${rows.length} rows of voucher calls (${why}); they are in this log line in full`);
      },
    });
  }

  /**
   * The row of a call that moves no money on its own (a batch-settlement voucher: the channel's state is what is
   * claimed), written behind (write-behind.ts) with its outcome when that is known by then; resolves at once with
   * its id. A crash may lose the last FLUSH_MS of such rows; never a settlement's.
   */
  recordVerifiedBehind(p: VerifiedPayment): string {
    const row: BehindRow = { id: randomUUID(), p, at: new Date(this.clock()), outcome: undefined };
    this.waiting.set(row.id, row);
    this.behind.add(row);
    return row.id;
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
      const compensation: FinalWrite = { id, outcome: { status: 'cancelled', reason: 'the ledger did not record the payment in time; refused before settlement' }, compensation: true };
      this.retries.add(id, compensation, 0, this.clock() + this.db.timeoutMs);
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
    const waiting = this.waiting.get(id);
    if (waiting) {
      // Not written yet: written with its row.
      waiting.outcome = outcome;
      waiting.finishedAt = new Date(this.clock());
      return 'recorded';
    }
    const write: FinalWrite = { id, outcome, compensation: false };
    if (await this.attempt(write, 1)) return 'recorded';
    this.retries.add(id, write, 1);
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

  stats(): FinalWriteStats {
    return { final_write_failures: this.counts.failures, final_writes_pending: this.retries.count((w) => !w.compensation), final_writes_lost: this.counts.lost };
  }

  /** Tries every pending write once now (oldest first), until `deadline` (epoch ms); returns how many are still pending. */
  retryNow(deadline = Infinity): Promise<number> {
    return this.retries.retryNow(deadline);
  }

  /**
   * Last attempts for the pending writes, within `budgetMs` (the server's shutdown is itself bounded);
   * what is still pending is logged in full as lost.
   */
  async close(budgetMs = 3000): Promise<void> {
    await this.behind.close();
    await this.retries.close(budgetMs);
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

  /** One write attempt (its `attempt`-th); true when the row now carries the outcome (or needs nothing more). */
  private async attempt(write: FinalWrite, attempt: number): Promise<boolean> {
    const { id, outcome } = write;
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
      const level = attempt === 1 ? 'error' : 'warn';
      this.options.log[level](
        { payment: id, outcome, attempt, err: String((err as Error)?.message ?? err), failures_total: this.counts.failures },
        `payment ledger: could not record the ${outcome.status} status of payment ${id}; retrying (the payer's answer is unaffected)`,
      );
      return false;
    }
  }

  private giveUp(write: FinalWrite, why: string, attempts: number): void {
    if (write.compensation) return;
    this.counts.lost++;
    this.options.log.error(
      { payment: write.id, outcome: write.outcome, attempts, lost_total: this.counts.lost },
      `payment ledger: LOST the ${write.outcome.status} status of payment ${write.id} (${why}); record it by hand with npm run payments -- resolve`,
    );
  }
}
