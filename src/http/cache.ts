// A bounded TTL cache with request coalescing: concurrent loads of one key share a single
// upstream call, and a failed load is never stored (the next caller tries again). Each lookup is
// counted by a recorder (the metrics, when on): a hit of this in-process layer, a join of a load in
// flight, or a miss that starts a load.

/** Where a lookup was answered: this process's cache (`l1`), a shared one (`l2`), or a load already in flight (`coalesced`). */
export type CacheLayer = 'l1' | 'l2' | 'coalesced';

export interface CacheRecorder {
  hit(layer: CacheLayer): void;
  /** A lookup that started a load. */
  miss(): void;
}

export const NO_CACHE_RECORDER: CacheRecorder = { hit() {}, miss() {} };

/** When a value was fetched: epoch ms, and the same as ISO-8601 (made once, shown on every hit). */
export interface Stamp {
  ms: number;
  iso: string;
}

export const stampNow = (): Stamp => {
  const ms = Date.now();
  return { ms, iso: new Date(ms).toISOString() };
};

export interface Cached<T> {
  value: T;
  fetchedAt: Stamp;
  /** When the load that produced the value started (its upstream request was sent then), epoch ms: the value is as of some moment between this and fetchedAt. */
  sentAt: number;
  /** True when the value came from the cache rather than from a load this call waited on. */
  cached: boolean;
}

interface Entry {
  value: unknown;
  fetchedAt: Stamp;
  sentAt: number;
  expiresAt: number;
  /** The longest TTL a caller of this key asked for: a short-TTL reload does not shorten it for the others. */
  ttlMs: number;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<{ value: unknown; fetchedAt: Stamp; sentAt: number }>>();

  constructor(
    private readonly maxEntries: number,
    private readonly recorder: CacheRecorder = NO_CACHE_RECORDER,
  ) {}

  /**
   * The value of `key`: a stored one while it is younger than this caller's `ttlMs`, else a fresh load
   * (shared with concurrent callers). Callers of one key may accept different ages (a mark price used
   * next to a spot price needs a fresher copy than a funding overview), so the age is checked per call.
   */
  async getOrLoad<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<Cached<T>> {
    const hit = this.entries.get(key);
    if (hit) {
      const now = Date.now();
      if (hit.expiresAt > now && now - hit.fetchedAt.ms < ttlMs) {
        // Re-insert so Map order tracks recency (least recently used is first).
        this.entries.delete(key);
        this.entries.set(key, hit);
        this.recorder.hit('l1');
        return { value: hit.value as T, fetchedAt: hit.fetchedAt, sentAt: hit.sentAt, cached: true };
      }
      // Too old for this caller: reloaded below. Kept while other callers may still use it.
      if (hit.expiresAt <= now) this.entries.delete(key);
    }

    let pending = this.inFlight.get(key);
    if (pending) {
      this.recorder.hit('coalesced');
    } else {
      this.recorder.miss();
      const sentAt = Date.now();
      const loading = load().then((value) => ({ value, fetchedAt: stampNow(), sentAt }));
      pending = loading;
      this.inFlight.set(key, loading);
      // Only this load's own entry is removed (clear() may have let a newer load take the key).
      const mine = () => this.inFlight.get(key) === loading;
      loading.then(
        ({ value, fetchedAt, sentAt }) => {
          if (!mine()) return;
          this.inFlight.delete(key);
          const keep = Math.max(ttlMs, this.entries.get(key)?.ttlMs ?? 0);
          if (keep > 0) this.store(key, { value, fetchedAt, sentAt, expiresAt: fetchedAt.ms + keep, ttlMs: keep });
        },
        () => {
          if (mine()) this.inFlight.delete(key);
        },
      );
    }
    const { value, fetchedAt, sentAt } = await pending;
    return { value: value as T, fetchedAt, sentAt, cached: false };
  }

  get size(): number {
    return this.entries.size;
  }

  /** Forgets every entry and every load in flight (their callers still get their answers). */
  clear(): void {
    this.entries.clear();
    this.inFlight.clear();
  }

  private store(key: string, entry: Entry): void {
    this.entries.delete(key); // re-inserted last: the most recently used
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}
