// Idempotency for x402's `payment-identifier` extension (specs/extensions/payment_identifier.md in
// coinbase/x402): a client sends an `id` with its payment and reuses it on retries. The server claims
// the id before it processes the payment; a retry of a finished payment gets the stored response
// instead of paying twice; the same id with another payload is a conflict (the spec's 409).
//
// Behind a small interface: this SQL store keeps ids in the ledger database (one process, or every
// instance sharing DATABASE_URL); a Redis implementation can take its place later.
//
// Lifetimes: a claim in flight is a lease of IN_FLIGHT_LEASE_MS (2 minutes, longer than any paid call
// can take: upstream deadline + facilitator verify and settle); a process that dies mid-call leaves a
// claim that lapses, so the client's retry is processed then. A finished id keeps its response for
// PAYMENT_ID_TTL_MS (24 hours); after that the id is forgotten and may be used afresh.
import type { DatabaseService } from './service.ts';

/** The answer stored for a finished payment, replayed to a retry with the same id and payload. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type PaymentIdClaim =
  /** Claimed now: process the payment, then `complete` (success) or `abandon` (failure). */
  | { state: 'new' }
  /** Another request holds it; `samePayload` tells a concurrent retry from a conflicting reuse. */
  | { state: 'in_flight'; samePayload: boolean }
  /** Finished earlier: replay `response` when `samePayload`, else a conflict. */
  | { state: 'done'; samePayload: boolean; response: StoredResponse };

export interface PaymentIdStore {
  /** Atomically claims `id` for the payload hashed `payloadHash`, or reports who has it. */
  begin(id: string, payloadHash: string): Promise<PaymentIdClaim>;
  /** The payment succeeded: keep `response` for retries (PAYMENT_ID_TTL_MS). */
  complete(id: string, response: StoredResponse): Promise<void>;
  /** The attempt failed (nothing was settled): forget the claim so a retry may pay. */
  abandon(id: string): Promise<void>;
}

export const PAYMENT_ID_TTL_MS = 24 * 60 * 60 * 1000;
export const IN_FLIGHT_LEASE_MS = 2 * 60 * 1000;
/** Expired rows are deleted at most this often (by the next `begin`). */
const SWEEP_EVERY_MS = 60 * 1000;

export interface SqlPaymentIdStoreOptions {
  ttlMs?: number;
  leaseMs?: number;
  clock?: () => number;
}

interface Row {
  payload_hash: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

export class SqlPaymentIdStore implements PaymentIdStore {
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly clock: () => number;
  private lastSweep = 0;

  constructor(
    private readonly db: DatabaseService,
    options: SqlPaymentIdStoreOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? PAYMENT_ID_TTL_MS;
    this.leaseMs = options.leaseMs ?? IN_FLIGHT_LEASE_MS;
    this.clock = options.clock ?? Date.now;
  }

  async begin(id: string, payloadHash: string): Promise<PaymentIdClaim> {
    const now = this.clock();
    this.sweep(now);
    // Two tries: the row may vanish (abandoned, expired) between the claim and the read.
    for (let attempt = 0; ; attempt++) {
      const claimed = await this.db.use((db) =>
        db.query(
          `INSERT INTO payment_identifiers (id, payload_hash, state, created_at, expires_at) VALUES ($1, $2, 'in_flight', $3, $4)
           ON CONFLICT (id) DO UPDATE SET payload_hash = EXCLUDED.payload_hash, state = 'in_flight', response_status = NULL,
             response_headers = NULL, response_body = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
           WHERE payment_identifiers.expires_at <= EXCLUDED.created_at
           RETURNING id`,
          [id, payloadHash, new Date(now), new Date(now + this.leaseMs)],
        ),
      );
      if (claimed.length > 0) return { state: 'new' };
      const [row] = await this.db.use((db) =>
        db.query<Row>('SELECT payload_hash, state, response_status, response_headers, response_body FROM payment_identifiers WHERE id = $1 AND expires_at > $2', [id, new Date(now)]),
      );
      if (row) {
        const samePayload = row.payload_hash === payloadHash;
        if (row.state === 'in_flight') return { state: 'in_flight', samePayload };
        return { state: 'done', samePayload, response: { status: row.response_status!, headers: row.response_headers ?? {}, body: row.response_body ?? '' } };
      }
      if (attempt > 0) throw new Error(`payment identifier ${id} could not be claimed`);
    }
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    const now = this.clock();
    await this.db.use((db) =>
      db.query(
        `UPDATE payment_identifiers SET state = 'done', response_status = $2, response_headers = $3::jsonb, response_body = $4, expires_at = $5
         WHERE id = $1 AND state = 'in_flight'`,
        [id, response.status, JSON.stringify(response.headers), response.body, new Date(now + this.ttlMs)],
      ),
    );
  }

  async abandon(id: string): Promise<void> {
    await this.db.use((db) => db.query(`DELETE FROM payment_identifiers WHERE id = $1 AND state = 'in_flight'`, [id]));
  }

  /** Deletes expired ids, at most once a minute, in the background (a failure only delays it). */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.db.use((db) => db.query('DELETE FROM payment_identifiers WHERE expires_at <= $1', [new Date(now)])).catch(() => {});
  }
}
