// The shared candle loader's fallback to Coinbase Exchange (/v1/ohlcv here; the analytics use the
// same loader): the documented row order [time, low, high, open, close, volume], newest first, paging
// at 300 per request, timeframes built from shorter buckets, missing buckets left out, and the
// hedge/breaker rules of /v1/price.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { aggregateCandles, bucketStart, closedCandles } from '../../src/analytics/candles.ts';
import { coinbaseCandlesHandler, type CoinbaseRow } from '../fakes/candles.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApps, type TestApp } from '../helpers.ts';

const KLINES = '/api/v3/klines';
const CANDLES = '/products/BTC-USD/candles';
const GEO_BLOCK = { status: 451, body: recorded('binance__error_451_restricted_location.json') };
const H = 3_600_000;
const D = 24 * H;

/** Freezes Date (only: timers run) at `iso`, so bucket arithmetic is exact. */
const freezeAt = (iso: string) => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(iso));
};

const t = useFakeUpstreamApps(['binance', 'coinbase'], (u) => ({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: u.binance, COINBASE_BASE_URL: u.coinbase }), {
  headers: TEST_KEY,
});
const { binance, coinbase } = t.fakes;
afterEach(() => vi.useRealTimers());

type Candle = { time: string; open: number; high: number; low: number; close: number; volume: number | null };

