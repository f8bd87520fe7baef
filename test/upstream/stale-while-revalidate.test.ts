// Stale-while-revalidate (src/upstream/cache.ts, src/catalog/staleness.ts): a route that declares a maximum
// staleness is answered at once from an upstream answer past its TTL (saying so: cached, its real age_s) while
// one load refreshes it in the background, started only once the TTL has passed; past the staleness it waits
// for the upstream as before; a route that declares none never serves an answer past its TTL, even one another
// route would. Two instances on one Redis refresh a key once between them. The fake exchange holds its answer
// until the test releases it, so "answered at once" is that the answers arrive while the refresh is held.
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../src/catalog/route.ts';
import { envelope } from '../../src/upstream/envelope.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV } from '../helpers.ts';
import { startRedis, type TestRedis } from '../servers/redis.ts';

const TICKER = '/api/v3/ticker/24hr';
const TTL_S = 2;
const STALE_S = 30;

/** A free test route on the same cached ticker as /v1/price, declaring no staleness. */
const liveTicker = defineRoute({
  path: '/v1/test-live-ticker',
  summary: 'test',
  description: 'Test-only route reading the ticker /v1/price reads, without a staleness.',
  tag: 'Test',
  access: 'free',
  query: z.object({ symbol: z.string() }),
  data: z.object({ price: z.number() }),
  handler: async (req, ctx) => {
    const t = await ctx.sources.binanceSpot.ticker24h(req.query.symbol);
    return envelope({ price: t.data.lastPrice }, [t.meta]);
  },
});

const exchange = new FakeUpstream();
/** While set, the fake exchange holds every ticker answer until it resolves. */
let held: Promise<void> | undefined;
let release: () => void = () => {};
/** Set just before the held answers are let go: an answer that arrives with it false did not wait for them. */
let released = false;

function hold(): void {
  released = false;
  held = new Promise((r) => (release = () => ((released = true), (held = undefined), r())));
}

let redis: TestRedis;
const apps: FastifyInstance[] = [];
const bases: string[] = [];

beforeAll(async () => {
  await exchange.start();
  exchange.route(`GET ${TICKER}`, async () => {
    await held;
    return { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') };
  });
  redis = await startRedis();
  const env = {
    ...TEST_KEY_ENV,
    BINANCE_SPOT_BASE_URL: exchange.url,
    CACHE_TTL_PRICE_S: String(TTL_S),
    PRICE_STALE_S: String(STALE_S),
    FREE_RATE_LIMIT: '100000',
  };
  // 0: alone; 1 and 2: two instances on one Redis; 3: alone, with a staleness of 1 s.
  const extras: Record<string, string>[] = [{}, { REDIS_URL: redis.url }, { REDIS_URL: redis.url }, { PRICE_STALE_S: '1' }];
  for (const extra of extras) {
    const { app } = await makeApp({ ...env, ...extra }, undefined, [liveTicker]);
    await app.listen({ host: '127.0.0.1', port: 0 });
    apps.push(app);
    bases.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  }
}, 60_000);

afterAll(async () => {
  release();
  for (const app of apps) await app.close();
  await redis?.stop();
  await exchange.stop();
});

interface Answer {
  status: number;
  cached: boolean;
  ageS: number;
  fetchedAt: string;
  /** Whether the held upstream answers had been let go when this answer arrived. */
  afterRelease: boolean;
}

async function get(base: string, path: string): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { headers: TEST_KEY });
  const body = (await res.json()) as { meta: { sources: { cached: boolean; age_s: number; fetched_at: string }[] } };
  const s = body.meta.sources[0]!;
  return { status: res.status, cached: s.cached, ageS: s.age_s, fetchedAt: s.fetched_at, afterRelease: released };
}

const calls = (symbol: string) => exchange.calls(TICKER).filter((r) => r.query.get('symbol') === symbol).length;

/** Waits until `check` holds (polled), bounded by the test's own timeout. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

/** Waits until the answer fetched at `fetchedAt` is past its TTL (the event these tests start from). */
const pastTtl = (fetchedAt: string, extraS = 0) => until(() => Date.now() > Date.parse(fetchedAt) + (TTL_S + extraS) * 1000 + 100);

