// GET /v1/long-short-ratio against a fake Binance USD-M futures-data server on 127.0.0.1.
import { describe, expect, it } from 'vitest';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, BINANCE_FUTURES_BASE_URL: url }), { headers: TEST_KEY });

const GLOBAL = '/futures/data/globalLongShortAccountRatio';
const TOP_ACCOUNTS = '/futures/data/topLongShortAccountRatio';
const TOP_POSITIONS = '/futures/data/topLongShortPositionRatio';
const TAKER = '/futures/data/takerlongshortRatio';
const ALL = [GLOBAL, TOP_ACCOUNTS, TOP_POSITIONS, TAKER];

const T = 1591261042378; // the samples' timestamp, 2020-06-04T08:57:22.378Z
const H = 3_600_000;

/** The recorded samples, one row each. */
function serveSamples() {
  fake.route(`GET ${GLOBAL}`, { body: recorded('binance__futures_globalLongShortAccountRatio.json') });
  fake.route(`GET ${TOP_ACCOUNTS}`, { body: recorded('binance__futures_topLongShortAccountRatio.json') });
  fake.route(`GET ${TOP_POSITIONS}`, { body: recorded('binance__futures_topLongShortPositionRatio.json') });
  fake.route(`GET ${TAKER}`, { body: recorded('binance__futures_takerlongshortRatio.json') });
}

/** Three hourly rows per series built from the samples' shape, oldest first as Binance sends them. */
function serveHistory() {
  const ratioRows = (file: string, longs: string[]) =>
    longs.map((l, i) => {
      const row = recorded(file)[0];
      const short = (1 - Number(l)).toFixed(4);
      return { ...row, longAccount: l, shortAccount: short, longShortRatio: (Number(l) / Number(short)).toFixed(4), timestamp: T - (2 - i) * H };
    });
  fake.route(`GET ${GLOBAL}`, { body: ratioRows('binance__futures_globalLongShortAccountRatio.json', ['0.6500', '0.6800', '0.7069']) });
  fake.route(`GET ${TOP_ACCOUNTS}`, { body: ratioRows('binance__futures_topLongShortAccountRatio.json', ['0.6000', '0.6100', '0.6442']) });
  fake.route(`GET ${TOP_POSITIONS}`, { body: ratioRows('binance__futures_topLongShortPositionRatio.json', ['0.5000', '0.5200', '0.5344']) });
  const taker = recorded('binance__futures_takerlongshortRatio.json')[0];
  fake.route(`GET ${TAKER}`, {
    body: [
      { ...taker, buyVol: '100.0000', sellVol: '200.0000', buySellRatio: '0.5000', timestamp: T - 2 * H },
      { ...taker, buyVol: '300.0000', sellVol: '150.0000', buySellRatio: '2.0000', timestamp: T - H },
      taker,
    ],
  });
}