describe('GET /v1/ohlcv — Coinbase Exchange candles when Binance fails', () => {
  it('reads the columns as documented ([time, low, high, open, close, volume]) and turns newest-first rows into oldest first', async () => {
    freezeAt('2025-03-10T10:30:00Z');
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    const rows: Record<string, CoinbaseRow> = {
      '2025-03-10T08:00:00.000Z': [Date.parse('2025-03-10T08:00:00Z') / 1000, 10, 40, 20, 30, 5],
      '2025-03-10T09:00:00.000Z': [Date.parse('2025-03-10T09:00:00Z') / 1000, 11, 41, 21, 31, 6],
      '2025-03-10T10:00:00.000Z': [Date.parse('2025-03-10T10:00:00Z') / 1000, 12, 42, 22, 32, 7],
    };
    coinbase.route(`GET ${CANDLES}`, coinbaseCandlesHandler((ms) => rows[new Date(ms).toISOString()] ?? null));
    const res = await t.get('/v1/ohlcv?symbol=BTC&timeframe=1h&limit=3');
    expect(res.statusCode).toBe(200);
    // The fake answers newest first, as Coinbase does: 10:00, 09:00, 08:00.
    const q = coinbase.calls(CANDLES)[0]!.query;
    expect([q.get('granularity'), q.get('start'), q.get('end')]).toEqual(['3600', '2025-03-10T08:00:00.000Z', '2025-03-10T11:00:00.000Z']);
    const { data, meta } = res.json();
    expect(data).toEqual({
      symbol: 'BTC/USD',
      venue_symbol: 'BTC-USD',
      asset_class: 'crypto',
      timeframe: '1h',
      currency: 'USD',
      candles: [
        { time: '2025-03-10T08:00:00.000Z', open: 20, high: 40, low: 10, close: 30, volume: 5 },
        { time: '2025-03-10T09:00:00.000Z', open: 21, high: 41, low: 11, close: 31, volume: 6 },
        { time: '2025-03-10T10:00:00.000Z', open: 22, high: 42, low: 12, close: 32, volume: 7 },
      ],
    });
    expect(meta.fallback).toEqual({ from: 'binance', to: 'coinbase', reason: 'binance answered HTTP 451' });
    expect(meta.sources).toHaveLength(1);
    expect(meta.sources[0]).toMatchObject({ provider: 'coinbase', cached: false });
  });

  it('pages 1000 hourly candles in 4 requests of at most 300 buckets, with no duplicate at the page borders', async () => {
    freezeAt('2025-03-10T10:30:00Z');
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    // Every bucket has a candle whose open encodes its hour since the epoch.
    coinbase.route(`GET ${CANDLES}`, coinbaseCandlesHandler((ms) => [ms / 1000, ms / H - 1, ms / H + 1, ms / H, ms / H + 0.5, 1]));
    const res = await t.get('/v1/ohlcv?symbol=BTC&timeframe=1h&limit=1000');
    expect(res.statusCode).toBe(200);
    const newest = Date.parse('2025-03-10T10:00:00Z');
    // 299 + 299 + 299 + 103 buckets; each asks from its oldest bucket to one past its newest (300 at most).
    const pages = coinbase.calls(CANDLES).map((c) => [c.query.get('start'), c.query.get('end')]);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(pages).toEqual([
      [iso(newest - 298 * H), iso(newest + H)],
      [iso(newest - 597 * H), iso(newest - 298 * H)],
      [iso(newest - 896 * H), iso(newest - 597 * H)],
      [iso(newest - 999 * H), iso(newest - 896 * H)],
    ]);
    const candles: Candle[] = res.json().data.candles;
    expect(candles).toHaveLength(1000);
    candles.forEach((c, i) => {
      const ms = newest - (999 - i) * H;
      expect(c).toEqual({ time: iso(ms), open: ms / H, high: ms / H + 1, low: ms / H - 1, close: ms / H + 0.5, volume: 1 });
    });
  });

  it('builds 4h candles from 1h ones aligned to 00:00/04:00/08:00 UTC, the forming one from the hours so far', async () => {
    freezeAt('2025-03-10T10:30:00Z');
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    // Hour h of the day: low 100 + h, high 200 + h, open 150 + h, close 160 + h, volume 1 + h.
    const hourly = (ms: number): CoinbaseRow => {
      const h = new Date(ms).getUTCHours();
      return [ms / 1000, 100 + h, 200 + h, 150 + h, 160 + h, 1 + h];
    };
    coinbase.route(`GET ${CANDLES}`, coinbaseCandlesHandler(hourly));
    const res = await t.get('/v1/ohlcv?symbol=BTC&timeframe=4h&limit=3');
    expect(res.statusCode).toBe(200);
    // Three buckets from 00:00: 11 hourly candles, 00:00 to 10:00 (the hour forming now).
    const q = coinbase.calls(CANDLES)[0]!.query;
    expect([q.get('granularity'), q.get('start'), q.get('end')]).toEqual(['3600', '2025-03-10T00:00:00.000Z', '2025-03-10T11:00:00.000Z']);
    expect(res.json().data.candles).toEqual([
      // hours 0-3: open of hour 0, max high 203, min low 100, close of hour 3, volume 1+2+3+4
      { time: '2025-03-10T00:00:00.000Z', open: 150, high: 203, low: 100, close: 163, volume: 10 },
      // hours 4-7: volume 5+6+7+8
      { time: '2025-03-10T04:00:00.000Z', open: 154, high: 207, low: 104, close: 167, volume: 26 },
      // forming: hours 8, 9 and 10 (so far), volume 9+10+11
      { time: '2025-03-10T08:00:00.000Z', open: 158, high: 210, low: 108, close: 170, volume: 30 },
    ]);
    expect(res.json().meta.fallback.to).toBe('coinbase');
  });

  it('leaves out a 4h bucket with a missing hour (never filled), and a forming one missing an hour so far', async () => {
    freezeAt('2025-03-10T10:30:00Z');
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    const missing = new Set(['2025-03-10T05:00:00.000Z', '2025-03-10T09:00:00.000Z']);
    coinbase.route(
      `GET ${CANDLES}`,
      coinbaseCandlesHandler((ms) => (missing.has(new Date(ms).toISOString()) ? null : [ms / 1000, 1, 3, 2, 2, 1])),
    );
    const { data } = (await t.get('/v1/ohlcv?symbol=BTC&timeframe=4h&limit=3')).json();
    expect(data.candles.map((c: Candle) => c.time)).toEqual(['2025-03-10T00:00:00.000Z']);
  });

  it('leaves a bucket Coinbase published no candle for out of a direct timeframe (no trades → no row)', async () => {
    freezeAt('2025-03-10T10:30:00Z');
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    coinbase.route(`GET ${CANDLES}`, coinbaseCandlesHandler((ms) => (new Date(ms).getUTCHours() === 9 ? null : [ms / 1000, 1, 3, 2, 2, 1])));
    const { data } = (await t.get('/v1/ohlcv?symbol=BTC&timeframe=1h&limit=3')).json();
    expect(data.candles.map((c: Candle) => c.time)).toEqual(['2025-03-10T08:00:00.000Z', '2025-03-10T10:00:00.000Z']);
  });

  it('builds 30m from 15m candles and 1w from 1d candles starting on Monday, as Binance\'s weeks do', async () => {
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    coinbase.route(`GET ${CANDLES}`, coinbaseCandlesHandler((ms) => [ms / 1000, 1, 3, 2, 2.5, 1]));

    freezeAt('2025-03-10T10:40:00Z');
    const halfHours = (await t.get('/v1/ohlcv?symbol=BTC&timeframe=30m&limit=2')).json().data.candles;
    expect(coinbase.calls(CANDLES).at(-1)!.query.get('granularity')).toBe('900');
    // 10:00 from 10:00 + 10:15; the forming 10:30 from 10:30 alone so far.
    expect(halfHours).toEqual([
      { time: '2025-03-10T10:00:00.000Z', open: 2, high: 3, low: 1, close: 2.5, volume: 2 },
      { time: '2025-03-10T10:30:00.000Z', open: 2, high: 3, low: 1, close: 2.5, volume: 1 },
    ]);

    freezeAt('2025-03-12T10:30:00Z'); // a Wednesday
    const weeks = (await t.get('/v1/ohlcv?symbol=BTC&timeframe=1w&limit=2')).json().data.candles;
    const q = coinbase.calls(CANDLES).at(-1)!.query;
    expect([q.get('granularity'), q.get('start')]).toEqual(['86400', '2025-03-03T00:00:00.000Z']);
    // Monday 3 March: 7 days; Monday 10 March: Monday to Wednesday so far.
    expect(weeks.map((c: Candle) => [c.time, c.volume])).toEqual([
      ['2025-03-03T00:00:00.000Z', 7],
      ['2025-03-10T00:00:00.000Z', 3],
    ]);
  });

  it('asks Coinbase directly, without Binance or a fallback note, for an explicit USD pair (Binance lists none)', async () => {
    coinbase.route(`GET /products/ETH-USD/candles`, coinbaseCandlesHandler((ms) => [ms / 1000, 1, 3, 2, 2.5, 1]));
    const res = await t.get('/v1/ohlcv?symbol=ETH-USD&timeframe=1d&limit=5');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ symbol: 'ETH/USD', currency: 'USD' });
    expect(res.json().data.candles).toHaveLength(5);
    expect(res.json().meta.fallback).toBeUndefined();
    expect(binance.requests).toHaveLength(0);
  });

  it('does not fall back when Binance answers that it does not list the pair (404)', async () => {
    binance.route(`GET ${KLINES}`, { status: 400, body: recorded('binance__error_invalid_symbol.json') });
    const res = await t.get('/v1/ohlcv?symbol=FOOUSDT');
    expect(res.statusCode).toBe(404);
    expect(coinbase.requests).toHaveLength(0);
  });

  it('answers 404 from coinbase when Binance fails and Coinbase does not list the product', async () => {
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    coinbase.route('GET /products/BNB-USD/candles', { status: 404, body: recorded('coinbase__error_not_found.json') });
    const res = await t.get('/v1/ohlcv?symbol=BNB');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'coinbase does not list the product BNB-USD', source: 'coinbase' });
  });

  it.each([
    ['HTTP 500', { status: 500, body: 'down' }, 'fallback coinbase answered HTTP 500'],
    ['a row in another shape', { body: [[1741600800, '1', '2']] }, 'fallback coinbase returned an unexpected response shape'],
    ['its error body (HTTP 400)', { status: 400, body: { message: 'Unsupported granularity' } }, 'fallback coinbase error: Unsupported granularity'],
  ])('answers 502 naming both when Coinbase fails too: %s', async (_name, reply, fallbackMessage) => {
    binance.route(`GET ${KLINES}`, GEO_BLOCK);
    coinbase.route(`GET ${CANDLES}`, reply);
    const res = await t.get('/v1/ohlcv?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json().source).toBe('binance');
    expect(res.json().error).toMatch(new RegExp(`^binance answered HTTP 451; ${fallbackMessage}`));
  });
});

