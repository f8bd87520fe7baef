// Fixed-window rate limits, counted in a store: this process's (window-store.ts) or Redis shared by the
// instances (redis-store.ts: counted here and exchanged with Redis in batches, with a per-instance
// fallback). The check is one step of the access hook rather than @fastify/rate-limit's own per-route
// hook: the plugin awaits its key generator, its max and the store on every request, four promises for
// what the in-process store answers synchronously. Here a request counted in this process is decided at
// once, without a promise or a callback; only a count in Redis (near a limit, or a bucket not seen yet)
// waits, and never beyond its timeout.
import type { FastifyReply } from 'fastify';
import { AppError } from '../../lib/errors.ts';
import type { LimitCount, LimitStore } from './store.ts';
import { WindowStore } from './window-store.ts';

/** A limiter's verdict: admitted (null), refused (the 429), or, from a store that answers later (Redis), a promise of either. */
export type LimitVerdict = AppError | null | Promise<AppError | null>;

/** The limit of one scope: how many requests per window, and how a 429 names who is limited. */
export interface Limit<Scope extends string = string> {
  scope: Scope;
  max: number;
  /** "per API key", "per client", …: completes "N requests per minute …". */
  per: string;
}

/** This process's own counts (window-store.ts). */
export const localLimitStore = (): LimitStore => new WindowStore();

export const LIMIT_WINDOW_MS = 60_000;

export class RateLimiter<Scope extends string = string> {
  constructor(
    private readonly store: LimitStore,
    /** Told of every refused request (the metrics' rate-limited counter). */
    private readonly onExceeded: (scope: Scope) => void,
    private readonly windowMs = LIMIT_WINDOW_MS,
  ) {}

  /**
   * Counts one request in `bucket` under `limit`: null lets it through; a 429 error refuses it (Retry-After
   * and the quota headers set on `reply`). At once for an in-process store; a promise for Redis, which
   * rejects when the store fails.
   */
  check(bucket: string, limit: Limit<Scope>, reply: FastifyReply): LimitVerdict {
    const store = this.store;
    const count = store.incrNow?.(bucket, this.windowMs, limit.max);
    if (count !== undefined) return count.current <= limit.max ? null : this.refuse(limit, count.ttl, reply);
    return new Promise((resolve, reject) =>
      store.incr(
        bucket,
        (err, count) => {
          if (err || !count) return reject(err ?? new Error('the rate-limit store answered nothing'));
          resolve(count.current <= limit.max ? null : this.refuse(limit, count.ttl, reply));
        },
        this.windowMs,
        limit.max,
      ),
    );
  }

  private refuse(limit: Limit<Scope>, ttlMs: number, reply: FastifyReply): AppError {
    this.onExceeded(limit.scope);
    const retryS = Math.max(1, Math.ceil(ttlMs / 1000));
    reply.header('x-ratelimit-limit', limit.max).header('x-ratelimit-remaining', 0).header('x-ratelimit-reset', retryS).header('retry-after', retryS);
    return new AppError(429, `rate limit exceeded: ${limit.max} requests per minute ${limit.per}; retry in ${retryS} s`);
  }

  /** `bucket`'s count in its current window, without counting (zeros when no window is open). */
  read(bucket: string, max: number): Promise<LimitCount> {
    return new Promise((resolve, reject) => this.store.read(bucket, (err, count) => (err || !count ? reject(err ?? new Error('no count')) : resolve(count)), this.windowMs, max));
  }
}

/**
 * The step after the limiter in a route's access hook: `done(err)` for a refusal or a store that failed;
 * once admitted, `admitted(req, reply, done)` runs, which answers the request itself (true: it calls `done` itself
 * if it ends up letting the route run after all) or lets the route run (false).
 * A function of the plugin's, not a closure per request.
 */
export function afterLimit<R, P>(verdict: LimitVerdict, req: R, reply: P, admitted: (req: R, reply: P, done: (err?: Error) => void) => boolean, done: (err?: Error) => void): void {
  if (verdict === null) {
    if (!admitted(req, reply, done)) done();
    return;
  }
  if (verdict instanceof Promise) {
    verdict.then((err) => (err ? done(err) : admitted(req, reply, done) ? undefined : done()), done);
    return;
  }
  done(verdict);
}