describe('GET /v1/long-short-ratio', () => {
  it('reads the recorded samples: fractions → percent, ratios as sent, ISO times', async () => {
    serveSamples();
    const res = await get('/v1/long-short-ratio?symbol=BTC');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    const time = '2020-06-04T08:57:22.378Z';
    expect(data.symbol).toBe('BTC/USDT');
    expect(data.venue_symbol).toBe('BTCUSDT');
    expect(data.venue).toBe('binance-futures');
    expect(data.period).toBe('1h');
    // longAccount "0.6622" → 66.22 %; Binance's own longShortRatio "0.1960" is passed through as sent
    // (the official example is internally inconsistent: 0.6622 / 0.3378 = 1.96).
    expect(data.global_accounts).toEqual({ long_pct: 66.22, short_pct: 33.78, ratio: 0.196, time });
    expect(data.top_trader_accounts).toEqual({ long_pct: 64.42, short_pct: 35.58, ratio: 1.8105, time });
    // Position ratio also arrives as longAccount/shortAccount: 0.5344 → 53.44, 0.4238 → 42.38.
    expect(data.top_trader_positions).toEqual({ long_pct: 53.44, short_pct: 42.38, ratio: 1.4342, time });
    expect(data.taker).toEqual({ buy_volume: 387.33, sell_volume: 248.503, ratio: 1.5586, time });
    expect(data.history.global_accounts).toEqual([data.global_accounts]);
    expect(data.history.taker).toEqual([data.taker]);
    expect(meta.sources).toHaveLength(1);
    expect(meta.sources[0]).toMatchObject({ provider: 'binance-futures', cached: false });

    // Defaults reached Binance: period=1h, limit=30, for each of the four series.
    for (const path of ALL) expect(Object.fromEntries(fake.calls(path)[0]!.query)).toEqual({ symbol: 'BTCUSDT', period: '1h', limit: '30' });
  });

  it('history is oldest first and the headline is the newest point', async () => {
    serveHistory();
    const { data } = (await get('/v1/long-short-ratio?symbol=BTCUSDT&period=1h&limit=3')).json();
    expect(data.history.global_accounts.map((r: { long_pct: number }) => r.long_pct)).toEqual([65, 68, 70.69]);
    expect(data.history.global_accounts.map((r: { time: string }) => r.time)).toEqual([
      '2020-06-04T06:57:22.378Z',
      '2020-06-04T07:57:22.378Z',
      '2020-06-04T08:57:22.378Z',
    ]);
    // 0.7069 → 70.69 % long, 0.2931 → 29.31 % short (no 29.310000000000002), ratio "2.4118" as sent.
    expect(data.global_accounts).toEqual({ long_pct: 70.69, short_pct: 29.31, ratio: 2.4118, time: '2020-06-04T08:57:22.378Z' });
    expect(data.top_trader_accounts.long_pct).toBe(64.42);
    expect(data.top_trader_positions.long_pct).toBe(53.44);
    expect(data.history.taker.map((r: { ratio: number }) => r.ratio)).toEqual([0.5, 2, 1.5586]);
    expect(data.taker.buy_volume).toBe(387.33);
  });

  it('sorts rows that arrive newest first', async () => {
    serveHistory();
    const rows = recorded('binance__futures_globalLongShortAccountRatio.json');
    fake.route(`GET ${GLOBAL}`, { body: [{ ...rows[0], timestamp: T }, { ...rows[0], longAccount: '0.5000', timestamp: T - H }] });
    const { data } = (await get('/v1/long-short-ratio?symbol=BTC')).json();
    expect(data.history.global_accounts.map((r: { long_pct: number }) => r.long_pct)).toEqual([50, 66.22]);
    expect(data.global_accounts.long_pct).toBe(66.22);
  });

  it.each([['5m', '500'], ['1d', '1'], ['12h', '250']])('period=%s limit=%s are passed to Binance', async (period, limit) => {
    serveSamples();
    const res = await get(`/v1/long-short-ratio?symbol=eth&period=${period}&limit=${limit}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.period).toBe(period);
    for (const path of ALL) expect(Object.fromEntries(fake.calls(path)[0]!.query)).toEqual({ symbol: 'ETHUSDT', period, limit });
  });

  it.each([
    ['timeframe=4h', '4h'],
    ['timeframe=12H', '12h'],
    ['period=1D', '1d'],
    ['timeframe=2h&period=2h', '2h'],
  ])('%s: `timeframe` (the name every route uses) or `period` (its older name here), any case → Binance period %s', async (qs, period) => {
    serveSamples();
    const res = await get(`/v1/long-short-ratio?symbol=BTC&${qs}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ timeframe: period, period });
    for (const path of ALL) expect(fake.calls(path)[0]!.query.get('period')).toBe(period);
  });

  it('timeframe and period with different values → 400 naming both', async () => {
    const res = await get('/v1/long-short-ratio?symbol=BTC&timeframe=4h&period=1h');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: "query parameters 'timeframe' and 'period' name the same thing (period is the older name); give one, or the same value in both",
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('a series Binance leaves empty is null with an empty history', async () => {
    serveSamples();
    fake.route(`GET ${TAKER}`, { body: [] });
    const { data } = (await get('/v1/long-short-ratio?symbol=BTC')).json();
    expect(data.taker).toBeNull();
    expect(data.history.taker).toEqual([]);
    expect(data.global_accounts).not.toBeNull();
  });
});

describe('long-short-ratio parameters', () => {
  it.each([
    ['missing symbol', 'period=1h', /^query parameter 'symbol' is required/],
    ['unknown period', 'symbol=BTC&period=3m', /^query parameter 'period' must be one of 5m, 15m, 30m, 1h, 2h, 4h, 6h, 12h, 1d$/],
    ['limit above 500', 'symbol=BTC&limit=501', /^query parameter 'limit' must be a whole number from 1 to 500$/],
    ['limit 0', 'symbol=BTC&limit=0', /^query parameter 'limit' must be a whole number from 1 to 500$/],
    ['limit not a number', 'symbol=BTC&limit=abc', /^query parameter 'limit' must be a whole number from 1 to 500$/],
    ['fractional limit', 'symbol=BTC&limit=2.5', /^query parameter 'limit' must be a whole number from 1 to 500$/],
  ])('%s → 400 naming the parameter', async (_name, qs, message) => {
    const res = await get(`/v1/long-short-ratio?${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('long-short-ratio: unknown symbols and failures', () => {
  it('Binance -1121 → 404 naming the provider', async () => {
    for (const p of ALL) fake.route(`GET ${p}`, { status: 400, body: { code: -1121, msg: 'Invalid symbol.' } });
    const res = await get('/v1/long-short-ratio?symbol=NOPEUSDT');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: "binance-futures lists no USD-M perpetual 'NOPEUSDT'", source: 'binance-futures' });
  });

  it('every series empty → 404', async () => {
    for (const p of ALL) fake.route(`GET ${p}`, { body: [] });
    const res = await get('/v1/long-short-ratio?symbol=BTC&period=5m');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: "binance-futures has no long/short data for 'BTCUSDT' at timeframe 5m", source: 'binance-futures' });
  });

  it.each<FailureCase>([
    ...upstreamFailures('binance-futures', { geoBlock: true, malformed: '[{"buySellRatio":', timeoutBody: [] }),
    ['unexpected shape', { body: [{ buySellRatio: 'x', buyVol: '1', sellVol: '1', timestamp: T }] }, 'binance-futures returned an unexpected response shape at 0.buySellRatio'],
  ])('one series failing (%s) → 502 with source', async (_name, reply, error) => {
    serveSamples();
    fake.route(`GET ${TAKER}`, reply);
    const res = await get('/v1/long-short-ratio?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error, source: 'binance-futures' });
  });

  it('requires credentials: no key → 401, the key → 200', async () => {
    serveSamples();
    expect((await get('/v1/long-short-ratio?symbol=BTC', {})).statusCode).toBe(401);
    expect(fake.requests).toHaveLength(0);
    expect((await get('/v1/long-short-ratio?symbol=BTC')).statusCode).toBe(200);
  });
});
