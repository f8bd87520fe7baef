import { describe, expect, it } from 'vitest';
import { describeParams } from '../../src/catalog/describe.ts';
import { summariseBook, type Level } from '../../src/analytics/orderbook.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const DEPTH = '/api/v3/depth';
const CB_BOOK = '/products/BTC-USD/book';
const KRAKEN = '/0/public/Depth';

const t = useFakeUpstreamApp(
  (url) => ({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: url, COINBASE_BASE_URL: url, KRAKEN_BASE_URL: url }),
  { headers: TEST_KEY },
);
const { fake, get } = t;
const num = (levels: (string | number)[][]): Level[] => levels.map((l) => [Number(l[0]), Number(l[1])]);

describe('summariseBook (pure)', () => {
  it('computes the statistics of the Binance docs book by hand', () => {
    // bids [4.00000000 × 431], asks [4.00000200 × 12]
    const s = summariseBook(num(recorded('binance__spot_depth.json').bids), num(recorded('binance__spot_depth.json').asks), 20);
    expect(s.best_bid).toBe(4);
    expect(s.best_ask).toBe(4.000002);
    expect(s.mid).toBe(4.000001); // (4 + 4.000002) / 2
    expect(s.spread).toBe(0.000002); // 4.000002 − 4, not 1.9999999999242e-6
    expect(s.spread_bps).toBe(0.005); // 0.000002 / 4.000001 × 1e4 = 0.00499999875 → 4 dp
    expect(s.bid_depth_quote).toBe(1724); // 4 × 431
    expect(s.ask_depth_quote).toBe(48.000024); // 4.000002 × 12
    expect(s.imbalance).toBe(0.945824); // (1724 − 48.000024) / (1724 + 48.000024) = 0.94582390…
  });

  it('trims each side to depth before summing (Coinbase sample, depth 2)', () => {
    const cb = recorded('coinbase__product_book_level2.json');
    const s = summariseBook(num(cb.bids), num(cb.asks), 2);
    expect(s.bids).toEqual([[0.1135, 35], [0.1134, 20606.7]]);
    expect(s.asks).toEqual([[0.1137, 10113.4], [0.1138, 49781.3]]);
    expect(s.mid).toBe(0.1136);
    expect(s.spread).toBe(0.0002);
    expect(s.spread_bps).toBe(17.6056); // 0.0002 / 0.1136 × 1e4 = 17.60563…
    expect(s.bid_depth_quote).toBe(2340.77228); // 0.1135 × 35 + 0.1134 × 20606.7 = 3.9725 + 2336.79978
    expect(s.ask_depth_quote).toBe(6815.00552); // 0.1137 × 10113.4 + 0.1138 × 49781.3 = 1149.89358 + 5665.11194
    expect(s.imbalance).toBe(-0.488679); // (2340.77228 − 6815.00552) / 9155.7778
  });

  it('sorts each side best first whatever order it arrives in', () => {
    const s = summariseBook([[99, 1], [101, 2], [100, 3]], [[103, 1], [102, 1]], 2);
    expect(s.bids).toEqual([[101, 2], [100, 3]]);
    expect(s.asks).toEqual([[102, 1], [103, 1]]);
    expect(s).toMatchObject({ best_bid: 101, best_ask: 102, mid: 101.5, spread: 1 });
  });

  it('leaves best/mid/spread null for an empty side, and imbalance null for an empty book', () => {
    expect(summariseBook([[100, 2]], [], 5)).toEqual({
      bids: [[100, 2]],
      asks: [],
      best_bid: 100,
      best_ask: null,
      mid: null,
      spread: null,
      spread_bps: null,
      bid_depth_quote: 200,
      ask_depth_quote: 0,
      imbalance: 1,
    });
    expect(summariseBook([], [], 5)).toMatchObject({ best_bid: null, best_ask: null, mid: null, spread: null, imbalance: null, bid_depth_quote: 0 });
  });
});

