import { describe, expect, it } from 'vitest';
import { describeParams } from '../../src/catalog/describe.ts';
import { yahooRange } from '../../src/market/candles.ts';
import { BROWSER_USER_AGENT } from '../../src/sources/yahoo.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const KLINES = '/api/v3/klines';
const CB_CANDLES = '/products/BTC-USD/candles';
const AAPL = '/v8/finance/chart/AAPL';

const t = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: url, COINBASE_BASE_URL: url, YAHOO_BASE_URL: url }), { headers: TEST_KEY });
const { fake, get } = t;

describe('GET /v1/ohlcv — crypto from Binance klines', () => {
  it('maps positional klines to candles with the defaults timeframe=1h, limit=100', async () => {
    fake.route(`GET ${KLINES}`, { body: recorded('binance__spot_klines.json') });
    const res = await get('/v1/ohlcv?symbol=BTC');
    expect(res.statusCode).toBe(200);
    const q = fake.calls(KLINES)[0]!.query;
    expect([q.get('symbol'), q.get('interval'), q.get('limit')]).toEqual(['BTCUSDT', '1h', '100']);
    const { data, meta } = res.json();
    // [1499040000000, "0.01634790", "0.80000000", "0.01575800", "0.01577100", "148976.11427815", ...]
    expect(data).toEqual({
      symbol: 'BTC/USDT',
      venue_symbol: 'BTCUSDT',
      asset_class: 'crypto',
      timeframe: '1h',
      currency: 'USDT',
      candles: [{ time: '2017-07-03T00:00:00.000Z', open: 0.0163479, high: 0.8, low: 0.015758, close: 0.015771, volume: 148976.11427815 }],
    });
    expect(meta.sources[0]).toMatchObject({ provider: 'binance', cached: false });
  });

  it('keeps Binance\'s order (oldest first) over several rows', async () => {
    const row = recorded('binance__spot_klines.json')[0];
    const rows = [0, 1, 2].map((i) => [row[0] + i * 3_600_000, ...row.slice(1, 6), row[6] + i * 3_600_000, ...row.slice(7)]);
    fake.route(`GET ${KLINES}`, { body: rows });
    const { data } = (await get('/v1/ohlcv?symbol=ETHUSDT&timeframe=4h&limit=3')).json();
    expect(fake.calls(KLINES)[0]!.query.get('interval')).toBe('4h');
    expect(data.candles.map((c: { time: string }) => c.time)).toEqual(['2017-07-03T00:00:00.000Z', '2017-07-03T01:00:00.000Z', '2017-07-03T02:00:00.000Z']);
  });

  it.each(['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'])('passes timeframe %s to Binance as is', async (tf) => {
    fake.route(`GET ${KLINES}`, { body: recorded('binance__spot_klines.json') });
    const res = await get(`/v1/ohlcv?symbol=SOL&timeframe=${tf}&limit=1000`);
    expect(res.statusCode).toBe(200);
    expect(fake.calls(KLINES)[0]!.query.get('interval')).toBe(tf);
    expect(fake.calls(KLINES)[0]!.query.get('limit')).toBe('1000');
  });

  it('answers 404 for a pair Binance does not list', async () => {
    fake.route(`GET ${KLINES}`, { status: 400, body: recorded('binance__error_invalid_symbol.json') });
    const res = await get('/v1/ohlcv?symbol=FOOUSDT');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'binance does not list the spot pair FOOUSDT', source: 'binance' });
  });

  // Binance failing falls back to Coinbase Exchange candles (test/market/candle-fallback.test.ts); here Coinbase fails too.
  it.each(upstreamFailures('binance', { geoBlock: true, malformed: '[[1499040000000,"0.1"', timeoutBody: [] }))('answers 502 naming binance on %s when the Coinbase fallback fails too', async (_name, reply, message) => {
    fake.route(`GET ${KLINES}`, reply);
    fake.route(`GET ${CB_CANDLES}`, { status: 500, body: 'down' });
    const res = await get('/v1/ohlcv?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: `${message}; fallback coinbase answered HTTP 500`, source: 'binance' });
  });

  it('answers 502 for a kline row that is not the documented shape (and a failing fallback)', async () => {
    fake.route(`GET ${KLINES}`, { body: [[1499040000000, '0.1', '0.2']] });
    fake.route(`GET ${CB_CANDLES}`, { status: 500, body: 'down' });
    const res = await get('/v1/ohlcv?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toMatch(/^binance returned an unexpected response shape.*; fallback coinbase answered HTTP 500$/);
  });
});

