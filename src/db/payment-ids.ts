// Idempotency for x402's `payment-identifier` extension (specs/extensions/payment_identifier.md in
// coinbase/x402): a client sends an `id` with its payment and reuses it on retries. The server claims
// the id before it processes the payment; a retry of a finished payment gets the stored response
// instead of paying twice; the same id with another payload, or for another request, is a conflict (409).
//
// This SQL store keeps ids and the stored answers in the ledger database: durable (a restart, of the server
// or of Redis, keeps them) and shared by every instance on DATABASE_URL. With Redis, a cache of finished
// answers sits in front of it (src/redis/payment-ids.ts).
//
// Lifetimes. An id is remembered for PAYMENT_ID_TTL_MS (24 hours), in flight or done. A claim in flight has a
// lease (CLAIM_LEASE_MS, renewed by its request while it runs, never past the payment's authorization:
// see PaymentIdempotency): a process that dies mid-call leaves a claim whose lease soon lapses, and then the
// *same* payment (same payload, same request) may take it over — its outcome is found out from the chain.
// Another payment never takes an id over while it is remembered: whether the first one was charged may not be
// known, and an identifier whose settlement is uncertain is never given to a new payment. Only a request that
// ends with nothing taken gives its id up (`abandon`).
import type { DatabaseService } from './service.ts';

/** The answer stored for a finished payment, replayed to a retry with the same id and payload. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What a claim is made with. */
export interface ClaimRequest {
  /** SHA-256 of the payment payload (canonical JSON): the one payment this id stands for. */
  payloadHash: string;
  /** The request it pays for: method, matched route and sorted query, e.g. `GET /v1/price?symbol=BTC`. */
  request: string;
  /** Who holds the claim (one token per attempt): only its holder renews, keeps or gives it up. */
  owner: string;
  /** When the lease ends (epoch ms). */
  leaseUntil: number;
}

export type PaymentIdClaim =
  /** Claimed now (new, or taken over from a lapsed claim of the same payment): process it, then `complete`, `keep` or `abandon`. */
  | { state: 'new' }
  /** Another request holds it. `request`: what it was first used for (null: before requests were recorded). */
  | { state: 'in_flight'; samePayload: boolean; request: string | null; leaseLive: boolean }
  /** Finished earlier: replay `response` when the payload and request are the same, else a conflict. */
  | { state: 'done'; samePayload: boolean; request: string | null; response: StoredResponse };

export interface PaymentIdStore {
  /** Atomically claims `id`, or reports who has it. */
  begin(id: string, claim: ClaimRequest): Promise<PaymentIdClaim>;
  /** The holder is still at work: the lease now ends at `leaseUntil`. */
  renew(id: string, owner: string, leaseUntil: number): Promise<void>;
  /** The payment succeeded: keep `response` for retries (PAYMENT_ID_TTL_MS). */
  complete(id: string, response: StoredResponse): Promise<void>;
  /** The attempt ended with nothing taken: forget the claim so a retry may pay. */
  abandon(id: string, owner: string): Promise<void>;
  /** The attempt ended without an answer and money may have moved: the lease ends now; only the same payment may take the id over. */
  keep(id: string, owner: string): Promise<void>;
}

export const PAYMENT_ID_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim's lease: its holder renews it every CLAIM_LEASE_MS / 3 while its request runs. */
export const CLAIM_LEASE_MS = 5000;
/** Expired rows are deleted at most this often (by the next `begin`). */
const SWEEP_EVERY_MS = 60 * 1000;

export interface SqlPaymentIdStoreOptions {
  ttlMs?: number;
  clock?: () => number;
}

interface Row {
  payload_hash: string;
  request: string | null;
  state: 'in_flight' | 'done';
  live: boolean;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

export class SqlPaymentIdStore implements PaymentIdStore {
  private readonly ttlMs: number;
  private readonly clock: () => number;
  private lastSweep = 0;

  constructor(
    private readonly db: DatabaseService,
    options: SqlPaymentIdStoreOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? PAYMENT_ID_TTL_MS;
    this.clock = options.clock ?? Date.now;
  }