describe('the candle fallback follows /v1/price\'s hedge and breaker rules', () => {
  const binanceFake = new FakeUpstream();
  const coinbaseFake = new FakeUpstream();
  let app: TestApp;
  beforeAll(async () => {
    await Promise.all([binanceFake.start(), coinbaseFake.start()]);
    app = await makeApp({
      ...TEST_KEY_ENV,
      BINANCE_SPOT_BASE_URL: binanceFake.url,
      COINBASE_BASE_URL: coinbaseFake.url,
      HEDGE_DELAY_MS: '150',
      UPSTREAM_DEADLINE_MS: '1500',
      BREAKER_FAILURES: '2',
    });
  });
  afterAll(async () => {
    await app.app.close();
    await Promise.all([binanceFake.stop(), coinbaseFake.stop()]);
  });
  afterEach(() => {
    binanceFake.reset();
    coinbaseFake.reset();
    app.app.services.cache.clear();
    app.app.services.guard.reset();
  });
  const ohlcv = () => app.app.inject({ url: '/v1/ohlcv?symbol=BTC&timeframe=1h&limit=5', headers: TEST_KEY });

  it('Binance hanging: Coinbase answers after about the hedge delay, not after the deadline', async () => {
    binanceFake.route(`GET ${KLINES}`, { hang: true });
    coinbaseFake.route(`GET ${CANDLES}`, coinbaseCandlesHandler((ms) => [ms / 1000, 1, 3, 2, 2.5, 1]));
    const started = performance.now();
    const res = await ohlcv();
    const elapsed = performance.now() - started;
    expect(res.statusCode).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1000);
    expect(res.json().meta.fallback).toEqual({ from: 'binance', to: 'coinbase', reason: 'binance had not answered after 150 ms' });
  });

  it('Binance paused by its breaker: Coinbase at once without calling Binance, and the reason says so', async () => {
    binanceFake.route(`GET ${KLINES}`, GEO_BLOCK);
    coinbaseFake.route(`GET ${CANDLES}`, coinbaseCandlesHandler((ms) => [ms / 1000, 1, 3, 2, 2.5, 1]));
    for (let i = 0; i < 2; i++) {
      app.app.services.cache.clear();
      expect((await ohlcv()).statusCode).toBe(200);
    }
    app.app.services.cache.clear();
    const res = await ohlcv();
    expect(res.statusCode).toBe(200);
    expect(binanceFake.calls(KLINES)).toHaveLength(2);
    expect(res.json().meta.fallback.reason).toMatch(/^binance is failing \(2 failures in a row, last: binance answered HTTP 451\); calls are paused/);
  });
});

