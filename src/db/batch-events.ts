// The batch-settlement part of the payments ledger: every step money takes through a payment channel —
// the payer's deposit, each call's charge (a signed voucher), the claims and settlements that move claimed
// funds to the receiver, the refund of an unused deposit — one row each in `x402_batch_events`, append-only.
// (Exact-scheme payments, and each batch voucher call, also have their row in `payments`.)
//
// An event is a fact that already happened (often on chain), so a write that fails never fails anything
// else: it is retried in the background like the payments ledger's final statuses, and logged in full.
import { randomUUID } from 'node:crypto';
import type { Queryable } from './database.ts';
import { RETRY_DELAYS_MS } from './payments.ts';
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

const MAX_PENDING = 10_000;

export class BatchEventLedger {
  private readonly pending: { event: BatchEvent & { id: string }; attempts: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: DatabaseService,
    private readonly log: DbLog,
  ) {}

  /** Records one event; never rejects (a failed write is retried and logged). */
  async record(event: BatchEvent): Promise<void> {
    const write = { event: { ...event, id: randomUUID() }, attempts: 0 };
    if (!(await this.attempt(write))) this.enqueue(write);
  }

  async list(since?: Date, limit = 1000): Promise<BatchEventRecord[]> {
    return this.db.use((db) => listBatchEvents(db, since, limit));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    for (const write of this.pending.splice(0)) {
      if (!(await this.attempt(write))) this.log.error({ event: write.event }, 'batch settlement ledger: LOST an event at shutdown (it is in this log line in full)');
    }
  }

  private async attempt(write: { event: BatchEvent & { id: string }; attempts: number }): Promise<boolean> {
    write.attempts++;
    const e = write.event;
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
      this.log.error({ event: e, attempt: write.attempts, err: String((err as Error)?.message ?? err) }, 'batch settlement ledger: could not record an event; retrying');
      return false;
    }
  }

  private enqueue(write: { event: BatchEvent & { id: string }; attempts: number }): void {
    if (this.closed) return void this.log.error({ event: write.event }, 'batch settlement ledger: LOST an event (the ledger is closed)');
    if (this.pending.length >= MAX_PENDING) this.log.error({ event: this.pending.shift()!.event }, 'batch settlement ledger: LOST an event (too many pending)');
    this.pending.push(write);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    const delay = RETRY_DELAYS_MS[Math.min((this.pending[0]?.attempts ?? 1) - 1, RETRY_DELAYS_MS.length - 1)]!;
    this.timer = setTimeout(async () => {
      this.timer = undefined;
      for (const write of this.pending.splice(0)) if (!(await this.attempt(write))) this.pending.push(write);
      if (this.pending.length) this.schedule();
    }, delay);
    this.timer.unref();
  }
}

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
