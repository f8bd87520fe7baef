// What the caches may hold (src/upstream/cache.ts, src/edge/answer-memo.ts, derived in src/upstream/envelope.ts):
// bytes within CACHE_MAX_BYTES (the least recently used going first), entries freed when their time is up
// without being asked for again, what they hold and let go shown in /v1/status and /metrics.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AnswerMemo, SWEEP_MS } from '../../src/edge/answer-memo.ts';
import { PURGE_MS, ResponseCache } from '../../src/upstream/cache.ts';
import { derived, envelope, MAX_DERIVATIONS, sourceMeta } from '../../src/upstream/envelope.ts';
import { heapSize } from '../../src/upstream/heap-size.ts';
import { klinesHandler } from '../fakes/candles.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

/** A value of about `kb` KB as heapSize counts it: strings of 1,000 characters. */
const valueOf = (kb: number, tag: string) => Array.from({ length: kb }, (_, i) => `${tag}${i}`.padEnd(1000, '.'));

afterEach(() => vi.useRealTimers());

describe('heapSize', () => {
  it('counts strings, arrays, objects and numbers as V8 keeps them, shared objects once', () => {
    expect(heapSize('abcdefgh')).toBe(24);
    // An array: its object, its store and the room it keeps for growing (half as many again and 16 slots).
    expect(heapSize([1, 2, 3])).toBe(32 + 16 + 8 * (3 + 1 + 16));
    expect(heapSize([0.5])).toBe(32 + 16 + 8 * 17 + 16);
    expect(heapSize({ a: 'x', b: 2 })).toBe(32 + 32 + 24);
    const shared = { s: 'x'.repeat(100) };
    expect(heapSize([shared, shared])).toBe(heapSize([1, 2]) + heapSize(shared));
    // A kline as the Binance source keeps it: about 500 bytes (V8 measured a little less); a thousand of them about half a MB.
    const kline = [1_700_000_000_000, 67_000.12, 67_100.5, 66_900.25, 67_050.75, 12.345678, 1_700_003_599_999, '823456.12345678', 4321, '6.17283900', '413728.06172839', '0'];
    expect(heapSize(Array.from({ length: 1000 }, () => [...kline]))).toBeGreaterThan(450_000);
  });

  it('stops counting at its limit', () => {
    expect(heapSize(valueOf(1000, 'a'), 10_000)).toBeLessThan(20_000);
  });
});

describe('ResponseCache: bounded in bytes', () => {
  it('keeps its entries within maxBytes, dropping the least recently used, and counts what it dropped', async () => {
    const cache = new ResponseCache({ maxEntries: 1000, maxBytes: 200_000 });
    for (const k of ['a', 'b', 'c']) await cache.getOrLoad(k, 60_000, async () => valueOf(50, k));
    await cache.getOrLoad('a', 60_000, async () => ['reloaded']); // a is used again: b is now the least recently used
    await cache.getOrLoad('d', 60_000, async () => valueOf(50, 'd'));
    const stats = cache.stats();
    expect(stats.bytes).toBeLessThanOrEqual(200_000);
    expect(stats.bytes).toBeGreaterThan(150_000);
    expect(stats).toMatchObject({ entries: 3, maxBytes: 200_000, evicted: 1, expired: 0 });
    expect((await cache.getOrLoad('a', 60_000, async () => ['x'])).cached).toBe(true);
    expect((await cache.getOrLoad('b', 60_000, async () => ['b again'])).value).toEqual(['b again']);
  });

  it('does not keep a value larger than its whole budget (its caller still gets it)', async () => {
    const cache = new ResponseCache({ maxEntries: 1000, maxBytes: 100_000 });
    const got = await cache.getOrLoad('huge', 60_000, async () => valueOf(200, 'h'));
    expect(got.value).toHaveLength(200);
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('frees entries past their time on its own clock, without a lookup', async () => {
    let now = 1_000_000;
    const cache = new ResponseCache({ maxEntries: 1000, maxBytes: 10_000_000, now: () => now });
    await cache.getOrLoad('short', 1000, async () => valueOf(10, 's'));
    await cache.getOrLoad('long', 5000, async () => valueOf(10, 'l'));
    now += 1001;
    cache.purge();
    expect(cache.stats()).toMatchObject({ entries: 1, expired: 1 });
    now += 4000;
    cache.purge();
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0, expired: 2 });
  });

  it('frees an entry when its time is up by a timer of its own, whether or not anyone asks for it again', async () => {
    const cache = new ResponseCache({ maxEntries: 1000, maxBytes: 10_000_000 });
    await cache.getOrLoad('k', 30, async () => valueOf(10, 'k'));
    expect(cache.stats().entries).toBe(1);
    cache.start(); // (the sweep behind the timers)
    await vi.waitFor(() => expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0, expired: 1 }), { timeout: PURGE_MS + 5000 });
    cache.stop();
  });
});

