// Fixed-window rate limits, counted in a store: this process's (window-store.ts) or Redis shared by the
// instances (src/redis/rate-limit-store.ts: @fastify/rate-limit's own RedisStore, with a per-instance
// fallback). The check is one step of the access hook rather than the plugin's own
// per-route hook: the plugin awaits its key generator, its max and the store on every request, four
// promises for what the in-process store answers synchronously. Here a request counted in this
// process is decided without a promise; only a count in Redis waits, and never beyond its timeout.
import type { FastifyReply } from 'fastify';
import { AppError } from '../http/errors.ts';
import { WindowStore } from './window-store.ts';

/** A bucket's count in its current window, and ms until the window ends. */
export interface LimitCount {
  current: number;
  ttl: number;
}

type CountCallback = (err: Error | null, count?: LimitCount) => void;

/** What the plugin's stores offer: count one more (incr) or look without counting (read). */
export interface LimitStore {
  incr(key: string, cb: CountCallback, windowMs: number, max: number): void;
  read(key: string, cb: CountCallback, windowMs: number, max: number): void;
}

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
   * Counts one request in `bucket` under `limit`; `done()` lets it through, `done(err)` refuses it
   * with a 429 (Retry-After and the quota headers set on `reply`). Synchronous for an in-process store.
   */
  hit(bucket: string, limit: Limit<Scope>, reply: FastifyReply, done: (err?: Error) => void): void {
    this.store.incr(
      bucket,
      (err, count) => {
        if (err || !count) return done(err ?? new Error('the rate-limit store answered nothing'));
        if (count.current <= limit.max) return done();
        this.onExceeded(limit.scope);
        const retryS = Math.max(1, Math.ceil(count.ttl / 1000));
        reply.header('x-ratelimit-limit', limit.max).header('x-ratelimit-remaining', 0).header('x-ratelimit-reset', retryS).header('retry-after', retryS);
        done(new AppError(429, `rate limit exceeded: ${limit.max} requests per minute ${limit.per}; retry in ${retryS} s`));
      },
      this.windowMs,
      limit.max,
    );
  }

  /** `bucket`'s count in its current window, without counting (zeros when no window is open). */
  read(bucket: string, max: number): Promise<LimitCount> {
    return new Promise((resolve, reject) => this.store.read(bucket, (err, count) => (err || !count ? reject(err ?? new Error('no count')) : resolve(count)), this.windowMs, max));
  }
}
