// Payment identifiers (x402 `payment-identifier`) with Redis in front of the ledger database, write-through.
// The database's store (src/db/payment-ids.ts) holds every claim and every stored answer: durable, shared by
// every instance on DATABASE_URL, so one identifier settles once whichever instance a retry reaches, and a
// Redis restart (Redis keeps nothing on disk here) loses no paid answer. Redis keeps a copy of each stored
// answer, so a retry of a finished payment is answered without a database round trip.
//
// A Redis command that fails (Redis down or hung) is a cache miss: the database answers, and Redis's health
// says it is degraded. An answer missing from Redis (written during an outage, or before a restart) is copied
// there again the first time the database answers a retry with it.
import type { Redis } from 'ioredis';
import { PAYMENT_ID_TTL_MS, type ClaimRequest, type PaymentIdClaim, type PaymentIdStore, type StoredResponse } from '../db/payment-ids.ts';
import type { BackendHealth } from '../lib/backend-health.ts';
import { KEY_PREFIX } from './client.ts';

/** A stored answer as Redis keeps it: the payload hash and request it belongs to, and the answer. */
interface Cached {
  h: string;
  q: string | null;
  r: StoredResponse;
}

const keyOf = (id: string) => `${KEY_PREFIX}payment-answer:${id}`;

export class CachedPaymentIdStore implements PaymentIdStore {
  /** What each claim of this process was made with (what its stored answer is cached under). */
  private readonly claims = new Map<string, Pick<ClaimRequest, 'payloadHash' | 'request'>>();

  constructor(
    private readonly redis: Redis,
    private readonly database: PaymentIdStore,
    private readonly health: BackendHealth,
    private readonly options: { ttlMs?: number } = {},
  ) {}

  async begin(id: string, c: ClaimRequest): Promise<PaymentIdClaim> {
    const cached = await this.cached(id);
    if (cached) return { state: 'done', samePayload: cached.h === c.payloadHash, request: cached.q, response: cached.r };
    const claim = await this.database.begin(id, c);
    if (claim.state === 'new') this.claims.set(id, { payloadHash: c.payloadHash, request: c.request });
    // Only this payment's answer is copied (the database names the other's hash to no one).
    if (claim.state === 'done' && claim.samePayload) void this.cache(id, { h: c.payloadHash, q: claim.request, r: claim.response });
    return claim;
  }

  renew(id: string, owner: string, leaseUntil: number): Promise<void> {
    return this.database.renew(id, owner, leaseUntil);
  }

  async complete(id: string, response: StoredResponse): Promise<void> {
    const claim = this.claims.get(id);
    this.claims.delete(id);
    await this.database.complete(id, response);
    if (claim) await this.cache(id, { h: claim.payloadHash, q: claim.request, r: response });
  }

  async abandon(id: string, owner: string): Promise<void> {
    this.claims.delete(id);
    await this.database.abandon(id, owner);
  }

  async keep(id: string, owner: string): Promise<void> {
    this.claims.delete(id);
    await this.database.keep(id, owner);
  }

  private async cached(id: string): Promise<Cached | undefined> {
    try {
      const held = await this.redis.get(keyOf(id));
      this.health.ok();
      return held ? (JSON.parse(held) as Cached) : undefined;
    } catch (err) {
      this.health.failed(err);
      return undefined;
    }
  }

  /** Best effort: the database holds the answer whatever happens here. */
  private async cache(id: string, entry: Cached): Promise<void> {
    try {
      await this.redis.set(keyOf(id), JSON.stringify(entry), 'PX', this.options.ttlMs ?? PAYMENT_ID_TTL_MS);
      this.health.ok();
    } catch (err) {
      this.health.failed(err);
    }
  }
}