describe('one instance', () => {
  it('past its TTL, within the staleness: every request answered at once with the real age, one refresh in the background', async () => {
    const [base] = bases as [string];
    const first = await get(base, '/v1/price?symbol=BTC&asset_class=crypto');
    expect(first).toMatchObject({ status: 200, cached: false });
    expect(calls('BTCUSDT')).toBe(1);
    // Within the TTL: no refresh.
    expect(await get(base, '/v1/price?symbol=BTC&asset_class=crypto')).toMatchObject({ status: 200, cached: true });
    expect(calls('BTCUSDT')).toBe(1);

    await pastTtl(first.fetchedAt);
    hold();
    const stale = await Promise.all(Array.from({ length: 20 }, () => get(base, '/v1/price?symbol=BTC&asset_class=crypto')));
    for (const a of stale) {
      expect(a).toMatchObject({ status: 200, cached: true, fetchedAt: first.fetchedAt, afterRelease: false });
      expect(a.ageS).toBeGreaterThan(TTL_S);
    }
    // One refresh, and it is the one still held.
    await until(() => calls('BTCUSDT') === 2);
    release();
    // Refreshed: fresh again, and the 20 stale answers cost one upstream call.
    let refreshed = first;
    await until(async () => (refreshed = await get(base, '/v1/price?symbol=BTC&asset_class=crypto')).ageS < TTL_S);
    expect(calls('BTCUSDT')).toBe(2);

    // A route without a staleness, on the same ticker past its TTL, is not given the stale answer: it waits for
    // the load it starts, while /v1/price is answered at once from the stale one (and starts no other load).
    await pastTtl(refreshed.fetchedAt);
    hold();
    const live = get(base, '/v1/test-live-ticker?symbol=BTCUSDT');
    await until(() => calls('BTCUSDT') === 3);
    expect(await get(base, '/v1/price?symbol=BTC&asset_class=crypto')).toMatchObject({ status: 200, cached: true, fetchedAt: refreshed.fetchedAt, afterRelease: false });
    release();
    expect(await live).toMatchObject({ status: 200, cached: false, afterRelease: true });
    expect(calls('BTCUSDT')).toBe(3);
  }, 30_000);

  it('past the staleness: the request waits for the upstream, as a miss does', async () => {
    const base = bases[3]!; // PRICE_STALE_S=1
    const first = await get(base, '/v1/price?symbol=ETH&asset_class=crypto');
    expect(first).toMatchObject({ status: 200, cached: false });
    const before = calls('ETHUSDT');
    await pastTtl(first.fetchedAt, 1);
    hold();
    const waiting = get(base, '/v1/price?symbol=ETH&asset_class=crypto');
    await until(() => calls('ETHUSDT') === before + 1);
    release();
    expect(await waiting).toMatchObject({ status: 200, cached: false, afterRelease: true });
  }, 30_000);

  it('publishes each route\'s staleness: max_stale_s in /v1/status, x-max-stale-s in OpenAPI (none for on-chain state)', async () => {
    const status = (await (await fetch(`${bases[0]}/v1/status`)).json()) as { data: { endpoints: { path: string; max_stale_s: number | null }[] } };
    const of = (path: string) => status.data.endpoints.find((e) => e.path === path)?.max_stale_s;
    expect(of('/v1/price')).toBe(STALE_S);
    expect(of('/v1/ohlcv')).toBe(30);
    expect(of('/v1/sentiment')).toBe(300);
    for (const path of ['/v1/chain-balance', '/v1/chain-nonce', '/v1/chain-tx', '/v1/chain-token-balance', '/v1/gas', '/v1/usage']) expect(of(path)).toBeNull();
    const openapi = (await (await fetch(`${bases[0]}/openapi.json`)).json()) as { paths: Record<string, { get: Record<string, unknown> }> };
    expect(openapi.paths['/v1/price']!.get['x-max-stale-s']).toBe(STALE_S);
    expect(openapi.paths['/v1/chain-balance']!.get).not.toHaveProperty('x-max-stale-s');
    expect(openapi.paths['/risk/v1/token-risk']!.get).not.toHaveProperty('x-max-stale-s');
  });
});

describe('two instances on one Redis', () => {
  it('a key past its TTL is answered at once by both, and refreshed by one upstream call between them', async () => {
    const [a, b] = [bases[1]!, bases[2]!];
    const first = await get(a, '/v1/price?symbol=SOL&asset_class=crypto');
    expect(first).toMatchObject({ status: 200, cached: false });
    expect(await get(b, '/v1/price?symbol=SOL&asset_class=crypto')).toMatchObject({ status: 200, cached: true }); // from Redis
    expect(calls('SOLUSDT')).toBe(1);

    await pastTtl(first.fetchedAt);
    hold();
    const stale = await Promise.all(Array.from({ length: 20 }, (_, i) => get(i % 2 ? b : a, '/v1/price?symbol=SOL&asset_class=crypto')));
    for (const s of stale) {
      expect(s).toMatchObject({ status: 200, cached: true, fetchedAt: first.fetchedAt, afterRelease: false });
      expect(s.ageS).toBeGreaterThan(TTL_S);
    }
    await until(() => calls('SOLUSDT') === 2);
    release();
    // Both serve the refreshed answer; the other instance took it from Redis rather than loading it.
    await until(async () => (await get(a, '/v1/price?symbol=SOL&asset_class=crypto')).ageS < TTL_S);
    await until(async () => (await get(b, '/v1/price?symbol=SOL&asset_class=crypto')).ageS < TTL_S);
    expect(calls('SOLUSDT')).toBe(2);
  }, 30_000);
});