describe('aggregateCandles and closedCandles (pure)', () => {
  const bar = (iso: string, o: number, h: number, l: number, c: number, v: number | null = 1) => ({ time: iso, open: o, high: h, low: l, close: c, volume: v });

  it('a null volume makes the bucket volume null; prices still aggregate', () => {
    const now = Date.parse('2025-03-10T12:00:00Z');
    const hours = [0, 1, 2, 3].map((h) => bar(`2025-03-10T0${h}:00:00.000Z`, 10 + h, 20 + h, 5 + h, 11 + h, h === 2 ? null : 1));
    expect(aggregateCandles(hours, H, 4 * H, 0, now)).toEqual([bar('2025-03-10T00:00:00.000Z', 10, 23, 5, 14, null)]);
  });

  it('bucketStart aligns weeks on Monday with a 4-day offset', () => {
    // 2025-03-12 is a Wednesday; its week opens Monday 2025-03-10.
    expect(new Date(bucketStart(Date.parse('2025-03-12T10:30:00Z'), 7 * D, 4 * D)).toISOString()).toBe('2025-03-10T00:00:00.000Z');
  });

  it('a candle is closed when its open time + timeframe ≤ now', () => {
    const c = [bar('2025-03-10T08:00:00.000Z', 1, 1, 1, 1), bar('2025-03-10T09:00:00.000Z', 1, 1, 1, 1)];
    expect(closedCandles(c, H, Date.parse('2025-03-10T09:59:59.999Z')).map((x) => x.time)).toEqual(['2025-03-10T08:00:00.000Z']);
    expect(closedCandles(c, H, Date.parse('2025-03-10T10:00:00.000Z'))).toHaveLength(2);
  });
});