  async begin(id: string, c: ClaimRequest): Promise<PaymentIdClaim> {
    const now = this.clock();
    this.sweep(now);
    // Two tries: the row may vanish (abandoned, expired) between the claim and the read.
    for (let attempt = 0; ; attempt++) {
      // A new id; one forgotten (its 24 h are over); or the same payment's claim whose holder is gone (lease lapsed).
      const claimed = await this.db.use((db) =>
        db.query(
          `INSERT INTO payment_identifiers (id, payload_hash, request, state, owner, created_at, lease_until, expires_at)
           VALUES ($1, $2, $3, 'in_flight', $4, $5, $6, $7)
           ON CONFLICT (id) DO UPDATE SET payload_hash = EXCLUDED.payload_hash, request = EXCLUDED.request, state = 'in_flight',
             owner = EXCLUDED.owner, response_status = NULL, response_headers = NULL, response_body = NULL,
             created_at = EXCLUDED.created_at, lease_until = EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at
           WHERE payment_identifiers.expires_at <= EXCLUDED.created_at
             OR (payment_identifiers.state = 'in_flight' AND coalesce(payment_identifiers.lease_until, payment_identifiers.expires_at) <= EXCLUDED.created_at
               AND payment_identifiers.payload_hash = EXCLUDED.payload_hash AND coalesce(payment_identifiers.request, EXCLUDED.request) = EXCLUDED.request)
           RETURNING id`,
          [id, c.payloadHash, c.request, c.owner, new Date(now), new Date(Math.max(now, c.leaseUntil)), new Date(now + this.ttlMs)],
        ),
      );
      if (claimed.length > 0) return { state: 'new' };
      const [row] = await this.db.use((db) =>
        db.query<Row>(
          `SELECT payload_hash, request, state, coalesce(lease_until, expires_at) > $2 AS live, response_status, response_headers, response_body
           FROM payment_identifiers WHERE id = $1 AND expires_at > $2`,
          [id, new Date(now)],
        ),
      );
      if (row) {
        const samePayload = row.payload_hash === c.payloadHash;
        if (row.state === 'in_flight') return { state: 'in_flight', samePayload, request: row.request, leaseLive: row.live };
        return { state: 'done', samePayload, request: row.request, response: { status: row.response_status!, headers: row.response_headers ?? {}, body: row.response_body ?? '' } };
      }
      if (attempt > 0) throw new Error(`payment identifier ${id} could not be claimed`);
    }
  }

  async renew(id: string, owner: string, leaseUntil: number): Promise<void> {
    await this.db.use((db) => db.query(`UPDATE payment_identifiers SET lease_until = $3 WHERE id = $1 AND owner = $2 AND state = 'in_flight'`, [id, owner, new Date(leaseUntil)]));
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    const now = this.clock();
    await this.db.use((db) =>
      db.query(
        `UPDATE payment_identifiers SET state = 'done', response_status = $2, response_headers = $3::jsonb, response_body = $4, lease_until = NULL, expires_at = $5
         WHERE id = $1 AND state = 'in_flight'`,
        [id, response.status, JSON.stringify(response.headers), response.body, new Date(now + this.ttlMs)],
      ),
    );
  }

  async abandon(id: string, owner: string): Promise<void> {
    await this.db.use((db) => db.query(`DELETE FROM payment_identifiers WHERE id = $1 AND owner = $2 AND state = 'in_flight'`, [id, owner]));
  }

  async keep(id: string, owner: string): Promise<void> {
    await this.db.use((db) => db.query(`UPDATE payment_identifiers SET lease_until = $3 WHERE id = $1 AND owner = $2 AND state = 'in_flight'`, [id, owner, new Date(this.clock())]));
  }

  /** Deletes expired ids, at most once a minute, in the background (a failure only delays it). */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.db.use((db) => db.query('DELETE FROM payment_identifiers WHERE expires_at <= $1', [new Date(now)])).catch(() => {});
  }
}
