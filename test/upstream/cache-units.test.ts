// ResponseCache (src/upstream/cache.ts) on its own: its entry bound, expiry and coalescing.
import { describe, expect, it } from 'vitest';
import { ResponseCache } from '../../src/upstream/cache.ts';

describe('ResponseCache', () => {
  it('evicts the least recently used entry beyond its bound', async () => {
    const cache = new ResponseCache({ maxEntries: 2, maxBytes: 1 << 20 });
    await cache.getOrLoad('a', 60_000, async () => 1);
    await cache.getOrLoad('b', 60_000, async () => 2);
    await cache.getOrLoad('a', 60_000, async () => -1); // touch a
    await cache.getOrLoad('c', 60_000, async () => 3); // evicts b
    expect(cache.size).toBe(2);
    expect((await cache.getOrLoad('a', 60_000, async () => -1)).value).toBe(1);
    expect((await cache.getOrLoad('b', 60_000, async () => 22)).value).toBe(22);
  });

  it('expires entries after their TTL and never stores failures', async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    await cache.getOrLoad('k', 20, async () => 'old');
    await new Promise((r) => setTimeout(r, 40));
    expect((await cache.getOrLoad('k', 20, async () => 'new')).value).toBe('new');
    await expect(cache.getOrLoad('f', 60_000, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect((await cache.getOrLoad('f', 60_000, async () => 'ok')).value).toBe('ok');
  });

  it("serves a stored entry only while it is younger than the caller's own TTL (a price needs a fresher copy)", async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    await cache.getOrLoad('k', 60_000, async () => 'kept for a minute');
    await new Promise((r) => setTimeout(r, 80));
    // A caller accepting 60 s gets the stored value; one accepting 30 ms gets a fresh load, which then serves both.
    expect(await cache.getOrLoad('k', 60_000, async () => 'x')).toMatchObject({ value: 'kept for a minute', cached: true });
    expect(await cache.getOrLoad('k', 30, async () => 'fresh')).toMatchObject({ value: 'fresh', cached: false });
    // The short-TTL reload keeps the entry's one-minute life for the other callers.
    await new Promise((r) => setTimeout(r, 80));
    expect(await cache.getOrLoad('k', 60_000, async () => 'x')).toMatchObject({ value: 'fresh', cached: true });
    // TTL 0 never takes a stored value.
    expect(await cache.getOrLoad('k', 0, async () => 'uncached')).toMatchObject({ value: 'uncached', cached: false });
  });

  it('coalesces concurrent loads of one key; joiners are not marked cached', async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return 'v';
    };
    const all = await Promise.all([1, 2, 3].map(() => cache.getOrLoad('x', 1000, load)));
    expect(loads).toBe(1);
    expect(all.map((a) => a.cached)).toEqual([false, false, false]);
    expect((await cache.getOrLoad('x', 1000, load)).cached).toBe(true);
  });

  it('keeps when the load was started (sentAt) beside when it answered, for joiners and cache hits alike', async () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 });
    const before = Date.now();
    const load = async () => {
      await new Promise((r) => setTimeout(r, 50));
      return 'v';
    };
    const [first, joiner] = await Promise.all([cache.getOrLoad('x', 60_000, load), cache.getOrLoad('x', 60_000, load)]);
    expect(first.sentAt).toBeGreaterThanOrEqual(before);
    expect(first.fetchedAt.ms - first.sentAt).toBeGreaterThanOrEqual(45);
    expect(joiner.sentAt).toBe(first.sentAt);
    const hit = await cache.getOrLoad('x', 60_000, load);
    expect([hit.cached, hit.sentAt, hit.fetchedAt]).toEqual([true, first.sentAt, first.fetchedAt]);
  });
});

describe('ResponseCache: stale-while-revalidate (a caller that accepts answers past their TTL)', () => {
  /** A cache on a clock the test moves, and a load it counts and can hold. */
  function world() {
    let now = 1_000_000;
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20, now: () => now });
    let loads = 0;
    let held: Promise<void> | undefined;
    let release = () => {};
    const load = async () => {
      const n = ++loads;
      await held;
      return `v${n}`;
    };
    const hold = () => (held = new Promise((r) => (release = () => ((held = undefined), r()))));
    return { cache, load, hold, release: () => release(), loads: () => loads, at: (ms: number) => (now = 1_000_000 + ms) };
  }
  const TTL = 1000;
  const STALE = 5000;

  it('refreshes only once the TTL has passed, once for many callers, answering each at once with the old value meanwhile', async () => {
    const w = world();
    expect(await w.cache.getOrLoad('k', TTL, w.load, undefined, STALE)).toMatchObject({ value: 'v1', cached: false });
    w.at(TTL - 1);
    expect(await w.cache.getOrLoad('k', TTL, w.load, undefined, STALE)).toMatchObject({ value: 'v1', cached: true });
    expect(w.loads()).toBe(1); // not before the TTL
    w.at(TTL);
    w.hold();
    const stale = await Promise.all(Array.from({ length: 10 }, () => w.cache.getOrLoad('k', TTL, w.load, undefined, STALE)));
    for (const s of stale) expect(s).toMatchObject({ value: 'v1', cached: true, fetchedAt: { ms: 1_000_000 } });
    expect(w.loads()).toBe(2); // one refresh, held
    // A caller without a staleness joins the refresh rather than take the old value.
    const live = w.cache.getOrLoad('k', TTL, w.load);
    w.release();
    expect(await live).toMatchObject({ value: 'v2', cached: false });
    expect(await w.cache.getOrLoad('k', TTL, w.load, undefined, STALE)).toMatchObject({ value: 'v2', cached: true });
    expect(w.loads()).toBe(2);
  });

  it('past the staleness the caller waits for a load; a failed refresh leaves the old value until then', async () => {
    const w = world();
    await w.cache.getOrLoad('k', TTL, w.load, undefined, STALE);
    w.at(TTL + 10);
    const failing = async () => Promise.reject(new Error('upstream down'));
    expect(await w.cache.getOrLoad('k', TTL, failing, undefined, STALE)).toMatchObject({ value: 'v1', cached: true });
    await new Promise((r) => setImmediate(r)); // the refresh has failed
    // Still within the staleness: the old value, and another refresh (this one works).
    expect(await w.cache.getOrLoad('k', TTL, w.load, undefined, STALE)).toMatchObject({ value: 'v1', cached: true });
    await new Promise((r) => setImmediate(r));
    expect(w.loads()).toBe(2);
    // Past TTL + staleness of the new value: a load, waited for.
    w.at(TTL + 10 + TTL + STALE);
    expect(await w.cache.getOrLoad('k', TTL, w.load, undefined, STALE)).toMatchObject({ value: 'v3', cached: false });
  });

  it('a value cached for 0 s is never served stale', async () => {
    const w = world();
    await w.cache.getOrLoad('k', 0, w.load, undefined, STALE);
    expect(await w.cache.getOrLoad('k', 0, w.load, undefined, STALE)).toMatchObject({ value: 'v2', cached: false });
  });
});
