// Payment identifiers (x402 `payment-identifier`) kept in Redis when several instances share one: an id
// claimed by one instance is seen by all, so one identifier settles once whichever instance the retry
// reaches. Same contract as the ledger database's store (src/db/payment-ids.ts): an atomic claim with a
// lease, the stored answer of a success, and a claim given up after a failure.
//
// When a Redis command fails (Redis down or hung), the ledger database's store answers instead: every
// instance shares it when they share DATABASE_URL, so the guarantee holds, at a database round trip per
// paid call with an identifier. An identifier claimed in Redis just before an outage is not seen by the
// database store: a retry of that exact payment during the outage is verified afresh, and the facilitator
// refuses a settled authorization (402), so the payer is never charged twice (the answer is then lost).
import type { Redis } from 'ioredis';
import { IN_FLIGHT_LEASE_MS, PAYMENT_ID_TTL_MS, type PaymentIdClaim, type PaymentIdStore, type StoredResponse } from '../db/payment-ids.ts';
import type { BackendHealth } from '../http/backend-health.ts';
import { KEY_PREFIX } from './client.ts';

interface Entry {
  /** Hash of the payment payload the id is tied to. */
  h: string;
  s: 'in_flight' | 'done';
  r?: StoredResponse;
}

/** Claims the id when it is free (returns nothing), else returns what holds it. */
const CLAIM = `
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

/** Deletes the id only while it is still this payload's claim in flight (never a stored success). */
const RELEASE = `
local held = redis.call('GET', KEYS[1])
if held and held == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const keyOf = (id: string) => `${KEY_PREFIX}payment-id:${id}`;

export class RedisPaymentIdStore implements PaymentIdStore {
  /** The claim each id of this process was made with (what `abandon` may delete). */
  private readonly claims = new Map<string, string>();

  constructor(
    private readonly redis: Redis,
    private readonly options: { ttlMs?: number; leaseMs?: number } = {},
  ) {}

  async begin(id: string, payloadHash: string): Promise<PaymentIdClaim> {
    const claim = JSON.stringify({ h: payloadHash, s: 'in_flight' } satisfies Entry);
    const held = (await this.redis.eval(CLAIM, 1, keyOf(id), claim, String(this.options.leaseMs ?? IN_FLIGHT_LEASE_MS))) as string | null;
    if (held === null) {
      this.claims.set(id, claim);
      return { state: 'new' };
    }
    const entry = JSON.parse(held) as Entry;
    const samePayload = entry.h === payloadHash;
    return entry.s === 'done' && entry.r ? { state: 'done', samePayload, response: entry.r } : { state: 'in_flight', samePayload };
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    const claim = this.claims.get(id);
    this.claims.delete(id);
    const hash = claim ? (JSON.parse(claim) as Entry).h : '';
    await this.redis.set(keyOf(id), JSON.stringify({ h: hash, s: 'done', r: response } satisfies Entry), 'PX', this.options.ttlMs ?? PAYMENT_ID_TTL_MS);
  }

  async abandon(id: string): Promise<void> {
    const claim = this.claims.get(id);
    this.claims.delete(id);
    if (claim) await this.redis.eval(RELEASE, 1, keyOf(id), claim);
  }
}

/**
 * Redis first; the ledger database's store when a Redis command fails. Each id stays with the store that
 * claimed it (its completion or release goes to the same place).
 */
export class FallbackPaymentIdStore implements PaymentIdStore {
  private readonly claimedIn = new Map<string, PaymentIdStore>();

  constructor(
    private readonly redis: PaymentIdStore,
    private readonly database: PaymentIdStore,
    private readonly health: BackendHealth,
  ) {}

  async begin(id: string, payloadHash: string): Promise<PaymentIdClaim> {
    let store = this.redis;
    let claim: PaymentIdClaim;
    try {
      claim = await this.redis.begin(id, payloadHash);
    } catch (err) {
      this.health.failed(err);
      store = this.database;
      claim = await this.database.begin(id, payloadHash);
    }
    if (claim.state === 'new') this.claimedIn.set(id, store);
    return claim;
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    const store = this.claimedIn.get(id) ?? this.redis;
    this.claimedIn.delete(id);
    await store.complete(id, response);
  }

  async abandon(id: string): Promise<void> {
    const store = this.claimedIn.get(id) ?? this.redis;
    this.claimedIn.delete(id);
    await store.abandon(id);
  }
}
