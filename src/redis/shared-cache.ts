// The response cache's second level (L2) in Redis, shared by every instance, with single-flight across
// instances for cold keys. Asked only after a miss in the process's own cache (L1):
//   1. a stored entry young enough for this caller (the same per-caller TTL rule as L1) is the answer;
//      A caller that accepts stale answers (stale-while-revalidate) is given one past its TTL and within its
//      staleness at once, and refreshes it by asking again without staleness, which is step 2;
//   2. otherwise one instance takes a short lock (src/redis/lock.ts), loads, stores the value, and
//      publishes that it did; the others wait for that message (checking Redis every POLL_MS too, as
//      pub/sub drops messages while a connection is away) up to the upstream deadline, then load
//      themselves. A failed load is not stored: its holder says so and the waiters load at once, as
//      each would have without Redis.
// Redis is never waited on beyond REDIS_TIMEOUT_MS (no offline queue, a command timeout: client.ts): a
// command that fails makes this lookup load here alone, reports to the Redis BackendHealth (logged once,
// /v1/status), and the next lookup tries Redis again, so recovery needs nothing.
//
// Ages are measured against the fetchedAt of the instance that loaded the value: the instances' clocks are
// assumed in step (NTP); a skew of s seconds makes an entry look s seconds younger or older to the others.
//
// What is not put in Redis: the cache key in clear (it holds the URL, which may carry a provider's key:
// only its SHA-256 is used), values over the size cap, values that would not read back the same (see
// cache-codec.ts), failures, and anything cached for 0 s (the L1 caller never asks then).
import type { BackendHealth } from '../lib/backend-health.ts';
import type { Loaded, SharedAnswer, SharedCache } from '../upstream/cache.ts';
import { cacheKeyId, decodeValue, encodeEntry, entryStamps, L2_KEY_PREFIX, type L2Entry } from './cache-codec.ts';
import { KEY_PREFIX, type RedisConnections } from './client.ts';
import { RedisLock } from './lock.ts';

/**
 * Largest entry written to Redis (header and serialized value), bytes. The largest answer cached today,
 * DefiLlama's pools table (~16.8k pools), is about 1.6 MB; a few MB move over a LAN well within the
 * command timeout. Larger values stay in each instance's L1.
 */
export const L2_MAX_BYTES = 4 * 1024 * 1024;

/** How often a waiting instance looks at Redis itself, in case the message of the load it waits for was lost. */
export const POLL_MS = 100;

/** The lock outlives the wait it guards by this much: a holder that answers at its deadline still writes under it. */
const LOCK_MARGIN_MS = 1000;

/** Published when a cold load ends: `<id>` (stored) or `<id> none` (failed or not kept: load yourself). */
export const FILLED_CHANNEL = `${KEY_PREFIX}cache:filled`;

type Signal = 'stored' | 'none' | 'timeout';

/** A Redis command that failed (reported to the health already). */
const DOWN = Symbol('redis down');

interface Stored {
  bytes: Buffer;
  stamps: Omit<L2Entry, 'value'>;
}

interface Where {
  id: string;
  value: string;
  lock: string;
  /** The provider named at the start of the cache key, for the log (never the rest of the key). */
  provider: string;
}