describe('AnswerMemo: bounded in bytes', () => {
  const source = {};
  const stamp = (ms: number) => ({ ms, iso: new Date(ms).toISOString() });
  const answer = (key: string, kb: number, until: number, now: number) =>
    envelope(derived(source, key, () => ({ text: 'y'.repeat(kb * 1024) })), [sourceMeta('p', stamp(now), true, now, until)]);

  it('stays within its budget: the expired answers go first, then all', () => {
    const now = 1_000_000;
    const memo = new AnswerMemo(undefined, { maxBytes: 80_000 });
    memo.remember('/r', 'short', answer('short', 10, now + 10, now), now);
    memo.remember('/r', 'long', answer('long', 10, now + 60_000, now), now);
    expect(memo.stats()).toMatchObject({ entries: 2 });
    expect(memo.stats().bytes).toBeGreaterThan(50_000);
    // A third does not fit: the expired one makes room.
    memo.remember('/r', 'third', answer('third', 10, now + 60_000, now + 20), now + 20);
    expect(memo.stats()).toMatchObject({ entries: 2, expired: 1, evicted: 0 });
    // A fourth: nothing has expired, so all go.
    memo.remember('/r', 'fourth', answer('fourth', 10, now + 60_000, now + 30), now + 30);
    expect(memo.stats()).toMatchObject({ entries: 1, evicted: 2 });
    expect(memo.stats().bytes).toBeLessThanOrEqual(80_000);
    expect(memo.serve('/r', 'fourth', now + 40)).toBeDefined();
  });

  it('frees expired answers every SWEEP_MS while nobody asks for them', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const memo = new AnswerMemo(undefined, { maxBytes: 1_000_000 });
    memo.start();
    memo.remember('/r', 'k', answer('k2', 1, Date.now() + 1000, Date.now()));
    expect(memo.stats().entries).toBe(1);
    vi.advanceTimersByTime(SWEEP_MS);
    expect(memo.stats()).toMatchObject({ entries: 0, bytes: 0, expired: 1 });
    memo.stop();
  });
});

describe('derived', () => {
  it(`keeps at most ${MAX_DERIVATIONS} results per provider answer, the oldest going first`, () => {
    const from = {};
    let builds = 0;
    const build = () => ({ n: ++builds });
    for (let i = 0; i < 200; i++) derived(from, `countdown ${i}`, build);
    expect(builds).toBe(200);
    derived(from, 'countdown 199', build);
    expect(builds).toBe(200);
    derived(from, 'countdown 0', build);
    expect(builds).toBe(201);
  });
});

describe('the app: CACHE_MAX_BYTES', () => {
  const t = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: url, CACHE_MAX_BYTES: String(1_048_576), METRICS_TOKEN: 'a-metrics-token-of-16+' }), { headers: TEST_KEY });
  beforeAll(() => t.fake.route('GET /api/v3/klines', klinesHandler()));
  afterAll(() => t.fake.reset());

  it('holds distinct /v1/ohlcv answers within three quarters of it, and says so in /v1/status and /metrics', async () => {
    t.fake.route('GET /api/v3/klines', klinesHandler());
    for (let limit = 580; limit < 600; limit++) expect((await t.get(`/v1/ohlcv?symbol=BTC&timeframe=1h&limit=${limit}`)).statusCode).toBe(200);
    const { cache } = (await t.get('/v1/status')).json().data;
    expect(cache.upstream.max_bytes).toBe(786_432);
    expect(cache.upstream.bytes).toBeLessThanOrEqual(786_432);
    expect(cache.upstream.bytes).toBeGreaterThan(100_000);
    expect(cache.upstream.evicted).toBeGreaterThan(0);
    expect(cache.upstream.entries).toBeLessThan(20);
    expect(cache.answers).toMatchObject({ max_bytes: 262_144 });
    const metrics = (await t.get('/metrics', { authorization: 'Bearer a-metrics-token-of-16+' })).body;
    expect(metrics).toMatch(new RegExp(`^marketgate_cache_bytes\\{store="upstream"\\} ${cache.upstream.bytes}$`, 'm'));
    expect(metrics).toMatch(/^marketgate_cache_entries\{store="upstream"\} \d+$/m);
    expect(metrics).toMatch(new RegExp(`^marketgate_cache_evictions_total\\{store="upstream",reason="size"\\} ${cache.upstream.evicted}$`, 'm'));
    expect(metrics).toMatch(/^marketgate_cache_evictions_total\{store="answers",reason="expired"\} 0$/m);
  });
});
