// A bounded TTL cache with request coalescing: concurrent loads of one key share a single
// upstream call, and a failed load is never stored (the next caller tries again). Each lookup is
// counted by a recorder (the metrics, when on): a hit of this in-process layer, a join of a load in
// flight, or a miss that starts a load.
//
// With a shared level below it (Redis, when several instances run: src/redis/shared-cache.ts), a miss
// here asks the shared level, which answers from its store, waits for a load another instance has in
// flight, or loads; a hit here never touches it (the cached path costs the same with or without Redis).
import { isoNow } from './clock.ts';

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
  return { ms, iso: isoNow(ms) };
};

/** A loaded value and when. */
export interface Loaded {
  value: unknown;
  fetchedAt: Stamp;
  sentAt: number;
}

/** What the shared level answered with, and how. */
export interface SharedAnswer extends Loaded {
  /** `l2`: stored there; `coalesced`: another instance's load, waited for; `load`: loaded here (a miss). */
  from: 'l2' | 'coalesced' | 'load';
  /** How long the value is kept from fetchedAt (the longest TTL asked of it), ms. */
  keepMs: number;
}

/** A cache level shared by instances, asked after a miss in this process (see src/redis/shared-cache.ts). */
export interface SharedCache {
  /**
   * The value of `key` no older than `ttlMs`: a stored one, the result of a load another instance has in
   * flight (waited for up to `waitMs`), or `load()`'s, stored for `keepMs`. Rejects only with `load`'s
   * own failure: a failure of the shared level itself means loading here.
   */
  getOrLoad(key: string, ttlMs: number, keepMs: number, load: () => Promise<Loaded>, waitMs?: number): Promise<SharedAnswer>;
}

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

/** A load in flight in this process, and whether what it gives was already stored (the shared level's). */
type Pending = Promise<Loaded & { cached: boolean; keepMs: number }>;

export class ResponseCache {
  private readonly clearListeners: (() => void)[] = [];
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Pending>();

  constructor(
    private readonly maxEntries: number,
    private readonly recorder: CacheRecorder = NO_CACHE_RECORDER,
    /** The level shared by instances (Redis), when there is one. */
    private readonly shared?: SharedCache,
  ) {}

  /**
   * The value of `key`: a stored one while it is younger than this caller's `ttlMs`, else a fresh load
   * (shared with concurrent callers). Callers of one key may accept different ages (a mark price used
   * next to a spot price needs a fresher copy than a funding overview), so the age is checked per call.
   * `waitMs` bounds a wait for another instance's load of the same key (the shared level's default: the
   * upstream deadline).
   */
  async getOrLoad<T>(key: string, ttlMs: number, load: () => Promise<T>, waitMs?: number): Promise<Cached<T>> {
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
      const loading = this.shared && ttlMs > 0 ? this.loadShared(key, ttlMs, load, waitMs) : this.loadHere(ttlMs, load);
      pending = loading;
      this.inFlight.set(key, loading);
      // Only this load's own entry is removed (clear() may have let a newer load take the key).
      const mine = () => this.inFlight.get(key) === loading;
      loading.then(
        ({ value, fetchedAt, sentAt, keepMs }) => {
          if (!mine()) return;
          this.inFlight.delete(key);
          const keep = Math.max(keepMs, this.entries.get(key)?.ttlMs ?? 0);
          if (keep > 0) this.store(key, { value, fetchedAt, sentAt, expiresAt: fetchedAt.ms + keep, ttlMs: keep });
        },
        () => {
          if (mine()) this.inFlight.delete(key);
        },
      );
    }
    const { value, fetchedAt, sentAt, cached } = await pending;
    return { value: value as T, fetchedAt, sentAt, cached };
  }

  /** A load in this process alone (no shared level, or a value not to be cached). */
  private loadHere(ttlMs: number, load: () => Promise<unknown>): Pending {
    this.recorder.miss();
    const sentAt = Date.now();
    return load().then((value) => ({ value, fetchedAt: stampNow(), sentAt, cached: false, keepMs: ttlMs }));
  }

  /** After a miss here: the shared level's answer, counted by where it came from once known. */
  private loadShared(key: string, ttlMs: number, load: () => Promise<unknown>, waitMs: number | undefined): Pending {
    const stamped = async (): Promise<Loaded> => {
      const sentAt = Date.now();
      const value = await load();
      return { value, fetchedAt: stampNow(), sentAt };
    };
    const keepMs = Math.max(ttlMs, this.entries.get(key)?.ttlMs ?? 0);
    return this.shared!.getOrLoad(key, ttlMs, keepMs, stamped, waitMs).then(
      (got) => {
        if (got.from === 'load') this.recorder.miss();
        else this.recorder.hit(got.from);
        return { value: got.value, fetchedAt: got.fetchedAt, sentAt: got.sentAt, cached: got.from === 'l2', keepMs: got.keepMs };
      },
      (err: unknown) => {
        this.recorder.miss(); // the shared level rejects only with the load's own failure
        throw err;
      },
    );
  }

  get size(): number {
    return this.entries.size;
  }

  /** Forgets every entry and every load in flight of this process (their callers still get their answers); the shared level keeps its own. */
  clear(): void {
    this.entries.clear();
    this.inFlight.clear();
    for (const listener of this.clearListeners) listener();
  }

  /** Called on every clear(): what is made from cached answers (answer-memo.ts) goes with them. */
  onClear(listener: () => void): void {
    this.clearListeners.push(listener);
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
