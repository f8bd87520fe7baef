// Counts per bucket in fixed windows, in this process: a window opens at a bucket's first request and
// lasts `windowMs` (what @fastify/rate-limit's LocalStore does, without its LRU list moved on every
// request: a plain Map lookup). Buckets whose window has ended are swept once per window; past
// MAX_BUCKETS live buckets the oldest are dropped (a client counted again from zero), so a flood of
// addresses cannot grow it without bound.
import type { LimitCount, LimitStore } from './store.ts';

const MAX_BUCKETS = 100_000;

interface Window {
  current: number;
  start: number;
}

export class WindowStore implements LimitStore {
  private readonly windows = new Map<string, Window>();
  private nextSweep = 0;
  /** What incrNow answers (see there). */
  private readonly last: LimitCount = { current: 0, ttl: 0 };

  constructor(private readonly clock: () => number = Date.now) {}

  incr(key: string, cb: (err: Error | null, count?: LimitCount) => void, windowMs: number, _max?: number): void {
    const count = this.incrNow(key, windowMs);
    cb(null, { current: count.current, ttl: count.ttl });
  }

  /**
   * Counts one more in `key`'s window and answers at once, in one object of the store's own that the next
   * call overwrites (read it before counting again): the cached path counts every request, and allocates nothing here.
   */
  incrNow(key: string, windowMs: number): Readonly<LimitCount> {
    const now = this.clock();
    if (now >= this.nextSweep) this.sweep(now, windowMs);
    let w = this.windows.get(key);
    if (w === undefined || w.start + windowMs <= now) {
      if (w === undefined && this.windows.size >= MAX_BUCKETS) this.windows.delete(this.windows.keys().next().value as string);
      this.windows.set(key, (w = { current: 0, start: now }));
    }
    w.current++;
    this.last.current = w.current;
    this.last.ttl = w.start + windowMs - now;
    return this.last;
  }

  /** Counts `n` more in `key`'s window at once (requests counted elsewhere first, e.g. a batch Redis did not take). */
  add(key: string, n: number, windowMs: number): void {
    if (n <= 0) return;
    this.incrNow(key, windowMs);
    this.windows.get(key)!.current += n - 1;
  }

  /**
   * Opens `key`'s window with `n` already counted, ending at `endsAt` (epoch ms), unless one is open: the count
   * another store had made in that window (Redis's, when it fails). Returns when the window began (0: none opened).
   */
  seed(key: string, n: number, windowMs: number, endsAt: number): number {
    const now = this.clock();
    const w = this.windows.get(key);
    if ((w !== undefined && w.start + windowMs > now) || endsAt <= now || n <= 0) return 0;
    const start = endsAt - windowMs;
    this.windows.set(key, { current: n, start });
    return start;
  }

  /** Forgets `key`'s window, returning what it counted and when it began (0 and 0 when none is open). */
  take(key: string, windowMs: number): { current: number; start: number } {
    const w = this.windows.get(key);
    this.windows.delete(key);
    if (w === undefined || w.start + windowMs <= this.clock()) return { current: 0, start: 0 };
    return { current: w.current, start: w.start };
  }

  read(key: string, cb: (err: Error | null, count?: LimitCount) => void, windowMs: number, _max?: number): void {
    const now = this.clock();
    const w = this.windows.get(key);
    if (w === undefined || w.start + windowMs <= now) return cb(null, { current: 0, ttl: 0 });
    cb(null, { current: w.current, ttl: w.start + windowMs - now });
  }

  get size(): number {
    return this.windows.size;
  }

  private sweep(now: number, windowMs: number): void {
    this.nextSweep = now + windowMs;
    for (const [key, w] of this.windows) if (w.start + windowMs <= now) this.windows.delete(key);
  }
}