describe('GET /v1/orderbook on Binance (default venue)', () => {
  it('answers the book with its statistics; depth 20 asks Binance for limit=20; as_of is null (no venue time)', async () => {
    fake.route(`GET ${DEPTH}`, { body: recorded('binance__spot_depth.json') });
    const res = await get('/v1/orderbook?symbol=BTC');
    expect(res.statusCode).toBe(200);
    const q = fake.calls(DEPTH)[0]!.query;
    expect([q.get('symbol'), q.get('limit')]).toEqual(['BTCUSDT', '20']);
    const { data, meta } = res.json();
    expect(data).toEqual({
      symbol: 'BTC/USDT',
      exchange: 'binance',
      venue_symbol: 'BTCUSDT',
      currency: 'USDT',
      quote_currency: 'USDT',
      bids: [[4, 431]],
      asks: [[4.000002, 12]],
      best_bid: 4,
      best_ask: 4.000002,
      mid: 4.000001,
      spread: 0.000002,
      spread_bps: 0.005,
      bid_depth_quote: 1724,
      ask_depth_quote: 48.000024,
      imbalance: 0.945824,
      bid_depth_usd: 1724, // USDT counted at face value
      ask_depth_usd: 48.000024,
      as_of: null,
    });
    expect(meta.sources[0]).toMatchObject({ provider: 'binance', cached: false });
  });

  it.each([
    [1, '5'],
    [5, '5'],
    [7, '10'],
    [21, '50'],
    [100, '100'],
    [101, '500'],
    [500, '500'],
  ])('depth %i asks Binance for the smallest allowed limit ≥ it (%s) and trims', async (depth, limit) => {
    const levels = Array.from({ length: Number(limit) }, (_, i) => [String(100 - i), '1']);
    const askLevels = Array.from({ length: Number(limit) }, (_, i) => [String(101 + i), '1']);
    fake.route(`GET ${DEPTH}`, { body: { lastUpdateId: 1, bids: levels, asks: askLevels } });
    const { data } = (await get(`/v1/orderbook?symbol=ETH&depth=${depth}`)).json();
    expect(fake.calls(DEPTH)[0]!.query.get('limit')).toBe(limit);
    expect(data.bids).toHaveLength(depth);
    expect(data.asks).toHaveLength(depth);
  });

  it('gives depth in the quote currency and null USD depth when the quote is not USD-like (ETH-BTC)', async () => {
    fake.route(`GET ${DEPTH}`, { body: recorded('binance__spot_depth.json') });
    const { data } = (await get('/v1/orderbook?symbol=ETH-BTC')).json();
    expect(fake.calls(DEPTH)[0]!.query.get('symbol')).toBe('ETHBTC');
    expect(data).toMatchObject({ symbol: 'ETH/BTC', currency: 'BTC', quote_currency: 'BTC', bid_depth_quote: 1724, bid_depth_usd: null, ask_depth_usd: null });
  });

  it('answers 404 for a pair Binance does not list', async () => {
    fake.route(`GET ${DEPTH}`, { status: 400, body: recorded('binance__error_invalid_symbol.json') });
    const res = await get('/v1/orderbook?symbol=FOOUSDT');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'binance does not list the spot pair FOOUSDT', source: 'binance' });
  });

  it.each(upstreamFailures('binance', { geoBlock: true, malformed: '{"bids":[' }))('answers 502 naming binance on %s', async (_name, reply, message) => {
    fake.route(`GET ${DEPTH}`, reply);
    const res = await get('/v1/orderbook?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: message, source: 'binance' });
  });
});

