// The cached path's fast lane (src/edge/answer-memo.ts): an answer made only of fresh cached provider
// answers is served again without its handler, byte for byte what the handler would write (only the
// time it is served and the sources' ages move), never past the first source's TTL, never to a request
// the access checks or the rate limit refuse, and never when the data reads the clock beyond what it says.
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { AnswerMemo } from '../../src/edge/answer-memo.ts';
import { derived, envelope, sourceMeta } from '../../src/upstream/envelope.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { recordedJsonRpc } from '../fakes/recorded-rpc.ts';
import { recorded } from '../fixtures.ts';
import { useFakeUpstreamApps } from '../helpers.ts';

const TICKER = '/api/v3/ticker/24hr';
const FNG = '/fng/';
const GOPLUS = '/api/v1/token_security/8453';
const TOKEN = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';
const RISK = `/risk/v1/token-risk?chain=base&address=${TOKEN}`;

// One key per test (the per-key limit of 5 counts across tests): key-1 is env-1, and so on.
const KEYS = ['key-1', 'key-2', 'key-3', 'key-4', 'key-5'];
const keyed = (n: number) => ({ 'x-api-key': KEYS[n - 1]! });
const TEST_KEY = keyed(1);

// The usage test reads the database: a ready embedded one (a fresh DATA_DIR would run initdb inside that test, 10 to 40 s of CPU on a busy machine).
const t = useFakeUpstreamApps(['binance', 'alternative', 'goplus', 'rpc'], async (urls) => ({
  DATA_DIR: await pgliteDataDir(),
  API_KEYS: KEYS.join(','),
  KEY_RATE_LIMIT: '5',
  BINANCE_SPOT_BASE_URL: urls.binance,
  COINBASE_BASE_URL: 'http://127.0.0.1:9',
  ALTERNATIVE_ME_BASE_URL: urls.alternative,
  GOPLUS_BASE_URL: urls.goplus,
  // Interface A's answer is made of GoPlus's and the chain's (rpc:base, serving recorded answers).
  RPC_URL_BASE: urls.rpc,
  CACHE_TTL_PRICE_S: '1',
  // The fast lane alone: an answer past its TTL is a miss here, not one served while refreshed (stale-while-revalidate,
  // test/upstream/stale-while-revalidate.test.ts; the fast lane never serves those either: their sources are past their TTL).
  PRICE_STALE_S: '0',
  RISK_RATE_LIMIT: '100000',
  FREE_RATE_LIMIT: '100000',
}));

function serveAll(): void {
  t.fakes.binance.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
  t.fakes.alternative.route(`GET ${FNG}`, { body: recorded('alternativeme__fng.json') });
  const sample = recorded('goplus__token_security_evm.json');
  t.fakes.goplus.route(`GET ${GOPLUS}`, { body: { ...sample, result: { [TOKEN]: Object.values(sample.result)[0] } } });
  t.fakes.rpc.route('POST /', recordedJsonRpc);
}

/** Headers that differ per answer by design. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'content-length']);
const sameHeaders = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => !PER_ANSWER.has(k)));

/** An answer with what moves per request (the time served, the sources' ages and cached flags) set aside. */
function settled(body: string) {
  const answer = JSON.parse(body);
  const { timestamp, sources, ...extra } = answer.meta;
  expect(Date.parse(timestamp)).toBeGreaterThan(0);
  return { data: answer.data, extra, sources: sources.map(({ provider, fetched_at }: { provider: string; fetched_at: string }) => ({ provider, fetched_at })) };
}

afterEach(() => vi.useRealTimers());
afterAll(() => removeTempDirs());

