// The guard every upstream call runs under: circuit breakers per provider, the hedged fallback of
// /v1/price, and the same guard serving a client other than the HTTP pool (viem, through fetchFn).
import { createPublicClient, http as viemHttp } from 'viem';
import { mainnet } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/lib/errors.ts';
import { UpstreamGuard } from '../../src/upstream/guard.ts';
import { hedge } from '../../src/upstream/hedge.ts';
import { JSON_RPC } from '../../src/upstream/json-rpc.ts';
import { ResponseCache } from '../../src/upstream/cache.ts';
import { HttpClient } from '../../src/upstream/http-client.ts';
import { sourceContext, upstreamCause } from '../../src/sources/define-source.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { sweepRoute } from '../fakes/sweep.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

const TICKER = '/api/v3/ticker/24hr';
const CB_TICKER = '/products/BTC-USD/ticker';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('circuit breaker per provider', () => {
  const fake = new FakeUpstream();
  let t: TestApp;
  beforeAll(async () => {
    await fake.start();
    t = await makeApp(
      { BINANCE_SPOT_BASE_URL: fake.url, BREAKER_FAILURES: '3', BREAKER_COOLDOWN_MS: '600', FREE_RATE_LIMIT: '100000', UPSTREAM_DEADLINE_MS: '300' },
      undefined,
      [sweepRoute],
    );
  });
  afterAll(async () => {
    await t.app.close();
    await fake.stop();
  });
  const call = () => t.app.inject({ url: '/v1/test-sweep?provider=binance' });
  const binanceStatus = async () =>
    ((await t.app.inject({ url: '/v1/status' })).json().data.upstreams as { provider: string; status: string; breaker: Record<string, unknown> }[]).find(
      (u) => u.provider === 'binance',
    )!;

  it('opens after BREAKER_FAILURES failures: fails fast with 503 + Retry-After without calling; one probe after the cool-down closes it', async () => {
    fake.reset();
    t.app.services.guard.reset();
    fake.route(`GET ${TICKER}`, { status: 500, body: 'down' });
    for (let i = 0; i < 3; i++) expect((await call()).statusCode).toBe(502);
    expect(fake.calls(TICKER)).toHaveLength(3);

    const started = performance.now();
    const paused = await call();
    expect(performance.now() - started).toBeLessThan(50);
    expect(paused.statusCode).toBe(503);
    expect(paused.headers['retry-after']).toBe('1');
    expect(paused.json()).toEqual({
      error: 'binance is failing (3 failures in a row, last: binance answered HTTP 500); calls are paused, retry in 1 s',
      source: 'binance',
    });
    expect(fake.calls(TICKER)).toHaveLength(3);
    expect(await binanceStatus()).toMatchObject({
      status: 'failing',
      breaker: { state: 'open', consecutive_failures: 3, opens_after: 3, cooldown_s: 0.6, opened_at: expect.any(String), retry_after_s: 1 },
    });

    // After the cool-down one probe is let through; it fails, so the circuit opens again.
    await sleep(650);
    expect((await call()).statusCode).toBe(502);
    expect(fake.calls(TICKER)).toHaveLength(4);
    expect((await call()).statusCode).toBe(503);
    expect(fake.calls(TICKER)).toHaveLength(4);

    // The next probe succeeds: closed again, calls flow.
    await sleep(650);
    fake.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr.json') });
    expect((await call()).statusCode).toBe(200);
    expect((await binanceStatus()).breaker).toMatchObject({ state: 'closed', consecutive_failures: 0, retry_after_s: null });
    t.app.services.cache.clear();
    expect((await call()).statusCode).toBe(200);
    expect(fake.calls(TICKER)).toHaveLength(6);
  });

  it('an answer such as "unknown symbol" is not a failure', async () => {
    fake.reset();
    t.app.services.guard.reset();
    fake.route(`GET ${TICKER}`, { status: 400, body: recorded('binance__error_invalid_symbol.json') });
    for (let i = 0; i < 5; i++) {
      t.app.services.cache.clear();
      expect((await call()).statusCode).toBe(404);
    }
    expect(fake.calls(TICKER)).toHaveLength(5);
    expect((await binanceStatus()).breaker).toMatchObject({ state: 'closed', consecutive_failures: 0 });
  });
});