describe('GET /v1/ohlcv — equities from Yahoo chart', () => {
  it('returns the last `limit` daily bars, rounded to priceHint, with the listing currency', async () => {
    fake.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1d.json') });
    const res = await get('/v1/ohlcv?symbol=AAPL&timeframe=1d&limit=3');
    expect(res.statusCode).toBe(200);
    const call = fake.calls(AAPL)[0]!;
    // 3 sessions → ceil(3 × 7/5) + 4 = 9 calendar days → the smallest range covering them: 1mo.
    expect([call.query.get('interval'), call.query.get('range')]).toEqual(['1d', '1mo']);
    expect(call.headers['user-agent']).toBe(BROWSER_USER_AGENT);
    const { data, meta } = res.json();
    expect(data.symbol).toBe('AAPL');
    expect(data.asset_class).toBe('equity');
    expect(data.currency).toBe('USD');
    // The sample's last three bars; 114.94999694824219 → 114.95 at priceHint 2.
    expect(data.candles).toEqual([
      { time: '2020-11-04T14:30:00.000Z', open: 114.14, high: 115.59, low: 112.35, close: 114.95, volume: 138235500 },
      { time: '2020-11-05T14:30:00.000Z', open: 117.95, high: 119.62, low: 116.87, close: 119.03, volume: 126387100 },
      { time: '2020-11-06T14:30:00.000Z', open: 118.32, high: 119.2, low: 116.13, close: 118.69, volume: 114457900 },
    ]);
    expect(meta.sources[0].provider).toBe('yahoo');
  });

  it('returns every bar when Yahoo has fewer than `limit`', async () => {
    fake.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1d.json') });
    const { data } = (await get('/v1/ohlcv?symbol=AAPL&timeframe=1d&limit=1000')).json();
    expect(data.candles).toHaveLength(49);
    expect(data.candles[0]).toEqual({ time: '2020-08-31T13:30:00.000Z', open: 127.58, high: 131, low: 126, close: 129.04, volume: 225702700 });
    expect(fake.calls(AAPL)[0]!.query.get('range')).toBe('5y');
  });

  it('drops rows with a null open/high/low/close instead of filling them; a null volume stays null', async () => {
    const body = recorded('yahoo__chart_AAPL_1d.json');
    const q = body.chart.result[0].indicators.quote[0];
    q.close[47] = null; // 2020-11-05 has no close → dropped
    q.open[45] = null; // 2020-11-03 has no open → dropped
    q.volume[48] = null; // 2020-11-06 keeps its prices, volume unknown
    fake.route(`GET ${AAPL}`, { body });
    const { data } = (await get('/v1/ohlcv?symbol=AAPL&timeframe=1d&limit=3')).json();
    expect(data.candles.map((c: { time: string }) => c.time)).toEqual(['2020-11-02T14:30:00.000Z', '2020-11-04T14:30:00.000Z', '2020-11-06T14:30:00.000Z']);
    expect(data.candles[2].volume).toBeNull();
    expect(data.candles[2].close).toBe(118.69);
  });

  it("drops Yahoo's separate live row on 1w: a row off the weekly grid (Mondays 00:00 New York) is not a candle", async () => {
    fake.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1wk_live_row.json') });
    const res = await get('/v1/ohlcv?symbol=AAPL&timeframe=1w&limit=6');
    expect(res.statusCode).toBe(200);
    expect(fake.calls(AAPL)[0]!.query.get('interval')).toBe('1wk');
    const { candles } = res.json().data;
    // Five weeks, Monday 2024-08-19 to Monday 2024-09-16 (00:00 EDT = 04:00Z); Thursday's row, stamped 2024-09-19T20:00:01Z, is
    // Yahoo's live copy of that day's session, not a sixth week. The week in progress is Yahoo's row for it (Monday-Wednesday).
    expect(candles.map((c: { time: string }) => c.time)).toEqual([
      '2024-08-19T04:00:00.000Z',
      '2024-08-26T04:00:00.000Z',
      '2024-09-02T04:00:00.000Z',
      '2024-09-09T04:00:00.000Z',
      '2024-09-16T04:00:00.000Z',
    ]);
    expect(candles.at(-1)).toEqual({ time: '2024-09-16T04:00:00.000Z', open: 216.54, high: 222.71, low: 213.92, close: 220.69, volume: 164771600 });

    // Without the live row (the same answer cut before it), nothing is dropped: the five weeks are all on the grid.
    const body = recorded('yahoo__chart_AAPL_1wk_live_row.json');
    const r = body.chart.result[0];
    r.timestamp.pop();
    for (const series of [...Object.values(r.indicators.quote[0]), r.indicators.adjclose[0].adjclose] as number[][]) series.pop();
    fake.route(`GET ${AAPL}`, { body });
    fake.requests.length = 0;
    const cut = (await get('/v1/ohlcv?symbol=AAPL&timeframe=1w&limit=20')).json().data.candles;
    expect(fake.calls(AAPL)).toHaveLength(1); // another range (6mo), so not the cached answer
    expect(cut).toEqual(candles);
  });

  it("drops Yahoo's separate live row on 1d: a second row on a New York date already served is not a candle", async () => {
    fake.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1d_live_row.EDITED.json') });
    const { candles } = (await get('/v1/ohlcv?symbol=AAPL&timeframe=1d&limit=2')).json().data;
    // The edited copy repeats 2020-11-06 at 21:00:01Z (16:00:01 EST) with a larger volume: the day's own row (09:30) is kept.
    expect(candles).toEqual([
      { time: '2020-11-05T14:30:00.000Z', open: 117.95, high: 119.62, low: 116.87, close: 119.03, volume: 126387100 },
      { time: '2020-11-06T14:30:00.000Z', open: 118.32, high: 119.2, low: 116.13, close: 118.69, volume: 114457900 },
    ]);
  });

  it('answers an empty window (no timestamp, no indicators) with no candles', async () => {
    const body = recorded('yahoo__chart_AAPL_1d.json');
    delete body.chart.result[0].timestamp;
    delete body.chart.result[0].indicators;
    fake.route(`GET ${AAPL}`, { body });
    const res = await get('/v1/ohlcv?symbol=AAPL&timeframe=1d');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.candles).toEqual([]);
  });

  it.each([
    ['1m', '1m'],
    ['5m', '5m'],
    ['15m', '15m'],
    ['30m', '30m'],
    ['1h', '60m'],
    ['1d', '1d'],
    ['1w', '1wk'],
  ])('maps timeframe %s to Yahoo interval %s', async (tf, interval) => {
    fake.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1d.json') });
    const res = await get(`/v1/ohlcv?symbol=AAPL&timeframe=${tf}`);
    expect(res.statusCode).toBe(200);
    expect(fake.calls(AAPL)[0]!.query.get('interval')).toBe(interval);
  });

  it('rejects 4h for equities with a 400 naming the timeframes they support', async () => {
    const res = await get('/v1/ohlcv?symbol=AAPL&timeframe=4h');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "query parameter 'timeframe' must be one of 1m, 5m, 15m, 30m, 1h, 1d, 1w for equities (Yahoo has no 4h bars)" });
    expect(fake.requests).toHaveLength(0);
  });

  it('answers 404 for a ticker Yahoo does not know', async () => {
    fake.route('GET /v8/finance/chart/ZZZZ', { status: 404, body: recorded('yahoo__chart_error_not_found.json') });
    const res = await get('/v1/ohlcv?symbol=ZZZZ&timeframe=1d');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'yahoo has no data for the ticker ZZZZ', source: 'yahoo' });
  });

  it.each<FailureCase>([
    ['HTTP 429', { status: 429, body: 'Too Many Requests' }, 'yahoo is rate limiting this server (HTTP 429)', 503],
    ...upstreamFailures('yahoo', { malformed: '{"chart":' }),
  ])('answers 502 naming yahoo on %s', async (_name, reply, message, status = 502) => {
    fake.route(`GET ${AAPL}`, reply);
    const res = await get('/v1/ohlcv?symbol=AAPL&timeframe=1d');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'yahoo' });
  });
});

