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