export interface RedisSharedCacheOptions {
  connections: RedisConnections;
  health: BackendHealth;
  /** Longest wait for another instance's load when the caller names none: the upstream deadline, ms. */
  waitMs: number;
  /** Default L2_MAX_BYTES. */
  maxBytes?: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export class RedisSharedCache implements SharedCache {
  private readonly lock: RedisLock;
  /** Per key id waited on in this process: who to tell when its load ends. */
  private readonly inboxes = new Map<string, Set<(signal: Signal) => void>>();
  /** Providers whose answers were not kept (logged once each). */
  private readonly notKept = new Set<string>();

  constructor(private readonly options: RedisSharedCacheOptions) {
    this.lock = new RedisLock(options.connections.client);
    void options.connections.subscribe(FILLED_CHANNEL, (message) => this.deliver(message));
  }

  async getOrLoad(key: string, ttlMs: number, keepMs: number, load: () => Promise<Loaded>, waitMs = this.options.waitMs, staleMs = 0): Promise<SharedAnswer> {
    const id = cacheKeyId(key);
    const at: Where = { id, value: L2_KEY_PREFIX + id, lock: `${L2_KEY_PREFIX}lock:${id}`, provider: key.slice(0, key.indexOf(' ')) };
    let keep = keepMs;

    const stored = await this.read(at);
    if (stored === DOWN) return this.loadAlone(load, keep);
    if (stored) {
      const fresh = this.answer(stored, ttlMs, 'l2');
      if (fresh) return fresh;
      // Past the TTL but within the caller's staleness: answered now; the caller refreshes it (through the lock below).
      const stale = staleMs > 0 ? this.answer(stored, ttlMs + staleMs, 'l2') : null;
      if (stale) return { ...stale, stale: true };
      keep = Math.max(keep, stored.stamps.keepMs); // a short-TTL reload does not shorten it for the others
    }

    // Cold (or too old for this caller): one instance loads, the others wait for it.
    const inbox = this.listen(id); // before the lock: a message sent meanwhile is not missed
    try {
      const until = Date.now() + waitMs;
      for (;;) {
        const token = await this.command(() => this.lock.acquire(at.lock, waitMs + LOCK_MARGIN_MS));
        if (token === DOWN) return this.loadAlone(load, keep);
        if (token) return await this.loadHolding(at, token, ttlMs, keep, load);
        const left = until - Date.now();
        if (left <= 0) break;
        const signal = await inbox.next(Math.min(POLL_MS, left));
        if (signal === 'none') break; // its load failed or was not kept: load here at once
        const now = await this.read(at);
        if (now === DOWN) return this.loadAlone(load, keep);
        const fresh = now && this.answer(now, ttlMs, 'coalesced');
        if (fresh) return fresh;
      }
    } finally {
      inbox.close();
    }
    // Waited as long as an upstream call may take (or told to stop): load here, and share it.
    const loaded = await load();
    void this.finish(at, undefined, loaded, keep);
    return { ...loaded, from: 'load', keepMs: keep };
  }

  /** Loads under the lock; the value is stored, announced and the lock released after the caller has it. */
  private async loadHolding(at: Where, token: string, ttlMs: number, keep: number, load: () => Promise<Loaded>): Promise<SharedAnswer> {
    let loaded: Loaded;
    try {
      // Another instance may have stored it between the read and the lock (it stores before it releases).
      const stored = await this.read(at);
      const fresh = stored && stored !== DOWN && this.answer(stored, ttlMs, 'l2');
      if (fresh) {
        void this.command(() => this.lock.release(at.lock, token));
        return fresh;
      }
      loaded = await load();
    } catch (err) {
      void this.finish(at, token, undefined, keep);
      throw err;
    }
    void this.finish(at, token, loaded, keep);
    return { ...loaded, from: 'load', keepMs: keep };
  }

  private async loadAlone(load: () => Promise<Loaded>, keepMs: number): Promise<SharedAnswer> {
    return { ...(await load()), from: 'load', keepMs };
  }

  /** After a load: the entry stored (when it may be), the waiters told, the lock released. Never rejects. */
  private async finish(at: Where, token: string | undefined, loaded: Loaded | undefined, keepMs: number): Promise<void> {
    let stored = false;
    if (loaded) {
      const encoded = encodeEntry({ value: loaded.value, fetchedAt: loaded.fetchedAt.ms, sentAt: loaded.sentAt, keepMs }, this.options.maxBytes ?? L2_MAX_BYTES);
      if (encoded.ok) {
        const ttl = Math.max(1, Math.ceil(loaded.fetchedAt.ms + keepMs - Date.now()));
        stored = (await this.command(() => this.options.connections.client.set(at.value, encoded.bytes, 'PX', ttl))) === 'OK';
      } else {
        this.noteNotKept(at.provider, encoded.why, encoded.reason);
      }
    }
    await this.command(() => this.options.connections.client.publish(FILLED_CHANNEL, stored ? at.id : `${at.id} none`));
    if (token) await this.command(() => this.lock.release(at.lock, token));
  }

  /** The stored entry of `at` (null: none, or not readable), or DOWN. */
  private async read(at: Where): Promise<Stored | null | typeof DOWN> {
    const bytes = await this.command(() => this.options.connections.client.getBuffer(at.value));
    if (bytes === DOWN || bytes === null) return bytes;
    const stamps = entryStamps(bytes);
    return stamps ? { bytes, stamps } : null;
  }

  /** The stored value as an answer when it is young enough for this caller (null: too old, or unreadable). */
  private answer(stored: Stored, ttlMs: number, from: 'l2' | 'coalesced'): SharedAnswer | null {
    const { fetchedAt, sentAt, keepMs } = stored.stamps;
    if (!(Date.now() - fetchedAt < ttlMs)) return null;
    let value: unknown;
    try {
      value = decodeValue(stored.bytes);
    } catch {
      return null; // not this format after all: loaded again and overwritten
    }
    return { value, fetchedAt: { ms: fetchedAt, iso: new Date(fetchedAt).toISOString() }, sentAt, keepMs, from };
  }

  /** Runs a Redis command; a failure is reported to the health and returned as DOWN (this lookup goes on without Redis). */
  private async command<T>(run: () => Promise<T>): Promise<T | typeof DOWN> {
    const { health } = this.options;
    try {
      const result = await run();
      if (health.degraded) health.ok(); // e.g. a Redis that hung and answers again on the same connection
      return result;
    } catch (err) {
      health.failed(err);
      return DOWN;
    }
  }

  /** Subscribes this lookup to the end of the load of `id`; a message that comes before `next` is kept. */
  private listen(id: string): { next(ms: number): Promise<Signal>; close(): void } {
    let pending: Signal | undefined;
    let waiting: ((signal: Signal) => void) | undefined;
    const receive = (signal: Signal) => {
      if (waiting) waiting(signal);
      else pending = signal === 'none' || pending === undefined ? signal : pending;
    };
    let set = this.inboxes.get(id);
    if (!set) this.inboxes.set(id, (set = new Set()));
    set.add(receive);
    return {
      next: (ms) => {
        if (pending) {
          const signal = pending;
          pending = undefined;
          return Promise.resolve(signal);
        }
        return new Promise<Signal>((resolve) => {
          const timer = setTimeout(() => settle('timeout'), ms);
          const settle = (signal: Signal) => {
            clearTimeout(timer);
            waiting = undefined;
            resolve(signal);
          };
          waiting = settle;
        });
      },
      close: () => {
        set.delete(receive);
        if (set.size === 0 && this.inboxes.get(id) === set) this.inboxes.delete(id);
      },
    };
  }

  private deliver(message: string): void {
    const space = message.indexOf(' ');
    const id = space < 0 ? message : message.slice(0, space);
    const set = this.inboxes.get(id);
    if (!set) return;
    const signal: Signal = space < 0 ? 'stored' : 'none';
    for (const receive of set) receive(signal);
  }

  /** Logged once per provider and kind: a value over the cap is by design (info), one that would not read back is a defect (warn). */
  private noteNotKept(provider: string, why: 'type' | 'size', reason: string): void {
    if (this.notKept.has(`${why} ${provider}`)) return;
    this.notKept.add(`${why} ${provider}`);
    const msg = `response cache: an answer of ${provider} ${reason}; it is kept in each instance's own cache only`;
    if (why === 'size') this.options.log.info({ provider }, msg);
    else this.options.log.warn({ provider }, msg);
  }
}
