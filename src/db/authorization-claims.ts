// One EIP-3009 authorization (network, payer, nonce) is settled at most once, by this server and by every instance
// sharing the ledger database: before a payment carrying it is verified, its request claims the authorization here
// (migration 8, `x402_authorizations`, one row per authorization in play). While a claim is held, every other
// request carrying the same authorization waits (src/payments/core/authorization-claim.ts); none of them reaches the
// facilitator.
//
//   in_flight  held by `owner` until `lease_until` (renewed while its request runs, never past validBefore): a
//              process that dies mid-call leaves a lease that soon lapses, and the next request of the
//              authorization takes it over (its outcome is then found out from the chain, resume.ts)
//   used       settled and answered: every later request of it is refused at once (402, "already used")
//
// A request that ends with nothing taken deletes its claim (a retry may pay with it); one whose outcome is unknown
// ends its lease at once, so the next request of the authorization takes it over and asks the chain. Rows are
// forgotten once the authorization is long expired (it can never verify again).
import type { DatabaseService } from './service.ts';

/** The authorization a claim is about; `payer` and `nonce` are compared lowercase. */
export interface AuthorizationKey {
  network: string;
  payer: string;
  nonce: string;
}

export type AuthorizationClaim =
  /**
   * Claimed now (new, expired, or taken over from a lapsed lease): process it, then `used`, `lapse` or `release`.
   * `fresh`: no row of it existed, so no request of it ever reached a settle that may have moved money (a request
   * that ended with nothing taken deletes its row; one whose outcome is unknown leaves its lapsed lease).
   */
  | { state: 'claimed'; fresh: boolean }
  /** Another request holds it; `live`: its lease has not lapsed. */
  | { state: 'in_flight'; live: boolean }
  /** Settled and answered already. */
  | { state: 'used' };

/** How long a row outlives its authorization's validBefore (a used one still refuses its duplicates at once). */
export const CLAIM_KEPT_AFTER_EXPIRY_MS = 10 * 60_000;
/** Expired rows are deleted at most this often (by the next claim). */
const SWEEP_EVERY_MS = 60_000;

export class AuthorizationClaims {
  private lastSweep = 0;

  constructor(
    private readonly db: DatabaseService,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Atomically claims the authorization for `owner` until `leaseUntil`, or says who has it. `validBefore`: epoch ms.
   * `seen`: the caller already found it in the table (a request waiting for its holder asks again): it is not tried
   * as new, which spares the waiters' polls a statement.
   */
  async claim(key: AuthorizationKey, owner: string, leaseUntil: number, validBefore: number, seen = false): Promise<AuthorizationClaim> {
    const now = this.clock();
    this.sweep(now);
    const k = [key.network, key.payer.toLowerCase(), key.nonce.toLowerCase()];
    const lease = new Date(Math.max(now, leaseUntil));
    const expires = new Date(validBefore + CLAIM_KEPT_AFTER_EXPIRY_MS);
    // A first claim (the usual case: one statement) is told apart from a taken-over one by inserting alone first;
    // only an authorization already in the table gets the second statement, which may take it over.
    const [fresh] = seen ? [] : await this.db.use((db) =>
      db.query<{ owner: string }>(
        `INSERT INTO x402_authorizations (network, payer, nonce, state, owner, lease_until, expires_at)
         VALUES ($1, $2, $3, 'in_flight', $4, $5, $6)
         ON CONFLICT (network, payer, nonce) DO NOTHING
         RETURNING owner`,
        [...k, owner, lease, expires],
      ),
    );
    if (fresh?.owner === owner) return { state: 'claimed', fresh: true };
    const [row] = await this.db.use((db) =>
      db.query<{ owner: string | null; state: 'in_flight' | 'used'; live: boolean }>(
        `INSERT INTO x402_authorizations (network, payer, nonce, state, owner, lease_until, expires_at)
         VALUES ($1, $2, $3, 'in_flight', $4, $5, $6)
         ON CONFLICT (network, payer, nonce) DO UPDATE SET state = 'in_flight', owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
           expires_at = greatest(x402_authorizations.expires_at, EXCLUDED.expires_at)
         WHERE x402_authorizations.expires_at <= $7 OR (x402_authorizations.state = 'in_flight' AND x402_authorizations.lease_until <= $7)
         RETURNING owner, state, true AS live`,
        [...k, owner, lease, expires, new Date(now)],
      ),
    );
    if (row?.owner === owner) return { state: 'claimed', fresh: false };
    const [held] = await this.db.use((db) =>
      db.query<{ state: 'in_flight' | 'used'; live: boolean }>(
        'SELECT state, lease_until > $4 AS live FROM x402_authorizations WHERE network = $1 AND payer = $2 AND nonce = $3',
        [...k, new Date(now)],
      ),
    );
    // Gone between the two statements (released): the caller claims again.
    if (!held) return { state: 'in_flight', live: false };
    return held.state === 'used' ? { state: 'used' } : { state: 'in_flight', live: held.live };
  }

  /** The holder is still at work: its lease now ends at `leaseUntil`. */
  async renew(key: AuthorizationKey, owner: string, leaseUntil: number): Promise<void> {
    await this.update(key, owner, `lease_until = $5`, new Date(leaseUntil));
  }

  /** Settled and answered: every later request of the authorization is refused at once. */
  async used(key: AuthorizationKey, owner: string): Promise<void> {
    await this.update(key, owner, `state = 'used', lease_until = $5`, new Date(this.clock()));
  }

  /** The outcome is unknown (money may have moved): the lease ends now, for the next request of it to take over. */
  async lapse(key: AuthorizationKey, owner: string): Promise<void> {
    await this.update(key, owner, `lease_until = $5`, new Date(this.clock()));
  }

  /** Nothing was taken: the claim is forgotten, so the authorization may still pay. */
  async release(key: AuthorizationKey, owner: string): Promise<void> {
    await this.db.use((db) =>
      db.query(`DELETE FROM x402_authorizations WHERE network = $1 AND payer = $2 AND nonce = $3 AND owner = $4 AND state = 'in_flight'`, [
        key.network,
        key.payer.toLowerCase(),
        key.nonce.toLowerCase(),
        owner,
      ]),
    );
  }

  private async update(key: AuthorizationKey, owner: string, set: string, value: Date): Promise<void> {
    await this.db.use((db) =>
      db.query(`UPDATE x402_authorizations SET ${set} WHERE network = $1 AND payer = $2 AND nonce = $3 AND owner = $4 AND state = 'in_flight'`, [
        key.network,
        key.payer.toLowerCase(),
        key.nonce.toLowerCase(),
        owner,
        value,
      ]),
    );
  }

  /** Deletes rows of long-expired authorizations, at most once a minute, in the background (a failure only delays it). */
  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.db.use((db) => db.query('DELETE FROM x402_authorizations WHERE expires_at <= $1', [new Date(now)])).catch(() => {});
  }
}
