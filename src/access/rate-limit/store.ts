// What a store of rate-limit counts offers, apart from the limiter that asks it (as @fastify/rate-limit keeps
// store/LocalStore and store/RedisStore apart from the plugin): this process's windows (window-store.ts) and
// Redis shared by the instances, counted here and exchanged in batches (redis-store.ts), both implement it.

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
  /**
   * Counts one more and answers at once when the store can (this process's windows always; the shared store
   * while the limit is far), else undefined: then `incr` counts it. Its answer is read before the next call.
   */
  incrNow?(key: string, windowMs: number, max: number): Readonly<LimitCount> | undefined;
}
