// A bounded TTL cache with request coalescing: concurrent loads of one key share a single
// upstream call, and a failed load is never stored (the next caller tries again). Each lookup is
// counted by a recorder (the metrics, when on): a hit of this in-process layer, a join of a load in
// flight, or a miss that starts a load.
//
// Bounded in bytes (CACHE_MAX_BYTES: each entry's estimated heap size, heap-size.ts) and in entries
// (CACHE_MAX_ENTRIES), the least recently used going first; an entry is freed when its time is up by a
// timer of its own, not when it is next looked up (lru-cache's ttlAutopurge), so a burst of distinct keys
// is gone one TTL later. (A timer that fires when the entry has exactly no time left is not set again by
// lru-cache 11: a sweep every PURGE_MS frees what such timers leave.)
//
// With a shared level below it (Redis, when several instances run: src/redis/shared-cache.ts), a miss
// here asks the shared level, which answers from its store, waits for a load another instance has in
// flight, or loads; a hit here never touches it (the cached path costs the same with or without Redis).
//
// Stale-while-revalidate: a caller that accepts answers up to `staleMs` past its TTL (a route that declares
// a maximum staleness: src/catalog/staleness.ts) is given an entry past its TTL but within that at once, and
// the entry is refreshed in the background by one load: the one in flight in this process if there is one,
// and across instances the shared level's lock (one instance loads, the others wait for its answer in the
// background). The refresh starts only once the TTL has passed, so there is one load per TTL however many
// callers. Past the staleness, the caller waits for the load as any miss does.
import { LRUCache } from 'lru-cache';
import { isoNow } from '../lib/clock.ts';
import { heapSize } from './heap-size.ts';

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
  /** How long the value is kept from fetchedAt (the longest TTL and staleness asked of it), ms. */
  keepMs: number;
  /** Past the caller's TTL, within its staleness: answered, to be refreshed. */
  stale?: boolean;
}

/** A cache level shared by instances, asked after a miss in this process (see src/redis/shared-cache.ts). */
export interface SharedCache {
  /**
   * The value of `key` no older than `ttlMs`: a stored one, the result of a load another instance has in
   * flight (waited for up to `waitMs`), or `load()`'s, stored for `keepMs`. With `staleMs`, a stored one up
   * to that much past `ttlMs` is answered at once (`stale`: the caller refreshes it). Rejects only with
   * `load`'s own failure: a failure of the shared level itself means loading here.
   */
  getOrLoad(key: string, ttlMs: number, keepMs: number, load: () => Promise<Loaded>, waitMs?: number, staleMs?: number): Promise<SharedAnswer>;
}

/** The lookups a source makes (sources/define-source.ts): the cache itself, or a view of it that serves stale answers. */
export interface CacheLookup {
  getOrLoad<T>(key: string, ttlMs: number, load: () => Promise<T>, waitMs?: number): Promise<Cached<T>>;
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
  /**
   * How long it is kept from fetchedAt: the longest TTL and staleness a caller of this key asked for (a
   * short-TTL reload does not shorten it for the others). Whether it serves a caller is that caller's TTL.
   */
  ttlMs: number;
}

/** A load in flight in this process, and whether what it gives was already stored (the shared level's, `stale` when past the caller's TTL). */
type Pending = Promise<Loaded & { cached: boolean; keepMs: number; stale?: boolean }>;

export interface CacheOptions {
  /** Most entries, whatever their size (CACHE_MAX_ENTRIES). */
  maxEntries: number;
  /** Most bytes: the entries' estimated heap size, keys and bookkeeping included. */
  maxBytes: number;
  recorder?: CacheRecorder;
  /** The level shared by instances (Redis), when there is one. */
  shared?: SharedCache;
  /** The clock, epoch ms (tests move their own). */
  now?: () => number;
}