describe('yahooRange: enough calendar days for `limit` bars, within Yahoo\'s limits', () => {
  it.each<[Parameters<typeof yahooRange>[0], number, string]>([
    // sessions = ceil(limit / bars per session); days = ceil(sessions × 7/5) + 4
    ['1m', 100, '7d'], // 1 session → 6 days → 7d
    ['1m', 1000, '7d'], // 3 sessions → 9 days, but 1m stops at 7 days (≈ 5 sessions ≈ 1,950 bars)
    ['5m', 1000, '1mo'], // 13 sessions → 23 days → 1mo (≥ 28 days)
    ['15m', 1000, '60d'], // 39 sessions → 59 days → 60d
    ['30m', 1000, '60d'], // 77 sessions → 112 days, capped at 60 days (≈ 41 sessions ≈ 530 bars)
    ['60m', 100, '1mo'], // 15 sessions → 25 days
    ['60m', 1000, '1y'], // 143 sessions → 205 days
    ['1d', 3, '1mo'], // 9 days
    ['1d', 100, '6mo'], // 144 days
    ['1d', 1000, '5y'], // 1404 days
    ['1wk', 100, '730d'], // 707 days → 730d
    ['1wk', 1000, 'max'], // 7007 days
  ])('%s × %i → %s', (interval, limit, range) => {
    expect(yahooRange(interval, limit)).toBe(range);
  });
});

