// Prometheus metrics: /metrics read with an independent text-format parser, and the counters checked to
// move as requests are made — routes, cache layers, upstream outcomes, breakers, fallbacks, rate limits,
// the payment and backend calls — with bounded labels only; the token; the separate METRICS_PORT listener.
import { createServer, type Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScrape, type Scrape } from '../fakes/prometheus-text.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApps } from '../helpers.ts';

const TOKEN = 'metrics-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const TICKER = '/api/v3/ticker/24hr';
const CB_TICKER = '/products/BTC-USD/ticker';
const FNG = '/fng/';
const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';

async function scrape(app: FastifyInstance): Promise<Scrape> {
  const res = await app.inject({ url: '/metrics', headers: AUTH });
  expect(res.statusCode).toBe(200);
  return parseScrape(res.body);
}

/** How much each named sample moved while `act` ran. */
async function moved(app: FastifyInstance, act: () => Promise<unknown>, probes: Record<string, [string, Record<string, string>?]>): Promise<Record<string, number>> {
  const before = await scrape(app);
  await act();
  const after = await scrape(app);
  return Object.fromEntries(Object.entries(probes).map(([k, [name, labels]]) => [k, after.value(name, labels) - before.value(name, labels)]));
}

const route = (path: string, statusClass: string, method = 'GET') => ({ route: path, method, status_class: statusClass });