describe('GET /v1/orderbook on Coinbase Exchange', () => {
  it('reads the level-2 book of BTC-USD, trims it to depth, and has no as_of without a `time`', async () => {
    // The recorded book is of an unrecorded low-priced product; served here under BTC-USD.
    fake.route(`GET ${CB_BOOK}`, { body: recorded('coinbase__product_book_level2.json') });
    const res = await get('/v1/orderbook?symbol=BTC&exchange=coinbase&depth=2');
    expect(res.statusCode).toBe(200);
    expect(fake.calls(CB_BOOK)[0]!.query.get('level')).toBe('2');
    const { data, meta } = res.json();
    expect(data).toMatchObject({
      symbol: 'BTC/USD',
      exchange: 'coinbase',
      venue_symbol: 'BTC-USD',
      currency: 'USD',
      quote_currency: 'USD',
      bids: [[0.1135, 35], [0.1134, 20606.7]],
      asks: [[0.1137, 10113.4], [0.1138, 49781.3]],
      mid: 0.1136,
      spread: 0.0002,
      spread_bps: 17.6056,
      bid_depth_usd: 2340.77228,
      ask_depth_usd: 6815.00552,
      imbalance: -0.488679,
      as_of: null,
    });
    expect(meta.sources[0].provider).toBe('coinbase');
  });

  it('uses the book `time` newer responses carry as as_of; default depth 20 keeps all 5 levels', async () => {
    fake.route(`GET ${CB_BOOK}`, { body: { ...recorded<Record<string, unknown>>('coinbase__product_book_level2.json'), time: '2024-05-01T12:00:00.123456Z' } });
    const { data } = (await get('/v1/orderbook?symbol=BTC&exchange=coinbase')).json();
    expect(data.as_of).toBe('2024-05-01T12:00:00.123Z');
    expect(data.bids).toHaveLength(5);
    // all five levels: Σ bids 12922.21668, Σ asks 15119.80259 → imbalance −0.0783676…
    expect(data.bid_depth_quote).toBe(12922.21668);
    expect(data.ask_depth_quote).toBe(15119.80259);
    expect(data.imbalance).toBe(-0.078368);
  });

  it('answers 404 for a product Coinbase does not list', async () => {
    fake.route('GET /products/FOO-USD/book', { status: 404, body: recorded('coinbase__error_not_found.json') });
    const res = await get('/v1/orderbook?symbol=FOO-USD&exchange=coinbase');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'coinbase does not list the product FOO-USD', source: 'coinbase' });
  });

  it.each<FailureCase>([
    ['HTTP 429', { status: 429, body: { message: 'Public rate limit exceeded' } }, 'coinbase is rate limiting this server (Public rate limit exceeded)', 503],
    ...upstreamFailures('coinbase', { malformed: '{"bids":' }),
  ])('answers 502/503 naming coinbase on %s', async (_name, reply, message, status = 502) => {
    fake.route(`GET ${CB_BOOK}`, reply);
    const res = await get('/v1/orderbook?symbol=BTC&exchange=coinbase');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'coinbase' });
  });
});