describe('the cached path\'s fast lane', () => {
  it.each([
    ['a keyed paid route', '/v1/price?symbol=BTC', 'binance', TICKER],
    ['a free route', '/v1/sentiment?limit=1', 'alternative', FNG],
    ['interface A', RISK, 'goplus', GOPLUS],
  ] as const)('%s: the second answer is served without the handler, the same bytes but for its time and ages, the same headers', async (_what, url, fake, upstream) => {
    serveAll();
    const first = await t.get(url, TEST_KEY);
    expect(first.statusCode).toBe(200);
    expect(t.app.services.answers.size).toBe(1);
    const handlerRuns = vi.spyOn(t.app.services.cache, 'getOrLoad');
    const second = await t.get(url, TEST_KEY);
    expect(second.statusCode).toBe(200);
    expect(handlerRuns).not.toHaveBeenCalled();
    handlerRuns.mockRestore();
    expect(t.fakes[fake].calls(upstream)).toHaveLength(1);
    expect(settled(second.body)).toEqual(settled(first.body));
    expect(sameHeaders(second.headers)).toEqual(sameHeaders(first.headers));
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    const meta = second.json().meta;
    expect(meta.sources).toEqual(settled(first.body).sources.map(() => expect.objectContaining({ cached: true, age_s: expect.any(Number) })));
    // The same serialisation as the full path: a reply the full path made from the cache right now reads alike.
    t.app.services.answers.clear();
    const full = await t.get(url, TEST_KEY);
    expect(Object.keys(JSON.parse(full.body).meta)).toEqual(Object.keys(meta));
    expect(Object.keys(JSON.parse(full.body).meta.sources[0])).toEqual(Object.keys(meta.sources[0]));
  });

  it('is never served past the source\'s TTL for the route (CACHE_TTL_PRICE_S=1): the upstream is asked again', async () => {
    serveAll();
    await t.get('/v1/price?symbol=BTC', keyed(2));
    await t.get('/v1/price?symbol=BTC', keyed(2));
    expect(t.fakes.binance.calls(TICKER)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1100));
    const later = await t.get('/v1/price?symbol=BTC', keyed(2));
    expect(later.statusCode).toBe(200);
    expect(t.fakes.binance.calls(TICKER)).toHaveLength(2);
    expect(later.json().meta.sources[0]).toMatchObject({ cached: false, age_s: 0 });
  });

  it('only behind the access checks and the limit: no key, a wrong key → 401; a key\'s calls are counted and limited as on the full path', { timeout: 30_000 }, async () => {
    serveAll();
    const url = '/v1/price?symbol=BTC';
    expect((await t.get(url, keyed(3))).statusCode).toBe(200);
    expect(t.app.services.answers.size).toBe(1);
    expect((await t.get(url, {})).statusCode).toBe(401);
    expect((await t.get(url, { 'x-api-key': 'wrong' })).statusCode).toBe(401);
    for (let i = 2; i <= 5; i++) expect((await t.get(url, keyed(3))).statusCode).toBe(200);
    const limited = await t.get(url, keyed(3));
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatch(/^rate limit exceeded: 5 requests per minute per API key/);
    expect(limited.headers['retry-after']).toBeTruthy();
    // Five calls of the key reached the route, four of them through the fast lane: all five are its usage.
    await t.app.services.db.ready();
    const usage = await t.app.services.usage.usageOf('env-3');
    expect(usage.today_by_route['/v1/price']).toBe(5);
    expect(t.fakes.binance.calls(TICKER)).toHaveLength(1);
  });

  it.each([
    ['a free route', '/v1/sentiment?limit=1'],
    ['interface A', RISK],
  ])('%s: a URL with a parameter the route does not take, or one given twice, is refused every time, never served or remembered', async (_what, url) => {
    serveAll();
    expect((await t.get(url)).statusCode).toBe(200);
    expect((await t.get(url)).statusCode).toBe(200);
    expect(t.app.services.answers.size).toBe(1);
    const repeated = url.includes('limit=1') ? `${url}&limit=1` : `${url}&chain=base`;
    for (const bad of [`${url}&bogus=1`, `${url}&bogus=1`, repeated, repeated]) {
      const res = await t.get(bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error, bad).toMatch(/unknown query parameter 'bogus'|was given 2 times/);
    }
    expect(t.app.services.answers.size).toBe(1);
    expect((await t.get(url)).statusCode).toBe(200);
  });

  it('HEAD takes the full path (and sends no body)', async () => {
    serveAll();
    await t.get('/v1/sentiment');
    const head = await t.app.inject({ method: 'HEAD', url: '/v1/sentiment' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it('sentiment\'s countdown reads the clock: every answer, fast lane or not, counts down with the answer\'s age', async () => {
    serveAll();
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    const seen = new Set<number>();
    for (let ms = 0; ms <= 3000; ms += 50) {
      vi.setSystemTime(start + ms);
      const { data, meta } = (await t.get('/v1/sentiment')).json();
      // time_until_update 33432 s in the recorded answer.
      expect(data.current.next_update_in_s, `at +${ms} ms (age ${meta.sources[0].age_s})`).toBe(Math.round(33432 - meta.sources[0].age_s));
      seen.add(data.current.next_update_in_s);
    }
    expect([...seen].sort()).toEqual([33429, 33430, 33431, 33432]);
    expect(t.fakes.alternative.calls(FNG)).toHaveLength(1);
  });
});

describe('AnswerMemo', () => {
  const stamp = (ms: number) => ({ ms, iso: new Date(ms).toISOString() });
  const source = {};
  const fresh = (data: object, until: number | undefined, now: number) => envelope(derived(source, JSON.stringify(data), () => data), [sourceMeta('p', stamp(now - 500), true, now, until)]);

  it('keeps only answers made of derived data whose every source says until when it holds', () => {
    const now = 1_000_000;
    const memo = new AnswerMemo();
    memo.remember('/r', 'plain', envelope({ a: 1 }, [sourceMeta('p', stamp(now), true, now, now + 1000)]), now);
    memo.remember('/r', 'no-until', fresh({ b: 1 }, undefined, now), now);
    memo.remember('/r', 'no-sources', envelope(derived(source, 'x', () => ({ c: 1 })), []), now);
    memo.remember('/r', 'stale', fresh({ d: 1 }, now, now), now);
    expect(memo.size).toBe(0);
    memo.remember('/r', 'kept', fresh({ e: 1 }, now + 1000, now), now);
    expect(memo.size).toBe(1);
  });

  it('serves until the first source stops holding, with the time and ages written for now', () => {
    const now = 1_000_000;
    const memo = new AnswerMemo();
    memo.remember('/r', 'k', fresh({ e: 2 }, now + 1000, now), now);
    const served = JSON.parse(memo.serve('/r', 'k', now + 999)!.body.toString('utf8'));
    expect(served).toEqual({ data: { e: 2 }, meta: { timestamp: new Date(now + 999).toISOString(), sources: [{ provider: 'p', fetched_at: new Date(now - 500).toISOString(), cached: true, age_s: 1.5 }] } });
    expect(memo.serve('/r', 'k', now + 1000)).toBeUndefined();
    expect(memo.size).toBe(0);
  });

  it('a large answer is its data\'s bytes, made once, and this millisecond\'s, the same JSON as a small one', () => {
    const now = 1_000_000;
    const memo = new AnswerMemo();
    const big = { text: 'é'.repeat(3000) };
    memo.remember('/r', 'big', fresh(big, now + 1000, now), now);
    const served = memo.serve('/r', 'big', now + 100)!;
    expect(served.contentLength).toBe(String(served.body.length));
    expect(JSON.parse(served.body.toString('utf8'))).toEqual({
      data: big,
      meta: { timestamp: new Date(now + 100).toISOString(), sources: [{ provider: 'p', fetched_at: new Date(now - 500).toISOString(), cached: true, age_s: 0.6 }] },
    });
  });

  it('within one millisecond the answer written is shared; the next millisecond writes its own time and ages', () => {
    const now = 1_000_000;
    const memo = new AnswerMemo();
    memo.remember('/r', 'k', fresh({ e: 3 }, now + 5000, now), now);
    const first = memo.serve('/r', 'k', now + 10)!;
    expect(memo.serve('/r', 'k', now + 10)).toBe(first);
    expect(first.contentLength).toBe(String(first.body.length));
    const next = memo.serve('/r', 'k', now + 1011)!;
    expect(next).not.toBe(first);
    const meta = JSON.parse(next.body.toString('utf8')).meta;
    expect(meta.timestamp).toBe(new Date(now + 1011).toISOString());
    expect(meta.sources[0].age_s).toBe(1.5);
    // An earlier answer is never changed by a later one (a socket may still be writing it).
    expect(JSON.parse(first.body.toString('utf8')).meta.timestamp).toBe(new Date(now + 10).toISOString());
  });

  it('an answer that says its data holds only until some time is not served after it', () => {
    const now = 1_000_000;
    const memo = new AnswerMemo();
    const answer = envelope(derived(source, 'clock', () => ({ f: 1 })), [sourceMeta('p', stamp(now), true, now, now + 60_000)], { note: 'x' }, now + 300);
    memo.remember('/r', 'k', answer, now);
    expect(JSON.parse(memo.serve('/r', 'k', now + 299)!.body.toString('utf8')).meta.note).toBe('x');
    expect(memo.serve('/r', 'k', now + 300)).toBeUndefined();
  });
});
