// ResponseCache in front of a shared level (what Redis is when REDIS_URL is set), with a scripted shared
// level: a hit in this process never asks it; a miss asks it once per key however many callers wait; its
// answer is counted by where it came from and kept here for as long as it is kept there; a value cached
// for 0 s never goes to it; a failed load is stored nowhere.
import { describe, expect, it } from 'vitest';
import { ResponseCache, type CacheLayer, type CacheRecorder, type Loaded, type SharedAnswer, type SharedCache } from '../../src/upstream/cache.ts';

class Counts implements CacheRecorder {
  readonly seen: (CacheLayer | 'miss')[] = [];
  hit(layer: CacheLayer) {
    this.seen.push(layer);
  }
  miss() {
    this.seen.push('miss');
  }
}

/** A shared level that answers as the test says: from its store, another instance's load, or the load it is given. */
class ScriptedShared implements SharedCache {
  readonly asked: { key: string; ttlMs: number; keepMs: number; waitMs?: number }[] = [];
  answer: 'load' | { from: 'l2' | 'coalesced'; value: unknown; fetchedAtMs: number; keepMs: number } = 'load';

  async getOrLoad(key: string, ttlMs: number, keepMs: number, load: () => Promise<Loaded>, waitMs?: number): Promise<SharedAnswer> {
    this.asked.push({ key, ttlMs, keepMs, waitMs });
    await new Promise((r) => setTimeout(r, 10));
    const a = this.answer;
    if (a === 'load') return { ...(await load()), from: 'load', keepMs };
    return { value: a.value, fetchedAt: { ms: a.fetchedAtMs, iso: new Date(a.fetchedAtMs).toISOString() }, sentAt: a.fetchedAtMs - 5, from: a.from, keepMs: a.keepMs };
  }
}

describe('ResponseCache with a shared level', () => {
  it('a miss asks the shared level once for all concurrent callers; a hit here never asks it', async () => {
    const shared = new ScriptedShared();
    const counts = new Counts();
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20, recorder: counts, shared });
    let loads = 0;
    const load = async () => ++loads;
    const all = await Promise.all([1, 2, 3].map(() => cache.getOrLoad('k', 60_000, load, 1234)));
    expect(all.map((a) => a.value)).toEqual([1, 1, 1]);
    expect(shared.asked).toEqual([{ key: 'k', ttlMs: 60_000, keepMs: 60_000, waitMs: 1234 }]);
    expect(counts.seen).toEqual(['coalesced', 'coalesced', 'miss']);
    expect(await cache.getOrLoad('k', 60_000, load)).toMatchObject({ value: 1, cached: true });
    expect(shared.asked).toHaveLength(1);
    expect(counts.seen.at(-1)).toBe('l1');
  });

  it("an answer from the shared store is cached (its fetchedAt kept), counted l2, and kept here as long as there", async () => {
    const shared = new ScriptedShared();
    const counts = new Counts();
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20, recorder: counts, shared });
    const fetchedAtMs = Date.now() - 1000;
    shared.answer = { from: 'l2', value: { fee: 7n }, fetchedAtMs, keepMs: 3_600_000 };
    const got = await cache.getOrLoad('k', 5000, async () => 'not asked');
    expect(got).toMatchObject({ value: { fee: 7n }, cached: true, sentAt: fetchedAtMs - 5 });
    expect(got.fetchedAt.ms).toBe(fetchedAtMs);
    expect(counts.seen).toEqual(['l2']);
    // Kept here for the hour the shared level keeps it: a caller accepting 10 minutes hits L1.
    expect(await cache.getOrLoad('k', 600_000, async () => 'not asked')).toMatchObject({ value: { fee: 7n }, cached: true });
    expect(counts.seen).toEqual(['l2', 'l1']);
    expect(shared.asked).toHaveLength(1);
  });

  it('another instance\'s load waited for is counted coalesced and, like a join here, not marked cached', async () => {
    const shared = new ScriptedShared();
    const counts = new Counts();
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20, recorder: counts, shared });
    shared.answer = { from: 'coalesced', value: 'theirs', fetchedAtMs: Date.now(), keepMs: 60_000 };
    expect(await cache.getOrLoad('k', 60_000, async () => 'mine')).toMatchObject({ value: 'theirs', cached: false });
    expect(counts.seen).toEqual(['coalesced']);
  });

  it('a value cached for 0 s never goes to the shared level', async () => {
    const shared = new ScriptedShared();
    const counts = new Counts();
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20, recorder: counts, shared });
    expect((await cache.getOrLoad('k', 0, async () => 'live')).value).toBe('live');
    expect(shared.asked).toEqual([]);
    expect(counts.seen).toEqual(['miss']);
  });

  it('a failed load is a miss, stored nowhere: the next caller asks again', async () => {
    const shared = new ScriptedShared();
    const counts = new Counts();
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20, recorder: counts, shared });
    await expect(cache.getOrLoad('k', 60_000, async () => Promise.reject(new Error('upstream down')))).rejects.toThrow('upstream down');
    expect(counts.seen).toEqual(['miss']);
    expect(cache.size).toBe(0);
    expect((await cache.getOrLoad('k', 60_000, async () => 'back')).value).toBe('back');
    expect(shared.asked).toHaveLength(2);
  });
});