describe('GET /v1/ohlcv — parameters and access', () => {
  it.each([
    ['?symbol=BTC&limit=0', "query parameter 'limit' must be a whole number from 1 to 1000"],
    ['?symbol=BTC&limit=1001', "query parameter 'limit' must be a whole number from 1 to 1000"],
    ['?symbol=BTC&limit=1.5', "query parameter 'limit' must be a whole number from 1 to 1000"],
    ['?symbol=BTC&limit=ten', "query parameter 'limit' must be a whole number from 1 to 1000"],
    ['?symbol=BTC&timeframe=2h', "query parameter 'timeframe' must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d, 1w"],
    // Any case, except an upper-case M: 1M is a month on Binance and in charting tools, never one minute here.
    [
      '?symbol=BTC&timeframe=1M',
      "query parameter 'timeframe' must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d, 1w; '1M' reads as months (M), which are not offered; minutes are written with a lower-case m (1m)",
    ],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/ohlcv${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: message });
    expect(fake.requests).toHaveLength(0);
  });

  it.each([
    ['4H', '4h'],
    ['1D', '1d'],
    ['1W', '1w'],
    [' 15m ', '15m'],
  ])('timeframe=%s is read as %s (enumerated parameters take any case)', async (given, canonical) => {
    fake.route(`GET ${KLINES}`, { body: recorded('binance__spot_klines.json') });
    const res = await get(`/v1/ohlcv?symbol=BTC&timeframe=${encodeURIComponent(given)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.timeframe).toBe(canonical);
    expect(fake.calls(KLINES)[0]!.query.get('interval')).toBe(canonical);
  });

  it('asset_class takes any case too', async () => {
    fake.route('GET /v8/finance/chart/ETH', { body: recorded('yahoo__chart_AAPL_1d.json') });
    const res = await get('/v1/ohlcv?symbol=ETH&asset_class=EQUITY&timeframe=1d');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ asset_class: 'equity', venue_symbol: 'ETH' });
  });

  it('accepts the bounds limit=1 and limit=1000', async () => {
    fake.route(`GET ${KLINES}`, { body: recorded('binance__spot_klines.json') });
    expect((await get('/v1/ohlcv?symbol=BTC&limit=1')).statusCode).toBe(200);
    expect((await get('/v1/ohlcv?symbol=BTC&limit=1000')).statusCode).toBe(200);
  });

  it('documents timeframe and limit (enum, default, bounds) for OpenAPI and the catalog', () => {
    const params = describeParams(t.app.services.catalog.find('/v1/ohlcv')!.def.query);
    const byName = Object.fromEntries(params.map((p) => [p.name, p]));
    expect(byName.timeframe).toMatchObject({ required: false, default: '1h', enum: ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'] });
    expect(byName.timeframe!.description).toMatch(/Equities support 1m, 5m, 15m, 30m, 1h, 1d, 1w/);
    expect(byName.limit).toMatchObject({ required: false, default: 100, minimum: 1, maximum: 1000 });
    expect(byName.symbol!.required).toBe(true);
    expect(t.app.services.catalog.find('/v1/ohlcv')!.access).toBe('paid');
  });

  it('requires credentials: 401 without a key, 200 with one', async () => {
    fake.route(`GET ${KLINES}`, { body: recorded('binance__spot_klines.json') });
    expect((await get('/v1/ohlcv?symbol=BTC', {})).statusCode).toBe(401);
    expect(fake.calls(KLINES)).toHaveLength(0);
    expect((await get('/v1/ohlcv?symbol=BTC')).statusCode).toBe(200);
  });
});
