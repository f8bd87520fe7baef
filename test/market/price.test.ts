import { describe, expect, it } from 'vitest';
import { BROWSER_USER_AGENT } from '../../src/sources/yahoo.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const TICKER = '/api/v3/ticker/24hr';
const CB_TICKER = '/products/BTC-USD/ticker';
const AAPL = '/v8/finance/chart/AAPL';

const t = useFakeUpstreamApp(
  (url) => ({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: url, COINBASE_BASE_URL: url, YAHOO_BASE_URL: url }),
  { headers: TEST_KEY },
);
const { fake, get } = t;

// The recorded failures a provider can answer with; each must end as a 502 (or a fallback).
const FAILURES: FailureCase[] = [
  ...upstreamFailures('binance', { geoBlock: true, malformed: '{"symbol":"BTCUSDT","lastPrice":' }),
  ['HTTP 403 (WAF)', { status: 403, body: '<html>403 Forbidden</html>' }, 'binance answered HTTP 403'],
  ['an unexpected shape', { body: { symbol: 'BTCUSDT', lastPrice: 'n/a', closeTime: 1 } }, 'binance returned an unexpected response shape at lastPrice'],
];

describe('GET /v1/price — crypto on Binance', () => {
  it('prices BTC from the 24 h ticker of BTCUSDT, with the venue time as as_of', async () => {
    fake.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr.json') });
    const res = await get('/v1/price?symbol=btc');
    expect(res.statusCode).toBe(200);
    expect(fake.calls(TICKER)[0]!.query.get('symbol')).toBe('BTCUSDT');
    const { data, meta } = res.json();
    // lastPrice "4.00000200" → 4.000002; closeTime 1499869899040 ms → 2017-07-12T14:31:39.040Z.
    expect(data).toEqual({ symbol: 'BTC/USDT', venue_symbol: 'BTCUSDT', asset_class: 'crypto', price: 4.000002, currency: 'USDT', as_of: '2017-07-12T14:31:39.040Z' });
    expect(meta.sources).toHaveLength(1);
    expect(meta.sources[0]).toMatchObject({ provider: 'binance', cached: false });
    expect(meta.fallback).toBeUndefined();
    expect(fake.calls(CB_TICKER)).toHaveLength(0);
  });

  it('keeps an explicit quote: ETH-BTC → ETHBTC, currency BTC', async () => {
    fake.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr.json') });
    const { data } = (await get('/v1/price?symbol=ETH-BTC')).json();
    expect(fake.calls(TICKER)[0]!.query.get('symbol')).toBe('ETHBTC');
    expect(data).toMatchObject({ symbol: 'ETH/BTC', currency: 'BTC' });
  });

  it('serves a repeated request from the cache', async () => {
    fake.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr.json') });
    await get('/v1/price?symbol=BTC');
    const { meta } = (await get('/v1/price?symbol=BTCUSDT')).json();
    expect(meta.sources[0].cached).toBe(true);
    expect(fake.calls(TICKER)).toHaveLength(1);
  });

  it('answers 404 for a pair Binance does not list (HTTP 400, code -1121), without falling back', async () => {
    fake.route(`GET ${TICKER}`, { status: 400, body: recorded('binance__error_invalid_symbol.json') });
    fake.route('GET /products/FOO-USD/ticker', { body: recorded('coinbase__ticker.json') });
    const res = await get('/v1/price?symbol=FOOUSDT');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'binance does not list the spot pair FOOUSDT', source: 'binance' });
    expect(fake.calls('/products/FOO-USD/ticker')).toHaveLength(0);
  });

  it('answers 502 for any other Binance error code', async () => {
    fake.route(`GET ${TICKER}`, { status: 400, body: { code: -1100, msg: 'Illegal characters found in parameter.' } });
    fake.route(`GET ${CB_TICKER}`, { status: 500, body: 'down' });
    const res = await get('/v1/price?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toContain('binance error: code -1100 (Illegal characters found in parameter.)');
  });
});