describe('GET /v1/orderbook on Kraken', () => {
  it('asks for XBTUSD, takes the single result (XXBTZUSD), and uses the latest level time as as_of', async () => {
    fake.route(`GET ${KRAKEN}`, { body: recorded('kraken__public_depth.json') });
    const res = await get('/v1/orderbook?symbol=BTC&exchange=kraken&depth=10');
    expect(res.statusCode).toBe(200);
    const q = fake.calls(KRAKEN)[0]!.query;
    expect([q.get('pair'), q.get('count')]).toEqual(['XBTUSD', '10']);
    const { data, meta } = res.json();
    // bids 29727.0 × 3.127, 29725.1 × 0.085, 29725.0 × 0.586; asks 29727.1 × 0.420, 29728.3 × 5.047, 29728.7 × 0.474
    expect(data).toEqual({
      symbol: 'BTC/USD',
      exchange: 'kraken',
      venue_symbol: 'XXBTZUSD',
      currency: 'USD',
      quote_currency: 'USD',
      bids: [[29727, 3.127], [29725.1, 0.085], [29725, 0.586]],
      asks: [[29727.1, 0.42], [29728.3, 5.047], [29728.7, 0.474]],
      best_bid: 29727,
      best_ask: 29727.1,
      mid: 29727.05,
      spread: 0.1,
      spread_bps: 0.0336, // 0.1 / 29727.05 × 1e4 = 0.033639…
      bid_depth_quote: 112901.8125, // 92956.329 + 2526.6335 + 17418.85
      ask_depth_quote: 176615.5159, // 12485.382 + 150038.7301 + 14091.4038
      imbalance: -0.220069,
      bid_depth_usd: 112901.8125,
      ask_depth_usd: 176615.5159,
      as_of: '2022-06-04T00:30:25.000Z', // max level timestamp 1654302625 s
    });
    expect(meta.sources[0].provider).toBe('kraken');
  });

  it.each([
    ['DOGE', 'XDGUSD'],
    ['ETH', 'ETHUSD'],
    ['ETH-USDT', 'ETHUSDT'],
    ['BTC/EUR', 'XBTEUR'],
  ])('spells %s as Kraken does (%s)', async (symbol, pair) => {
    fake.route(`GET ${KRAKEN}`, { body: recorded('kraken__public_depth.json') });
    expect((await get(`/v1/orderbook?symbol=${encodeURIComponent(symbol)}&exchange=kraken`)).statusCode).toBe(200);
    expect(fake.calls(KRAKEN)[0]!.query.get('pair')).toBe(pair);
  });

  it('answers 404 for "EQuery:Unknown asset pair"', async () => {
    fake.route(`GET ${KRAKEN}`, { body: recorded('kraken__error_unknown_pair.json') });
    const res = await get('/v1/orderbook?symbol=FOO-USD&exchange=kraken');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'kraken does not list the pair FOOUSD', source: 'kraken' });
  });

  it.each<FailureCase>([
    ['an error in error[] (HTTP 200)', { body: { error: ['EGeneral:Internal error'] } }, 'kraken error: EGeneral:Internal error'],
    ['its rate limit in error[] (HTTP 200)', { body: { error: ['EGeneral:Too many requests'] } }, 'kraken is rate limiting this server (EGeneral:Too many requests)', 503],
    ['two books for one pair', { body: { error: [], result: { XXBTZUSD: { asks: [], bids: [] }, XBTUSD: { asks: [], bids: [] } } } }, 'kraken returned 2 books for one pair'],
    ...upstreamFailures('kraken', { malformed: '{"error":[],"result":' }),
  ])('answers 502/503 naming kraken on %s', async (_name, reply, message, status = 502) => {
    fake.route(`GET ${KRAKEN}`, reply);
    const res = await get('/v1/orderbook?symbol=BTC&exchange=kraken');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'kraken' });
  });

  it('an empty book has null best prices, null as_of and null imbalance', async () => {
    fake.route(`GET ${KRAKEN}`, { body: { error: [], result: { XXBTZUSD: { asks: [], bids: [] } } } });
    const { data } = (await get('/v1/orderbook?symbol=BTC&exchange=kraken')).json();
    expect(data).toMatchObject({ bids: [], asks: [], best_bid: null, best_ask: null, mid: null, spread: null, spread_bps: null, imbalance: null, as_of: null });
  });
});

describe('GET /v1/orderbook — parameters and access', () => {
  it.each([
    ['?symbol=BTC&depth=0', "query parameter 'depth' must be a whole number from 1 to 500"],
    ['?symbol=BTC&depth=501', "query parameter 'depth' must be a whole number from 1 to 500"],
    ['?symbol=BTC&depth=deep', "query parameter 'depth' must be a whole number from 1 to 500"],
    ['?symbol=BTC&exchange=okx', "query parameter 'exchange' must be one of binance, coinbase, kraken"],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/orderbook${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: message });
    expect(fake.requests).toHaveLength(0);
  });

  it('400 without a symbol', async () => {
    const res = await get('/v1/orderbook');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^query parameter 'symbol' is required/);
  });

  it('documents exchange and depth for OpenAPI and the catalog', () => {
    const params = describeParams(t.app.services.catalog.find('/v1/orderbook')!.def.query);
    const byName = Object.fromEntries(params.map((p) => [p.name, p]));
    expect(byName.exchange).toMatchObject({ required: false, default: 'binance', enum: ['binance', 'coinbase', 'kraken'] });
    expect(byName.depth).toMatchObject({ required: false, default: 20, minimum: 1, maximum: 500 });
  });

  it('requires credentials: 401 without a key, 200 with one', async () => {
    fake.route(`GET ${DEPTH}`, { body: recorded('binance__spot_depth.json') });
    expect((await get('/v1/orderbook?symbol=BTC', {})).statusCode).toBe(401);
    expect(fake.calls(DEPTH)).toHaveLength(0);
    expect((await get('/v1/orderbook?symbol=BTC')).statusCode).toBe(200);
  });
});