describe('/v1/price hedges Binance with Coinbase', () => {
  const fake = new FakeUpstream();
  const coinbase = new FakeUpstream();
  let t: TestApp;
  beforeAll(async () => {
    await Promise.all([fake.start(), coinbase.start()]);
    t = await makeApp({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: fake.url, COINBASE_BASE_URL: coinbase.url, HEDGE_DELAY_MS: '150', UPSTREAM_DEADLINE_MS: '1500' });
  });
  afterAll(async () => {
    await t.app.close();
    await Promise.all([fake.stop(), coinbase.stop()]);
  });
  const price = () => t.app.inject({ url: '/v1/price?symbol=BTC', headers: TEST_KEY });
  const fresh = () => {
    fake.reset();
    coinbase.reset();
    t.app.services.cache.clear();
    t.app.services.guard.reset();
  };

  it('Binance hanging: Coinbase answers after about the hedge delay, not after a timeout', async () => {
    fresh();
    fake.route(`GET ${TICKER}`, { hang: true });
    coinbase.route(`GET ${CB_TICKER}`, { body: recorded('coinbase__ticker.json') });
    const started = performance.now();
    const res = await price();
    const elapsed = performance.now() - started;
    expect(res.statusCode).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(150 + 300);
    expect(res.json().meta.fallback).toEqual({ from: 'binance', to: 'coinbase', reason: 'binance had not answered after 150 ms' });
    expect(res.json().data).toMatchObject({ symbol: 'BTC/USD', currency: 'USD' });
  });

  it('Binance slow but first: its answer wins, no fallback', async () => {
    fresh();
    fake.route(`GET ${TICKER}`, { delayMs: 250, body: recorded('binance__spot_ticker_24hr.json') });
    coinbase.route(`GET ${CB_TICKER}`, { delayMs: 900, body: recorded('coinbase__ticker.json') });
    const res = await price();
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.fallback).toBeUndefined();
    expect(res.json().data.currency).toBe('USDT');
  });

  it('Binance failing fast: Coinbase is asked at once', async () => {
    fresh();
    fake.route(`GET ${TICKER}`, { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    coinbase.route(`GET ${CB_TICKER}`, { body: recorded('coinbase__ticker.json') });
    const started = performance.now();
    const res = await price();
    expect(performance.now() - started).toBeLessThan(120);
    expect(res.json().meta.fallback.reason).toBe('binance answered HTTP 451');
  });

  it('both hanging: one deadline, not two, then 502 naming both', async () => {
    fresh();
    fake.route(`GET ${TICKER}`, { hang: true });
    coinbase.route(`GET ${CB_TICKER}`, { hang: true });
    const started = performance.now();
    const res = await price();
    const elapsed = performance.now() - started;
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'binance did not answer within 1500 ms; fallback coinbase did not answer within 1500 ms', source: 'binance' });
    // Coinbase started 150 ms after Binance, so it times out 150 ms after it.
    expect(elapsed).toBeLessThan(1500 + 150 + 400);
  });

  it('Binance paused by its breaker: Coinbase at once, and the reason says so', async () => {
    fresh();
    fake.route(`GET ${TICKER}`, { status: 500, body: 'x' });
    coinbase.route(`GET ${CB_TICKER}`, { body: recorded('coinbase__ticker.json') });
    for (let i = 0; i < 5; i++) {
      t.app.services.cache.clear();
      await price();
    }
    t.app.services.cache.clear();
    const res = await price();
    expect(res.statusCode).toBe(200);
    expect(fake.calls(TICKER)).toHaveLength(5);
    expect(res.json().meta.fallback.reason).toMatch(/^binance is failing \(5 failures in a row, last: binance answered HTTP 500\); calls are paused/);
  });
});

