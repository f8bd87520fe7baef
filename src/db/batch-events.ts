// The batch-settlement events of the payments ledger: every step money takes through a payment channel —
// the payer's deposit, each call's charge (a signed voucher), the claims and settlements that move claimed
// funds to the receiver, the refund of an unused deposit — one row each in `x402_batch_events`, append-only.
// (Exact-scheme payments, and each batch voucher call, also have their row in `payments`.)
//
// An event is a fact that already happened (often on chain), so a write that fails never fails anything
// else: it is retried in the background by the same queue as the payment records' final statuses
// (retry-queue.ts), and logged in full.
import { randomUUID } from 'node:crypto';
import type { Queryable } from './database.ts';
import { RetryQueue, type GiveUpReason } from './retry-queue.ts';
import { WriteBehind } from './write-behind.ts';
import { jsonRowsInsert } from './json-rows.ts';
import type { DatabaseService, DbLog } from './service.ts';

export interface BatchEvent {
  type: 'deposit' | 'charge' | 'claim' | 'settle' | 'refund';
  at: Date;
  network: string;
  channelId?: string;
  payer?: string;
  /** Atomic token units. */
  amount: string;
  transaction?: string;
  /** What else the event carries (the cumulative charge, a claim's channels), as JSON. */
  detail?: unknown;
}

export interface BatchEventRecord extends Omit<BatchEvent, 'at'> {
  id: string;
  at: string;
}

export class BatchEventRecords {
  private readonly retries: RetryQueue<BatchEvent & { id: string }>;
  private readonly behind: WriteBehind<BatchEvent & { id: string }>;

  constructor(
    private readonly db: DatabaseService,
    private readonly log: DbLog,
  ) {
    this.retries = new RetryQueue({
      attempt: (event, attempt) => this.attempt(event, attempt),
      giveUp: (event, reason) => this.log.error({ event }, `batch settlement ledger: LOST an event ${GIVEN_UP[reason]}`),
    });
    this.behind = new WriteBehind({
      write: (events) => this.db.use((db) => insertEvents(db, events)),
      failed: (err, n) => this.log.error({ events: n, err: String((err as Error)?.message ?? err) }, 'batch settlement ledger: could not record events; retrying'),
      lost: (events, why) => this.log.error({ events }, `batch settlement ledger: LOST ${events.length} events (${why}); they are in this log line in full`),
    });
  }

  /** Records one event behind (write-behind.ts: with the others of the next FLUSH_MS, one statement): a voucher's charge. */
  recordBehind(event: BatchEvent): void {
    this.behind.add({ ...event, id: randomUUID() });
  }

  /** Records one event; never rejects (a failed write is retried and logged). */
  async record(event: BatchEvent): Promise<void> {
    const write = { ...event, id: randomUUID() };
    if (!(await this.attempt(write, 1))) this.retries.add(write.id, write, 1);
  }

  async list(since?: Date, limit = 1000): Promise<BatchEventRecord[]> {
    return this.db.use((db) => listBatchEvents(db, since, limit));
  }

  /** Last attempts for the pending events (within the shutdown's budget); what is still pending is logged in full. */
  async close(): Promise<void> {
    await this.behind.close();
    await this.retries.close();
  }

  private async attempt(e: BatchEvent & { id: string }, attempt: number): Promise<boolean> {
    try {
      await this.db.use((db) =>
        db.query(
          `INSERT INTO x402_batch_events (id, type, at, network, channel_id, payer, amount, tx_hash, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (id) DO NOTHING`,
          [e.id, e.type, e.at, e.network, e.channelId ?? null, e.payer ?? null, e.amount, e.transaction ?? null, e.detail === undefined ? null : JSON.stringify(e.detail)],
        ),
      );
      return true;
    } catch (err) {
      this.log.error({ event: e, attempt, err: String((err as Error)?.message ?? err) }, 'batch settlement ledger: could not record an event; retrying');
      return false;
    }
  }
}

const insertBehind = jsonRowsInsert(
  'x402_batch_events',
  [['id', 'text'], ['type', 'text'], ['at', 'timestamptz'], ['network', 'text'], ['channel_id', 'text'], ['payer', 'text'], ['amount', 'numeric'], ['tx_hash', 'text'], ['detail', 'jsonb']],
  'ON CONFLICT (id) DO NOTHING',
);

/** Events in one statement (json-rows.ts: at most ROWS_PER_STATEMENT a statement). */
async function insertEvents(db: Queryable, all: (BatchEvent & { id: string })[]): Promise<void> {
  await insertBehind(db, all.map((e) => [e.id, e.type, e.at, e.network, e.channelId ?? null, e.payer ?? null, e.amount, e.transaction ?? null, e.detail === undefined ? null : JSON.stringify(e.detail)]));
}

const GIVEN_UP: Record<GiveUpReason, string> = {
  full: '(too many pending)',
  closed: '(the ledger is closed)',
  shutdown: 'at shutdown (it is in this log line in full)',
};

/**
 * The newest `limit` events since `since`, oldest first; events of one instant (a deposit and the charge of
 * the call that made it) in the order money takes.
 */
export async function listBatchEvents(db: Queryable, since: Date | undefined, limit: number): Promise<BatchEventRecord[]> {
  const rows = await db.query<{ id: string; type: BatchEvent['type']; at: Date | string; network: string; channel_id: string | null; payer: string | null; amount: string; tx_hash: string | null; detail: unknown }>(
    `SELECT id, type, at, network, channel_id, payer, amount, tx_hash, detail FROM (
       SELECT id, type, at, network, channel_id, payer, amount::text AS amount, tx_hash, detail,
         array_position(ARRAY['deposit', 'charge', 'claim', 'settle', 'refund'], type) AS step
       FROM x402_batch_events WHERE ($1::timestamptz IS NULL OR at >= $1)
       ORDER BY at DESC, step DESC, id DESC LIMIT $2
     ) newest ORDER BY at, step, id`,
    [since ?? null, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    at: new Date(r.at).toISOString(),
    network: r.network,
    ...(r.channel_id ? { channelId: r.channel_id } : {}),
    ...(r.payer ? { payer: r.payer } : {}),
    amount: r.amount,
    ...(r.tx_hash ? { transaction: r.tx_hash } : {}),
    ...(r.detail != null ? { detail: typeof r.detail === 'string' ? JSON.parse(r.detail) : r.detail } : {}),
  }));
}