/** What the cache holds, and what it let go (/v1/status, /metrics). */
export interface CacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  /** Entries dropped to stay within the byte or entry bound. */
  evicted: number;
  /** Entries freed when their time was up. */
  expired: number;
}

/** Bytes counted per entry beyond its value: the key's string and the cache's own bookkeeping (lru-cache's slots, the entry, a timer). */
const ENTRY_OVERHEAD = 256;

/** How often expired entries the per-entry timers missed are swept (ms). */
export const PURGE_MS = 1000;

export class ResponseCache {
  private readonly clearListeners: (() => void)[] = [];
  private readonly entries: LRUCache<string, Entry>;
  private readonly inFlight = new Map<string, Pending>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly recorder: CacheRecorder;
  private readonly shared: SharedCache | undefined;
  private readonly now: () => number;
  private evicted = 0;
  private expired = 0;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(options: CacheOptions) {
    this.maxEntries = options.maxEntries;
    this.maxBytes = options.maxBytes;
    this.recorder = options.recorder ?? NO_CACHE_RECORDER;
    this.shared = options.shared;
    // (Date.now looked up at each call, as everywhere else: tests that fake the clock fake it here too.)
    const now = (this.now = options.now ?? (() => Date.now()));
    this.entries = new LRUCache<string, Entry>({
      maxSize: options.maxBytes,
      // Each entry is freed by a timer of its own when its time is up, whether or not it is asked for again.
      ttlAutopurge: true,
      // The clock read on every check (lru-cache's default would set a timer per lookup to reuse one reading).
      ttlResolution: 0,
      // Entries start at their fetch time, epoch ms, as their callers' TTLs are counted.
      perf: { now },
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') this.evicted++;
        else if (reason === 'expire') this.expired++;
      },
    });
  }

  /**
   * The value of `key`: a stored one while it is younger than this caller's `ttlMs`, else a fresh load
   * (shared with concurrent callers). Callers of one key may accept different ages (a mark price used
   * next to a spot price needs a fresher copy than a funding overview), so the age is checked per call.
   * `waitMs` bounds a wait for another instance's load of the same key (the shared level's default: the
   * upstream deadline).
   */
  async getOrLoad<T>(key: string, ttlMs: number, load: () => Promise<T>, waitMs?: number, staleMs = 0): Promise<Cached<T>> {
    // An entry past its time is never given back (lru-cache drops it here if its timer has not yet).
    const hit = this.entries.get(key);
    if (hit) {
      const age = this.now() - hit.fetchedAt.ms;
      if (age < ttlMs || (age < ttlMs + staleMs && ttlMs > 0)) {
        this.recorder.hit('l1');
        // Past its TTL, within this caller's staleness: answered now, refreshed by one load in the background.
        if (age >= ttlMs) this.refresh(key, ttlMs, load, waitMs);
        return { value: hit.value as T, fetchedAt: hit.fetchedAt, sentAt: hit.sentAt, cached: true };
      }
    }
    // Too old for this caller (or absent): loaded below. A stored one is kept while other callers may still use it.

    let pending = this.inFlight.get(key);
    if (pending) this.recorder.hit('coalesced');
    else pending = this.startLoad(key, ttlMs, load, waitMs, staleMs);
    const { value, fetchedAt, sentAt, cached } = await pending;
    return { value: value as T, fetchedAt, sentAt, cached };
  }

  /** A view of this cache whose lookups accept answers up to `staleMs` past their TTL (see the top of this file). */
  servingStale(staleMs: number): CacheLookup {
    return { getOrLoad: (key, ttlMs, load, waitMs) => this.getOrLoad(key, ttlMs, load, waitMs, staleMs) };
  }

  /**
   * Loads `key` in the background unless a load of it is in flight here already (fresh: a stale answer from
   * the shared level would be no refresh). Its failure is met by the next caller past the staleness.
   */
  private refresh(key: string, ttlMs: number, load: () => Promise<unknown>, waitMs: number | undefined): void {
    if (this.inFlight.has(key)) return;
    this.startLoad(key, ttlMs, load, waitMs, 0).catch(() => {});
  }

  /** Starts the load of `key` (through the shared level when there is one), shared by every caller until it ends, and stores what it gives. */
  private startLoad(key: string, ttlMs: number, load: () => Promise<unknown>, waitMs: number | undefined, staleMs: number): Pending {
    const loading = this.shared && ttlMs > 0 ? this.loadShared(key, ttlMs, load, waitMs, staleMs) : this.loadHere(ttlMs > 0 ? ttlMs + staleMs : 0, load);
    this.inFlight.set(key, loading);
    // Only this load's own entry is removed (clear() may have let a newer load take the key).
    const mine = () => this.inFlight.get(key) === loading;
    loading.then(
      ({ value, fetchedAt, sentAt, keepMs, stale }) => {
        if (!mine()) return;
        this.inFlight.delete(key);
        const keep = Math.ceil(Math.max(keepMs, this.entries.peek(key)?.ttlMs ?? 0));
        if (keep > 0) this.store(key, { value, fetchedAt, sentAt, ttlMs: keep });
        // The shared level's entry was past the TTL: this instance refreshes it (the shared lock makes it one load).
        if (stale) this.refresh(key, ttlMs, load, waitMs);
      },
      () => {
        if (mine()) this.inFlight.delete(key);
      },
    );
    return loading;
  }

  /** A load in this process alone (no shared level, or a value not to be cached), kept `keepMs`. */
  private loadHere(keepMs: number, load: () => Promise<unknown>): Pending {
    this.recorder.miss();
    const sentAt = this.now();
    return load().then((value) => ({ value, fetchedAt: this.stamp(), sentAt, cached: false, keepMs }));
  }

  /** After a miss here: the shared level's answer, counted by where it came from once known. */
  private loadShared(key: string, ttlMs: number, load: () => Promise<unknown>, waitMs: number | undefined, staleMs: number): Pending {
    const stamped = async (): Promise<Loaded> => {
      const sentAt = this.now();
      const value = await load();
      return { value, fetchedAt: this.stamp(), sentAt };
    };
    const keepMs = Math.max(ttlMs + staleMs, this.entries.peek(key)?.ttlMs ?? 0);
    return this.shared!.getOrLoad(key, ttlMs, keepMs, stamped, waitMs, staleMs).then(
      (got) => {
        if (got.from === 'load') this.recorder.miss();
        else this.recorder.hit(got.from);
        return { value: got.value, fetchedAt: got.fetchedAt, sentAt: got.sentAt, cached: got.from === 'l2', keepMs: got.keepMs, stale: got.stale };
      },
      (err: unknown) => {
        this.recorder.miss(); // the shared level rejects only with the load's own failure
        throw err;
      },
    );
  }

  private stamp(): Stamp {
    const ms = this.now();
    return { ms, iso: isoNow(ms) };
  }

  get size(): number {
    return this.entries.size;
  }

  stats(): CacheStats {
    return { entries: this.entries.size, bytes: this.entries.calculatedSize, maxBytes: this.maxBytes, evicted: this.evicted, expired: this.expired };
  }

  /** Frees every entry past its time now (their timers do it anyway; tests with their own clock call it). */
  purge(): void {
    this.entries.purgeStale();
  }

  /** Sweeps every PURGE_MS until stop(). */
  start(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.purge(), PURGE_MS);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
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

  /** Stores `entry` for its TTL from its fetch time, as the most recently used; one too large for the whole budget is not kept. */
  private store(key: string, entry: Entry): void {
    const size = ENTRY_OVERHEAD + 2 * key.length + heapSize(entry.value, this.maxBytes);
    this.entries.set(key, entry, { size, ttl: entry.ttlMs, start: entry.fetchedAt.ms });
    while (this.entries.size > this.maxEntries) this.entries.pop();
  }
}