describe('metrics off (the default)', () => {
  it('serves no /metrics and records nothing', async () => {
    const { app } = await makeApp();
    expect(app.metrics.enabled).toBe(false);
    expect((await app.inject({ url: '/metrics', headers: AUTH })).statusCode).toBe(404);
    expect(await app.metrics.exposition()).toBe('');
    await app.close();
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  const t = useFakeUpstreamApps(['binance', 'coinbase', 'alternative'], (u) => ({
    ...TEST_KEY_ENV,
    METRICS_TOKEN: TOKEN,
    BINANCE_SPOT_BASE_URL: u.binance,
    COINBASE_BASE_URL: u.coinbase,
    ALTERNATIVE_ME_BASE_URL: u.alternative,
    FREE_RATE_LIMIT: '100000',
    BREAKER_FAILURES: '2',
    // Long enough that a fallback is never asked by accident on a slow machine.
    UPSTREAM_DEADLINE_MS: '1000',
    // A price stays cached for the whole of a test however slowly it runs (every test starts with the cache cleared).
    CACHE_TTL_PRICE_S: '3600',
    HEDGE_DELAY_MS: '300',
  }));

  it('requires the bearer token: 401 { error } with WWW-Authenticate without it or with another', async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN, 'Bearer']) {
      const res = await t.app.inject({ url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toEqual({ error: 'metrics require a bearer token (Authorization: Bearer <METRICS_TOKEN>)' });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    }
    const ok = await t.app.inject({ url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const s = parseScrape(ok.body);
    expect(s.value('marketgate_build_info', { version: '1.0.0' })).toBe(1);
    // Node's process metrics, under the same prefix.
    expect(s.types.get('marketgate_process_cpu_user_seconds_total')).toBe('counter');
    expect(s.types.get('marketgate_http_request_duration_seconds')).toBe('histogram');
  });

  it('is not published: absent from OpenAPI, the catalog and llms.txt', async () => {
    expect(Object.keys((await t.get('/openapi.json')).json().paths)).not.toContain('/metrics');
    expect(JSON.stringify((await t.get('/v1/status')).json())).not.toContain('/metrics');
    expect((await t.get('/llms.txt')).body).not.toContain('/metrics');
  });

  // Also when Binance's fake answers after the hedge delay, as on a loaded machine (400 ms plays it): Coinbase is then asked too.
  it.each([0, 400])('a cached request counts on its route, as an l1 cache hit, and makes one upstream call (Binance answering after %i ms)', async (delayMs) => {
    t.fakes.binance.route(`GET ${TICKER}`, { delayMs, body: recorded('binance__spot_ticker_24hr.json') });
    const d = await moved(
      t.app,
      async () => {
        expect((await t.get('/v1/price?symbol=BTC', TEST_KEY)).statusCode).toBe(200);
        expect((await t.get('/v1/price?symbol=BTC', TEST_KEY)).json().meta.sources[0].cached).toBe(true);
      },
      {
        requests: ['marketgate_http_requests_total', route('/v1/price', '2xx')],
        timed: ['marketgate_http_request_duration_seconds_count', route('/v1/price', '2xx')],
        l1: ['marketgate_cache_hits_total', { layer: 'l1' }],
        misses: ['marketgate_cache_misses_total'],
        ok: ['marketgate_upstream_calls_total', { provider: 'binance', outcome: 'ok' }],
        upstreamTimed: ['marketgate_upstream_call_duration_seconds_count', { provider: 'binance' }],
        // Binance's fake answering after HEDGE_DELAY_MS (a loaded machine) asks Coinbase too: a miss of its own, counted here.
        hedgedPrimaryWon: ['marketgate_upstream_hedges_total', { provider: 'binance', fallback: 'coinbase', outcome: 'primary_won' }],
        hedgedFailed: ['marketgate_upstream_hedges_total', { provider: 'binance', fallback: 'coinbase', outcome: 'failed' }],
      },
    );
    const { hedgedPrimaryWon, hedgedFailed, ...counted } = d;
    expect(hedgedFailed).toBe(0);
    expect({ ...counted, misses: counted.misses! - hedgedPrimaryWon! }).toEqual({ requests: 2, timed: 2, l1: 1, misses: 1, ok: 1, upstreamTimed: 1 });
    expect(t.fakes.binance.calls(TICKER)).toHaveLength(1);
  });

  it('a burst of one request shares one upstream call: the others are coalesced hits', async () => {
    t.fakes.alternative.route(`GET ${FNG}`, { delayMs: 100, body: recorded('alternativeme__fng.json') });
    const d = await moved(
      t.app,
      async () => {
        const answers = await Promise.all(Array.from({ length: 5 }, () => t.get('/v1/sentiment')));
        expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
      },
      {
        coalesced: ['marketgate_cache_hits_total', { layer: 'coalesced' }],
        l1: ['marketgate_cache_hits_total', { layer: 'l1' }],
        misses: ['marketgate_cache_misses_total'],
        requests: ['marketgate_http_requests_total', route('/v1/sentiment', '2xx')],
      },
    );
    expect(d).toEqual({ coalesced: 4, l1: 0, misses: 1, requests: 5 });
    expect(t.fakes.alternative.calls(FNG)).toHaveLength(1);
  });

  it.each([
    ['an HTTP error status', { status: 500, body: 'down' }, 'http'],
    ['no answer within the deadline', { delayMs: 1500, body: {} }, 'timeout'],
    ['HTTP 429', { status: 429, headers: { 'retry-after': '7' }, body: {} }, 'rate_limited'],
    ['invalid JSON', { body: '{"data":[' }, 'malformed'],
    ['a reset connection', { reset: true }, 'reset'],
  ] as const)('an upstream failure counts with its kind: %s → %s', async (_name, reply, outcome) => {
    t.fakes.alternative.route(`GET ${FNG}`, reply);
    const d = await moved(t.app, () => t.get('/v1/sentiment'), {
      failure: ['marketgate_upstream_calls_total', { provider: 'alternative.me', outcome }],
      ok: ['marketgate_upstream_calls_total', { provider: 'alternative.me', outcome: 'ok' }],
      answered5xx: ['marketgate_http_requests_total', route('/v1/sentiment', '5xx')],
      timed: ['marketgate_upstream_call_duration_seconds_count', { provider: 'alternative.me' }],
    });
    expect(d).toEqual({ failure: 1, ok: 0, answered5xx: 1, timed: 1 });
  });

  it('"no such item" is an answer, counted as not_found', async () => {
    t.fakes.binance.route(`GET ${TICKER}`, { status: 400, body: recorded('binance__error_invalid_symbol.json') });
    const d = await moved(t.app, async () => expect((await t.get('/v1/price?symbol=FOO&asset_class=crypto', TEST_KEY)).statusCode).toBe(404), {
      notFound: ['marketgate_upstream_calls_total', { provider: 'binance', outcome: 'not_found' }],
      answered4xx: ['marketgate_http_requests_total', route('/v1/price', '4xx')],
    });
    expect(d).toEqual({ notFound: 1, answered4xx: 1 });
  });

  it('an open breaker shows in the gauge, and the calls it refuses count as circuit_open', async () => {
    t.fakes.alternative.route(`GET ${FNG}`, { status: 500, body: 'down' });
    const breaker = (s: Scrape) => Object.fromEntries(s.matching('marketgate_upstream_breaker_state', { provider: 'alternative.me' }).map((x) => [x.labels.state, x.value]));
    expect(breaker(await scrape(t.app))).toEqual({ closed: 1, open: 0, half_open: 0 });
    for (let i = 0; i < 2; i++) expect((await t.get('/v1/sentiment')).statusCode).toBe(502);
    const opened = await scrape(t.app);
    expect(breaker(opened)).toEqual({ closed: 0, open: 1, half_open: 0 });
    expect((await t.get('/v1/sentiment')).statusCode).toBe(503);
    const refused = await scrape(t.app);
    expect(refused.value('marketgate_upstream_calls_total', { provider: 'alternative.me', outcome: 'circuit_open' }) - opened.value('marketgate_upstream_calls_total', { provider: 'alternative.me', outcome: 'circuit_open' })).toBe(1);
    // A refused call made no request: it has no duration.
    expect(refused.value('marketgate_upstream_call_duration_seconds_count', { provider: 'alternative.me' })).toBe(opened.value('marketgate_upstream_call_duration_seconds_count', { provider: 'alternative.me' }));
    expect(t.fakes.alternative.calls(FNG)).toHaveLength(2);
  });

  it('a fallback venue: failover when the primary fails, hedge_won when it is slow', async () => {
    const probes = {
      failover: ['marketgate_upstream_hedges_total', { provider: 'binance', fallback: 'coinbase', outcome: 'failover' }],
      hedgeWon: ['marketgate_upstream_hedges_total', { provider: 'binance', fallback: 'coinbase', outcome: 'hedge_won' }],
    } as const satisfies Record<string, [string, Record<string, string>]>;
    t.fakes.coinbase.route(`GET ${CB_TICKER}`, { body: recorded('coinbase__ticker.json') });

    t.fakes.binance.route(`GET ${TICKER}`, { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    const failed = await moved(t.app, async () => expect((await t.get('/v1/price?symbol=BTC', TEST_KEY)).json().meta.fallback.to).toBe('coinbase'), probes);
    expect(failed).toEqual({ failover: 1, hedgeWon: 0 });

    t.app.services.cache.clear();
    t.app.services.guard.reset();
    t.fakes.binance.route(`GET ${TICKER}`, { delayMs: 700, body: recorded('binance__spot_ticker_24hr.json') });
    const slow = await moved(t.app, async () => expect((await t.get('/v1/price?symbol=BTC', TEST_KEY)).json().meta.fallback.to).toBe('coinbase'), probes);
    expect(slow).toEqual({ failover: 0, hedgeWon: 1 });
  });

  it('paths no route serves fold into route="unmatched", by method', async () => {
    const d = await moved(
      t.app,
      async () => {
        await t.get('/nope/abc?x=1');
        await t.get(`/v1/${EVM}`);
        await t.app.inject({ method: 'POST', url: '/v1/price' });
      },
      {
        get404: ['marketgate_http_requests_total', route('unmatched', '4xx')],
        post405: ['marketgate_http_requests_total', route('unmatched', '4xx', 'POST')],
      },
    );
    expect(d).toEqual({ get404: 2, post405: 1 });
  });

  it('the payment and backend calls the gate and the storage code make', async () => {
    const d = await moved(
      t.app,
      async () => {
        t.app.metrics.payment('verified', 'eip155:8453');
        t.app.metrics.payment('settled', 'eip155:8453');
        t.app.metrics.payment('unknown', 'eip155:8453');
        t.app.metrics.settleLatency(0.3);
        t.app.metrics.backend('database', false);
        t.app.metrics.backend('redis', true);
      },
      {
        verified: ['marketgate_payments_total', { outcome: 'verified' }],
        settled: ['marketgate_payments_total', { outcome: 'settled' }],
        unknown: ['marketgate_payments_total', { outcome: 'unknown' }],
        cancelled: ['marketgate_payments_total', { outcome: 'cancelled' }],
        settles: ['marketgate_payment_settle_duration_seconds_count'],
        under500ms: ['marketgate_payment_settle_duration_seconds_bucket', { le: '0.5' }],
        under250ms: ['marketgate_payment_settle_duration_seconds_bucket', { le: '0.25' }],
      },
    );
    expect(d).toEqual({ verified: 1, settled: 1, unknown: 1, cancelled: 0, settles: 1, under500ms: 1, under250ms: 0 });
    const s = await scrape(t.app);
    expect(s.value('marketgate_backend_up', { backend: 'database' })).toBe(0);
    expect(s.value('marketgate_backend_up', { backend: 'redis' })).toBe(1);
  });

  it('no label value carries a key, a key id, an address, a symbol or a query: only bounded names', async () => {
    t.fakes.binance.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr.json') });
    await t.get('/v1/price?symbol=BTC', TEST_KEY);
    await t.get('/v1/price?symbol=DOGE', { 'x-api-key': 'not-a-key' });
    await t.get(`/v1/chain-balance?address=${EVM}`, TEST_KEY);
    await t.get(`/risk/v1/token-risk?chain=base&address=${EVM}`);
    const s = await scrape(t.app);
    const ours = s.labelValues().filter((l) => l.name.startsWith('marketgate_') && !/^marketgate_(process|nodejs)_/.test(l.name));
    expect(ours.length).toBeGreaterThan(100);
    for (const { name, label, value } of ours) {
      // network: the CAIP-2 id of one of the server's own offers (the requirements it matched), never the payer's text.
      expect(['route', 'method', 'status_class', 'provider', 'outcome', 'state', 'fallback', 'layer', 'scope', 'backend', 'version', 'le', 'store', 'reason', 'network'], `${name} ${label}`).toContain(label);
      for (const secret of ['test-key', 'not-a-key', 'env-1', 'BTC', 'DOGE', '?', '&', '=']) expect(value, `${name} ${label}`).not.toContain(secret);
      expect(value, `${name} ${label}`).not.toMatch(/0x[0-9a-f]{40}/i);
    }
    const routes = new Set(s.matching('marketgate_http_requests_total').map((x) => x.labels.route));
    expect([...routes]).toEqual(expect.arrayContaining(['/v1/price', '/v1/chain-balance', '/risk/v1/token-risk']));
  });
});

describe("the payments ledger's final-status writes", () => {
  it('failed attempts, writes pending a retry and writes given up show in /metrics (the CLI cannot show them with DATABASE_URL)', async () => {
    // A PostgreSQL that refuses connections: every write fails at once.
    const { app } = await makeApp({ METRICS_TOKEN: TOKEN, DATABASE_URL: 'postgres://marketgate:x@127.0.0.1:1/marketgate' });
    try {
      const ledger = app.services.paymentRecords;
      const before = await scrape(app);
      expect(before.value('marketgate_payment_ledger_write_failures_total')).toBe(0);
      expect(before.value('marketgate_payment_ledger_writes_pending')).toBe(0);
      expect(await ledger.recordSettled('a-settled-payment', { txHash: `0x${'ab'.repeat(32)}`, settledAmount: '1000' })).toBe('queued');
      const failing = await scrape(app);
      expect(failing.value('marketgate_payment_ledger_write_failures_total')).toBe(1);
      expect(failing.value('marketgate_payment_ledger_writes_pending')).toBe(1);
      expect(failing.value('marketgate_payment_ledger_writes_lost_total')).toBe(0);
      await ledger.close(50); // one last attempt, then given up
      const lost = await scrape(app);
      expect(lost.value('marketgate_payment_ledger_write_failures_total')).toBe(ledger.stats().final_write_failures);
      expect(lost.value('marketgate_payment_ledger_writes_pending')).toBe(0);
      expect(lost.value('marketgate_payment_ledger_writes_lost_total')).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe('rate-limited requests by scope', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    ({ app } = await makeApp({
      METRICS_TOKEN: TOKEN,
      API_KEYS: 'test-key',
      KEY_RATE_LIMIT: '1',
      PAID_IP_RATE_LIMIT: '1',
      FREE_RATE_LIMIT: '1',
      RISK_RATE_LIMIT: '1',
    }));
  });
  afterAll(() => app.close());

  it.each([
    ['free', '/v1/sentiment', {}],
    ['ref', '/v1/status', {}],
    ['key', '/v1/market-clock', TEST_KEY],
    ['paid', '/v1/market-clock', {}],
    ['risk', `/risk/v1/token-risk?chain=base&address=${EVM}`, {}],
  ] as const)('a 429 counts in its scope: %s', async (scope, url, headers) => {
    const d = await moved(
      app,
      async () => {
        expect((await app.inject({ url, headers })).statusCode).not.toBe(429);
        expect((await app.inject({ url, headers })).statusCode).toBe(429);
      },
      { scope: ['marketgate_rate_limited_total', { scope }], all: ['marketgate_rate_limited_total'] },
    );
    expect(d).toEqual({ scope: 1, all: 1 });
  });

  it('/metrics itself is never rate limited', async () => {
    for (let i = 0; i < 5; i++) expect((await app.inject({ url: '/metrics', headers: AUTH })).statusCode).toBe(200);
  });
});

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

describe('METRICS_PORT: a listener of its own', () => {
  it('serves /metrics there without a token, and the public port does not serve it', async () => {
    const port = await freePort();
    const { app } = await makeApp({ METRICS_PORT: String(port) });
    const base = `http://127.0.0.1:${port}`;
    await app.inject('/health');
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(parseScrape(await res.text()).value('marketgate_http_requests_total', route('/health', '2xx'))).toBe(1);

    expect((await app.inject({ url: '/metrics' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/metrics', headers: AUTH })).statusCode).toBe(404);
    const other = await fetch(`${base}/health`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: 'no route for GET /health; metrics are at /metrics' });
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');

    await app.close();
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });

  it('requires the token there too when METRICS_TOKEN is set', async () => {
    const port = await freePort();
    const { app } = await makeApp({ METRICS_PORT: String(port), METRICS_TOKEN: TOKEN });
    const url = `http://127.0.0.1:${port}/metrics`;
    const refused = await fetch(url);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'metrics require a bearer token (Authorization: Bearer <METRICS_TOKEN>)' });
    expect((await fetch(url, { headers: AUTH })).status).toBe(200);
    expect((await app.inject({ url: '/metrics', headers: AUTH })).statusCode).toBe(404);
    await app.close();
  });

  it('a port that cannot be bound stops start-up', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as { port: number };
    await expect(makeApp({ METRICS_PORT: String(port) })).rejects.toThrow(/EADDRINUSE/);
    await new Promise((r) => taken.close(r));
  });
});

describe('METRICS_TOKEN', () => {
  it('must be at least 16 printable characters without spaces', async () => {
    await expect(makeApp({ METRICS_TOKEN: 'short' })).rejects.toThrow(/METRICS_TOKEN="\[secret\]" is invalid: expected at least 16 printable ASCII characters, no spaces/);
    await expect(makeApp({ METRICS_TOKEN: 'has a space in the middle' })).rejects.toThrow(/METRICS_TOKEN/);
  });
});

describe('a scrape and the database', () => {
  it('a scrape before the database is open neither opens it nor waits for it: the settling-cost families have no series yet', async () => {
    const { app } = await makeApp({ METRICS_TOKEN: TOKEN });
    try {
      expect(app.services.db.state).toBe('idle');
      const s = await scrape(app);
      expect(s.matching('marketgate_x402_paid_calls_total')).toEqual([]);
      expect(app.services.db.state).toBe('idle'); // (before the fix, the scrape started PGlite's opening and waited seconds for it)
    } finally {
      await app.close();
    }
  });
});