describe('hedge()', () => {
  const after = (ms: number, v: string | Error) => () => new Promise<string>((res, rej) => setTimeout(() => (v instanceof Error ? rej(v) : res(v)), ms));
  const fail = (source: string) => new UpstreamError(source, 'http', `${source} answered HTTP 500`);

  // With what each case reports to the metrics (nothing when the fallback was not asked).
  it.each([
    ['primary fast', after(10, 'p'), after(10, 'f'), { value: 'p' }, []],
    ['primary fails fast', after(5, fail('p')), after(10, 'f'), { value: 'f', fallback: { from: 'p', to: 'f', reason: 'p answered HTTP 500' } }, ['failover']],
    ['primary slow, fallback faster', after(200, 'p'), after(10, 'f'), { value: 'f', fallback: { from: 'p', to: 'f', reason: 'p had not answered after 50 ms' } }, ['hedge_won']],
    ['primary slow, fallback fails, primary answers', after(120, 'p'), after(10, fail('f')), { value: 'p' }, ['primary_won']],
    ['primary slow then fails, fallback answers later', after(80, fail('p')), after(100, 'f'), { value: 'f', fallback: { from: 'p', to: 'f', reason: 'p answered HTTP 500' } }, ['hedge_won']],
  ] as const)('%s', async (_name, p, f, expected, recorded) => {
    const outcomes: string[] = [];
    const recorder = { hedge: (primary: string, fallback: string, outcome: string) => outcomes.push(`${primary}>${fallback}:${outcome}`) };
    expect(await hedge({ source: 'p', run: p }, { source: 'f', run: f }, 50, recorder)).toEqual(expected);
    expect(outcomes).toEqual(recorded.map((o) => `p>f:${o}`));
  });

  it('both failing is reported as failed', async () => {
    const outcomes: string[] = [];
    await expect(hedge({ source: 'p', run: after(5, fail('p')) }, { source: 'f', run: after(5, fail('f')) }, 50, { hedge: (_p, _f, o) => outcomes.push(o) })).rejects.toThrow(
      'p answered HTTP 500; fallback f answered HTTP 500',
    );
    expect(outcomes).toEqual(['failed']);
  });

  it('an answer of the primary that is not a failure (404) ends it without the fallback', async () => {
    let asked = false;
    const notFound = Object.assign(new Error('no such pair'), { statusCode: 404 });
    await expect(hedge({ source: 'p', run: after(5, notFound) }, { source: 'f', run: async () => ((asked = true), 'f') }, 50)).rejects.toBe(notFound);
    expect(asked).toBe(false);
  });
});

describe('the guard serves other clients too: viem through fetchFn', () => {
  const rpc = new FakeUpstream();
  const guard = new UpstreamGuard({ deadlineMs: 300, breakerFailures: 2, breakerCooldownMs: 60_000 });
  const http = new HttpClient({ connectTimeoutMs: 1000, maxBodyBytes: 1 << 20, connections: 2, userAgent: 'test' });
  const ctx = sourceContext('rpc:ethereum', {}, { guard, http, cache: new ResponseCache({ maxEntries: 10, maxBytes: 1 << 20 }) });
  const client = () => createPublicClient({ chain: mainnet, transport: viemHttp(rpc.url, { fetchFn: ctx.fetchFn(JSON_RPC), retryCount: 0 }) });
  beforeAll(() => rpc.start());
  afterAll(async () => {
    await http.close();
    await rpc.stop();
  });
  const answer = (result: unknown) => (req: { body: string }) => ({ body: { jsonrpc: '2.0', id: JSON.parse(req.body).id, result } });

  it('a result passes through, and the call shows in the health figures', async () => {
    rpc.route('POST /', answer('0x10'));
    expect(await client().getBlockNumber({ cacheTime: 0 })).toBe(16n);
    expect(guard.report()['rpc:ethereum']).toMatchObject({ status: 'ok', recent: { calls: 1, failures: 0 } });
  });

  it('a JSON-RPC error is a failure of rpc:<chain>; the deadline cuts a hanging node; then the breaker opens', async () => {
    rpc.route('POST /', (req) => ({ body: { jsonrpc: '2.0', id: JSON.parse(req.body).id, error: { code: -32603, message: 'internal error' } } }));
    const err1 = await client().getBlockNumber({ cacheTime: 0 }).catch((e) => e);
    expect(upstreamCause(err1)?.message).toBe('rpc:ethereum error: JSON-RPC error -32603 (internal error)');

    rpc.route('POST /', { hang: true });
    const started = performance.now();
    const err2 = await client().getBlockNumber({ cacheTime: 0 }).catch((e) => e);
    expect(performance.now() - started).toBeLessThan(300 + 300);
    expect(upstreamCause(err2)?.message).toBe('rpc:ethereum did not answer within 300 ms');

    const err3 = await client().getBlockNumber({ cacheTime: 0 }).catch((e) => e);
    expect(upstreamCause(err3)).toMatchObject({ failure: 'circuit_open', statusCode: 503, source: 'rpc:ethereum' });
    expect(guard.report()['rpc:ethereum']!.breaker.state).toBe('open');
  });
});
