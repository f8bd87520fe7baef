// Rate limits counted in Redis when instances share one (REDIS_URL), so N instances behind a load balancer
// give a client its limit once, not N times. The counting is @fastify/rate-limit's own RedisStore (one Lua
// script: INCR, PEXPIRE on a window's first hit, PTTL for Retry-After), under KEY_PREFIX.
//
// When a Redis command fails (Redis down, or hung past REDIS_TIMEOUT_MS), that request is counted in this
// instance's own WindowStore instead: limits stay on (never the plugin's skipOnError, which would switch them
// off), counted per instance until Redis is back, and nothing waits longer than the command timeout. The
// failure goes to the Redis BackendHealth (logged once, metrics, /v1/status). While Redis is known degraded,
// requests count locally without asking it: once its connection is back the health turns ok (the client's
// 'ready') and counting is shared again; while the connection stays up but commands fail (a hung server),
// one request a second tries Redis, so a hung Redis delays one request a second, not every request.
//
// Without REDIS_URL none of this exists: the limiter counts in a WindowStore alone.
import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import type { Redis } from 'ioredis';
import type { LimitStore } from './store.ts';
import { WindowStore } from './window-store.ts';
import type { BackendHealth } from '../../lib/backend-health.ts';
import { KEY_PREFIX } from '../../redis/client.ts';

/** While Redis is degraded but connected, how often one request may try it again (ms). */
export const RETRY_WHILE_DEGRADED_MS = 1000;

type IncrCallback = Parameters<FastifyRateLimitStore['incr']>[1];

/** Decides per request whether to count in Redis, and hears what each try said about Redis. */
class RedisGate {
  private nextTryAt = 0;

  constructor(
    private readonly client: Pick<Redis, 'status'>,
    private readonly health: BackendHealth,
  ) {}

  shouldTry(): boolean {
    if (!this.health.degraded) return true;
    // Disconnected: a command would fail at once anyway (no offline queue); the reconnect turns the health ok.
    if (this.client.status !== 'ready') return false;
    const now = Date.now();
    if (now < this.nextTryAt) return false;
    this.nextTryAt = now + RETRY_WHILE_DEGRADED_MS;
    return true;
  }

  succeeded(): void {
    if (this.health.degraded) this.health.ok();
  }

  failed(err: unknown): void {
    this.health.failed(err);
  }
}

type Counter = Pick<LimitStore, 'incr' | 'read'>;

/** Redis first; this instance's WindowStore for a request whose Redis count failed or was not tried. */
class FallbackLimitStore implements LimitStore {
  constructor(
    private readonly shared: RedisStore,
    private readonly local: Counter,
    private readonly gate: RedisGate,
  ) {}

  incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void {
    this.count('incr', key, cb, timeWindow, max);
  }

  /** The count without counting: GET /v1/usage's current minute (`createRateLimit()(req, { increment: false })`). */
  read(key: string, cb: IncrCallback, timeWindow: number, max: number): void {
    this.count('read', key, cb, timeWindow, max);
  }

  private count(method: keyof Counter, key: string, cb: IncrCallback, timeWindow: number, max: number): void {
    if (!this.gate.shouldTry()) return this.local[method](key, cb, timeWindow, max);
    this.shared[method](
      key,
      (err, result) => {
        if (err || !result) {
          this.gate.failed(err ?? new Error('the Redis rate-limit script returned nothing'));
          this.local[method](key, cb, timeWindow, max);
          return;
        }
        this.gate.succeeded();
        cb(null, result);
      },
      timeWindow,
      max,
    );
  }
}

/**
 * The store of one limiter, counting in Redis under `marketgate:rate-limit:<namespace>:` (each limiter its
 * own namespace, as each has its own count without Redis), falling back to per-instance counting as
 * described above.
 */
export function sharedLimitStore(redis: { client: Redis; health: BackendHealth }, namespace: string): LimitStore {
  const prefix = `${KEY_PREFIX}rate-limit:${namespace}:`;
  return new FallbackLimitStore(new RedisStore(false, false, redis.client, prefix), new WindowStore(), new RedisGate(redis.client, redis.health));
}