describe('GET /v1/price — fallback to Coinbase Exchange', () => {
  it.each(FAILURES)('falls back when Binance fails with %s', async (_name, reply, reason) => {
    fake.route(`GET ${TICKER}`, reply);
    fake.route(`GET ${CB_TICKER}`, { body: recorded('coinbase__ticker.json') });
    const res = await get('/v1/price?symbol=BTC');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // Coinbase's documented ticker: price "333.99", time 2015-11-14T20:46:03.511254Z (µs cut to ms).
    expect(data).toEqual({ symbol: 'BTC/USD', venue_symbol: 'BTC-USD', asset_class: 'crypto', price: 333.99, currency: 'USD', as_of: '2015-11-14T20:46:03.511Z' });
    expect(meta.sources).toHaveLength(1);
    expect(meta.sources[0].provider).toBe('coinbase');
    expect(meta.fallback).toMatchObject({ from: 'binance', to: 'coinbase', reason });
  });

  it('says why it fell back: the 451 geo-block', async () => {
    fake.route(`GET ${TICKER}`, { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    fake.route(`GET ${CB_TICKER}`, { body: recorded('coinbase__ticker.json') });
    const { meta } = (await get('/v1/price?symbol=BTC')).json();
    expect(meta.fallback).toEqual({ from: 'binance', to: 'coinbase', reason: 'binance answered HTTP 451' });
    expect(fake.calls(TICKER)).toHaveLength(1);
    expect(fake.calls(CB_TICKER)).toHaveLength(1);
  });

  it('asks Coinbase for the explicit quote when the caller named one (BTC-USDT → BTC-USDT)', async () => {
    fake.route(`GET ${TICKER}`, { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    fake.route('GET /products/BTC-USDT/ticker', { body: recorded('coinbase__ticker.json') });
    const { data } = (await get('/v1/price?symbol=BTC-USDT')).json();
    expect(data).toMatchObject({ symbol: 'BTC/USDT', currency: 'USDT', price: 333.99 });
  });

  it('prices an explicit USD pair on Coinbase directly (Binance lists no USD pairs), without calling Binance', async () => {
    fake.route(`GET ${CB_TICKER}`, { body: recorded('coinbase__ticker.json') });
    const { data, meta } = (await get('/v1/price?symbol=btc-usd')).json();
    expect(data).toEqual({ symbol: 'BTC/USD', venue_symbol: 'BTC-USD', asset_class: 'crypto', price: 333.99, currency: 'USD', as_of: '2015-11-14T20:46:03.511Z' });
    expect(meta.sources[0].provider).toBe('coinbase');
    expect(meta.fallback).toBeUndefined();
    expect(fake.calls(TICKER)).toHaveLength(0);
  });

  it('answers 502 naming binance (and the coinbase failure) when both fail', async () => {
    fake.route(`GET ${TICKER}`, { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    fake.route(`GET ${CB_TICKER}`, { status: 500, body: 'down' });
    const res = await get('/v1/price?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'binance answered HTTP 451; fallback coinbase answered HTTP 500', source: 'binance' });
  });

  it('answers 404 from coinbase when Binance is down and Coinbase does not list the product', async () => {
    fake.route(`GET ${TICKER}`, { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    fake.route('GET /products/SOL-USD/ticker', { status: 404, body: recorded('coinbase__error_not_found.json') });
    const res = await get('/v1/price?symbol=SOL');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'coinbase does not list the product SOL-USD', source: 'coinbase' });
  });
});

describe('GET /v1/price — equities on Yahoo', () => {
  it('prices AAPL from the chart meta, with a browser User-Agent', async () => {
    fake.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1d.json') });
    const res = await get('/v1/price?symbol=aapl');
    expect(res.statusCode).toBe(200);
    const call = fake.calls(AAPL)[0]!;
    expect(call.query.get('interval')).toBe('1d');
    expect(call.query.get('range')).toBe('5d');
    expect(call.headers['user-agent']).toBe(BROWSER_USER_AGENT);
    const { data, meta } = res.json();
    // meta.regularMarketPrice 244.87 USD; regularMarketTime 1739998801 s → 2025-02-19T21:00:01Z.
    expect(data).toEqual({ symbol: 'AAPL', venue_symbol: 'AAPL', asset_class: 'equity', price: 244.87, currency: 'USD', as_of: '2025-02-19T21:00:01.000Z' });
    expect(meta.sources[0].provider).toBe('yahoo');
  });

  it('spells class shares as Yahoo does (BRK.B → BRK-B) and answers with the caller\'s spelling', async () => {
    fake.route('GET /v8/finance/chart/BRK-B', { body: recorded('yahoo__chart_AAPL_1d.json') });
    const res = await get('/v1/price?symbol=BRK.B');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.symbol).toBe('BRK.B');
    expect(res.json().data.venue_symbol).toBe('BRK-B');
  });

  it('asset_class=equity overrides the crypto default for a ticker on the crypto list', async () => {
    fake.route('GET /v8/finance/chart/ETH', { body: recorded('yahoo__chart_AAPL_1d.json') });
    const res = await get('/v1/price?symbol=ETH&asset_class=equity');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.asset_class).toBe('equity');
    expect(fake.calls(TICKER)).toHaveLength(0);
  });

  it('leaves price and as_of null when Yahoo does not give them', async () => {
    const body = recorded('yahoo__chart_AAPL_1d.json');
    delete body.chart.result[0].meta.regularMarketPrice;
    delete body.chart.result[0].meta.regularMarketTime;
    fake.route(`GET ${AAPL}`, { body });
    const { data } = (await get('/v1/price?symbol=AAPL')).json();
    expect(data).toMatchObject({ price: null, as_of: null, currency: 'USD' });
  });

  it('answers 404 for a ticker Yahoo does not know (HTTP 404 and HTTP 200 alike)', async () => {
    for (const status of [404, 200]) {
      t.app.services.cache.clear();
      fake.route('GET /v8/finance/chart/ZZZZ', { status, body: recorded('yahoo__chart_error_not_found.json') });
      const res = await get('/v1/price?symbol=ZZZZ');
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'yahoo has no data for the ticker ZZZZ', source: 'yahoo' });
    }
  });

  it.each<FailureCase>([
    ['HTTP 429 (plain text)', { status: 429, body: 'Too Many Requests' }, 'yahoo is rate limiting this server (HTTP 429)', 503],
    ...upstreamFailures('yahoo', { malformed: '{"chart":{' }),
    ['another chart error', { status: 422, body: { chart: { result: null, error: { code: 'Unprocessable Entity', description: 'bad range' } } } }, 'yahoo error: Unprocessable Entity (bad range)'],
  ])('answers 502 naming yahoo on %s', async (_name, reply, message, status = 502) => {
    fake.route(`GET ${AAPL}`, reply);
    const res = await get('/v1/price?symbol=AAPL');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'yahoo' });
  });
});

describe('GET /v1/price — parameters and access', () => {
  it.each([
    ['', /^query parameter 'symbol' is required: a crypto base asset/],
    ['?symbol=B@D', /^query parameter 'symbol' must be a crypto base asset/],
    ['?symbol=BTC&asset_class=bond', /^query parameter 'asset_class' must be one of crypto, equity$/],
    ['?symbol=TOOLONGTICKER&asset_class=equity', /^query parameter 'symbol' must be a US equity\/ETF ticker/],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/price${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
  });

  it('requires credentials: 401 without a key or with a wrong one, 200 with a valid key', async () => {
    fake.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr.json') });
    expect((await get('/v1/price?symbol=BTC', {})).statusCode).toBe(401);
    expect((await get('/v1/price?symbol=BTC', { 'x-api-key': 'nope' })).statusCode).toBe(401);
    expect(fake.calls(TICKER)).toHaveLength(0);
    expect((await get('/v1/price?symbol=BTC')).statusCode).toBe(200);
  });
});
