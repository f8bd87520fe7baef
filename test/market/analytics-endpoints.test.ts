// /v1/atr, /v1/fvg, /v1/liquidity-levels and /v1/momentum-score end to end over fake Binance, Coinbase
// and Yahoo: closed candles only, the numbers of hand-worked series and of real AAPL bars, too few
// candles → 400, the momentum asset list, the Coinbase fallback.
import { TR, WSMA } from 'trading-signals';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Candle } from '../../src/analytics/candles.ts';
import { momentumScore } from '../../src/analytics/momentum.ts';
import { coinbaseCandlesHandler, constructedCoinbaseRow, constructedKlines, klinesHandler, retimed, type KlineRow } from '../fakes/candles.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApps } from '../helpers.ts';

const KLINES = '/api/v3/klines';
const AAPL = '/v8/finance/chart/AAPL';
const H = 3_600_000;
const D = 24 * H;
const NOW = '2025-03-10T10:30:00Z';
const iso = (ms: number) => new Date(ms).toISOString();

const t = useFakeUpstreamApps(
  ['binance', 'coinbase', 'yahoo'],
  (u) => ({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: u.binance, COINBASE_BASE_URL: u.coinbase, YAHOO_BASE_URL: u.yahoo }),
  { headers: TEST_KEY },
);
const { binance, coinbase, yahoo } = t.fakes;

/** Freezes Date only (timers run), so the forming candle is known. */
const freeze = () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
};
afterEach(() => vi.useRealTimers());

/** A Binance kline row (times are re-stamped by the fake). */
const row = (open: number, high: number, low: number, close: number): KlineRow => [0, String(open), String(high), String(low), String(close), '1.00000000', 0, '100.0', 10, '0.5', '50.0', '0'];

describe('GET /v1/atr', () => {
  // 128 candles of high 101, low 99, close 100 (TR 2), then one of 104 / 96 / 100 (TR 8), then the forming one.
  // ATR(2) takes 112 closed candles: 3 seed it, 10 warm it up ((1/2)^10 ≤ 0.001), 99 more complete the window.
  const rows = [...Array.from({ length: 128 }, () => row(100, 101, 99, 100)), row(100, 104, 96, 100), row(100, 1000, 1, 500)];

  it('computes on closed candles: ATR(2) = (2 × 1 + 8) / 2 = 5, 5 % of 100, above all 99 other ATR% values → extreme', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler(rows));
    const res = await t.get('/v1/atr?symbol=BTC&timeframe=1d&period=2');
    expect(res.statusCode).toBe(200);
    // 112 closed candles, plus the one that may be forming.
    const q = binance.calls(KLINES)[0]!.query;
    expect([q.get('symbol'), q.get('interval'), q.get('limit')]).toEqual(['BTCUSDT', '1d', '113']);
    const lastClosed = Date.parse('2025-03-09T00:00:00Z');
    expect(res.json().data).toEqual({
      symbol: 'BTC/USDT',
      venue_symbol: 'BTCUSDT',
      asset_class: 'crypto',
      timeframe: '1d',
      period: 2,
      currency: 'USDT',
      atr: 5,
      atr_pct: 5,
      last_close: 100,
      percentile: 100,
      regime: 'extreme',
      lookback: { bars: 100, from: iso(lastClosed - 99 * D), to: iso(lastClosed) },
      // The candle forming since 2025-03-10T00:00 is dropped: the last closed one ends then.
      as_of: '2025-03-10T00:00:00.000Z',
    });
    expect(res.json().meta.sources[0].provider).toBe('binance');
  });

  it('asks for 209 candles by default (period 14: 15 seed, 94 warm-up, 99 more for the window, one maybe forming)', async () => {
    binance.route(`GET ${KLINES}`, klinesHandler());
    expect((await t.get('/v1/atr?symbol=ETH')).statusCode).toBe(200);
    expect(binance.calls(KLINES)[0]!.query.get('limit')).toBe('209');
  });

  it('answers 400 saying how many candles are needed when the source has too few', async () => {
    binance.route(`GET ${KLINES}`, { body: recorded('binance__spot_klines.json') });
    const res = await t.get('/v1/atr?symbol=BTC&timeframe=1d');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error:
        "query parameter 'period' = 14 (Wilder's ATR: 15 candles seed it, 94 more bring the seed's weight to 0.1 % or less, 99 more complete the percentile window of 100) needs at least 208 closed 1d candles; binance has 1 for BTC/USDT",
    });

    yahoo.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1d.json') });
    const equity = await t.get('/v1/atr?symbol=AAPL&period=2&timeframe=1d');
    expect(equity.statusCode).toBe(400);
    expect(equity.json().error).toMatch(/needs at least 112 closed 1d candles; yahoo has 49 for AAPL$/);
  });

  it.each([
    ['period=1', "query parameter 'period' must be a whole number from 2 to 114"],
    ['period=201', "query parameter 'period' must be a whole number from 2 to 114"],
    ['timeframe=2h', "query parameter 'timeframe' must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d, 1w"],
  ])('400 for %s', async (qs, error) => {
    const res = await t.get(`/v1/atr?symbol=BTC&${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error });
    expect(binance.requests).toHaveLength(0);
  });
});

describe('/v1/atr converged, and the same as /v1/momentum-score', () => {
  /** Wilder's ATR by trading-signals (its TR, then WSMA), one value per candle from `period` on, over exactly `c`. */
  const referenceAtr = (c: Candle[], period: number): number[] => {
    const tr = new TR();
    const wsma = new WSMA(period);
    const out: number[] = [];
    c.forEach((b, i) => {
      const range = tr.update(b, false);
      if (i === 0) return; // trading-signals' first TR is high − low; Wilder's starts from the second candle
      const v = wsma.update(range, false);
      if (v !== null) out.push(v);
    });
    return out;
  };
  /** ATR% percentile of the newest of the last 100 values, as documented: share of the other 99 strictly below. */
  const percentileOf = (atr: number[], c: Candle[]) => {
    const pct = atr.slice(-100).map((a, k) => (a / c[c.length - 100 + k]!.close) * 100);
    return (100 * pct.slice(0, -1).filter((v) => v < pct.at(-1)!).length) / 99;
  };
  /** The closed candles of the constructed series as the fake serves them on 4h at NOW (rows 0-598; row 599 is forming). */
  const closed4h = (): Candle[] =>
    retimed(constructedKlines(), '4h', 600)
      .slice(0, -1)
      .map((r) => ({ time: iso(r[0]), open: Number(r[1]), high: Number(r[2]), low: Number(r[3]), close: Number(r[4]), volume: Number(r[5]) }));

  it('ATR(14): /v1/atr and /v1/momentum-score give the same ATR, percentile and regime on the same candles', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler());
    const atr = (await t.get('/v1/atr?symbol=BTC&timeframe=4h&period=14')).json().data;
    const momentum = (await t.get('/v1/momentum-score?symbol=BTC&timeframe=4h')).json().data.indicators;
    // Before: /v1/atr seeded its ATR 100 candles before the window (percentile 83.84), the momentum score 486 before (92.93).
    expect([momentum.atr14, momentum.atr_pct, momentum.atr_percentile, momentum.atr_regime]).toEqual([atr.atr, atr.atr_pct, atr.percentile, atr.regime]);
    // Both are trading-signals' ATR(14) over the 208 candles of the report (15 seed, 94 warm-up, 99 more for the window).
    const c = closed4h().slice(-208);
    const ref = referenceAtr(c, 14);
    expect(Math.abs(atr.atr - ref.at(-1)!)).toBeLessThan(1e-9);
    expect(atr.percentile).toBeCloseTo(percentileOf(ref, c), 9);
    expect(atr).toMatchObject({ percentile: 92.9292929293, regime: 'high' });
  });

  it('ATR(50) agrees with trading-signals over the same 492 candles, and with a converged ATR over all 599', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler());
    const res = await t.get('/v1/atr?symbol=BTC&timeframe=4h&period=50');
    expect(res.statusCode).toBe(200);
    // 50 + 1 seed, 342 warm-up ((49/50)^342 = 0.00099 ≤ 0.001), 99 more: 492 closed candles, one more asked for.
    expect(binance.calls(KLINES)[0]!.query.get('limit')).toBe('493');
    const { data } = res.json();
    const all = closed4h();
    const same = referenceAtr(all.slice(-492), 50);
    expect(Math.abs(data.atr - same.at(-1)!)).toBeLessThan(1e-9);
    expect(data.percentile).toBeCloseTo(percentileOf(same, all.slice(-492)), 9);
    // Converged: seeded 549 candles back instead of 441, the ATR moves by 3e-7 of itself, the percentile not at all.
    // (Seeded 100 candles before the window, as before, ATR(50) was 0.31 % off.)
    const converged = referenceAtr(all, 50);
    expect(Math.abs(data.atr / converged.at(-1)! - 1)).toBeLessThan(1e-6);
    expect(data.percentile).toBeCloseTo(percentileOf(converged, all), 9);
  });

  it('refuses a period whose warm-up does not fit in one load (115 and more), and says how many candles a period needs', async () => {
    const tooLong = await t.get('/v1/atr?symbol=BTC&period=115');
    expect(tooLong.json()).toEqual({ error: "query parameter 'period' must be a whole number from 2 to 114" });
    binance.route(`GET ${KLINES}`, klinesHandler());
    const res = await t.get('/v1/atr?symbol=BTC&timeframe=4h&period=114');
    expect(res.statusCode).toBe(400);
    // 114 needs 999 closed candles (115 + 785 + 99); the constructed series has 599.
    expect(res.json()).toEqual({
      error:
        "query parameter 'period' = 114 (Wilder's ATR: 115 candles seed it, 785 more bring the seed's weight to 0.1 % or less, 99 more complete the percentile window of 100) needs at least 999 closed 4h candles; binance has 599 for BTC/USDT",
    });
    expect(binance.calls(KLINES)[0]!.query.get('limit')).toBe('1000');
  });
});

describe('GET /v1/fvg', () => {
  it('finds the gaps of the real AAPL daily bars (Yahoo) with their fill and distance from the last close', async () => {
    yahoo.route(`GET ${AAPL}`, { body: recorded('yahoo__chart_AAPL_1d.json') });
    const res = await t.get('/v1/fvg?symbol=AAPL&timeframe=1d');
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data).toMatchObject({ symbol: 'AAPL', asset_class: 'equity', currency: 'USD', price: 118.69, candles_analysed: 49, as_of: '2020-11-07T14:30:00.000Z' });
    expect(data.gaps).toHaveLength(15);
    // 1 Sep high 134.8, 3 Sep high 128.84 < 1 Sep low 130.53: bearish 128.84 … 130.53; no later high reached 128.84
    // (the highest is 125.39): unfilled; (128.84 − 118.69) / 118.69 × 100 = 8.5517 % above.
    expect(data.gaps[0]).toEqual({
      direction: 'bearish',
      top: 130.53,
      bottom: 128.84,
      ce: 129.685,
      size: 1.69,
      size_pct: expect.closeTo(1.30315765123, 9),
      formed_at: '2020-09-02T13:30:00.000Z',
      age_candles: 45,
      status: 'unfilled',
      fill_pct: 0,
      distance_pct: expect.closeTo(8.55168927458, 9),
    });
    expect(data.nearest_unfilled_above).toEqual(data.gaps[0]);
    // 3 Nov high 111.49, 5 Nov low 116.87: bullish 111.49 … 116.87 (size 5.38); 6 Nov's low 116.13 reached
    // 0.74 into it: 13.75 %.
    expect(data.gaps[13]).toMatchObject({ direction: 'bullish', bottom: 111.49, top: 116.87, formed_at: '2020-11-04T14:30:00.000Z', age_candles: 1, status: 'partially_filled' });
    expect(data.gaps[13].fill_pct).toBeCloseTo(13.7546468401, 9);
    // 4 Nov high 115.59, 6 Nov low 116.13: the newest gap, below the close 118.69 by 2.157 %: the nearest below.
    expect(data.nearest_unfilled_below).toMatchObject({ bottom: 115.59, top: 116.13, age_candles: 0, status: 'unfilled' });
    expect(data.nearest_unfilled_below.distance_pct).toBeCloseTo(-2.15687926531, 9);
  });

  it('ignores the forming candle: its low would fill the gap, but the gap stays unfilled', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler([row(10, 11, 9, 10.5), row(10.5, 14, 10.4, 13.5), row(13.5, 15, 12, 14.5), row(14.5, 14.6, 5, 6)]));
    const res = await t.get('/v1/fvg?symbol=BTC&timeframe=1h&lookback=3');
    expect(res.statusCode).toBe(200);
    expect(binance.calls(KLINES)[0]!.query.get('limit')).toBe('4');
    const { data } = res.json();
    expect(data).toMatchObject({ price: 14.5, candles_analysed: 3, as_of: '2025-03-10T10:00:00.000Z' });
    expect(data.gaps).toEqual([
      {
        direction: 'bullish',
        top: 12,
        bottom: 11,
        ce: 11.5,
        size: 1,
        size_pct: 8.69565217391,
        formed_at: '2025-03-10T08:00:00.000Z',
        age_candles: 0,
        status: 'unfilled',
        fill_pct: 0,
        distance_pct: -17.2413793103,
      },
    ]);
  });

  it('asks Binance for at most 1000 candles (its limit): lookback=1000 analyses the 999 closed ones', async () => {
    binance.route(`GET ${KLINES}`, klinesHandler());
    const res = await t.get('/v1/fvg?symbol=BTC&lookback=1000');
    expect(res.statusCode).toBe(200);
    expect(binance.calls(KLINES)[0]!.query.get('limit')).toBe('1000');
    // The constructed series has 600 rows, the newest forming.
    expect(res.json().data.candles_analysed).toBe(599);
  });

  it('judges "closed" at the time the request was sent: a candle forming then stays out though the answer came after its hour ended', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-03-10T09:59:59.900Z'));
    // Binance makes its answer before 10:00 (the 09:00 candle forming, its low of 5 not final), and it arrives at 10:00:00.100.
    const rows = [row(10, 11, 9, 10.5), row(10.5, 14, 10.4, 13.5), row(13.5, 15, 12, 14.5), row(14.5, 14.6, 5, 6)];
    binance.route(`GET ${KLINES}`, (req) => {
      const body = retimed(rows, '1h', Number(req.query.get('limit')));
      vi.setSystemTime(new Date('2025-03-10T10:00:00.100Z'));
      return { body };
    });
    const first = (await t.get('/v1/fvg?symbol=BTC&lookback=3')).json();
    expect(first.meta.sources[0].fetched_at).toBe('2025-03-10T10:00:00.100Z');
    // The 09:00 candle was forming when the request was sent: the closed ones are 06:00-08:00, the last ending at 09:00.
    expect(first.data).toMatchObject({ candles_analysed: 3, price: 14.5, as_of: '2025-03-10T09:00:00.000Z' });
    // The cached answer keeps the time its request was sent: the 09:00 candle stays out of it too.
    vi.setSystemTime(new Date('2025-03-10T10:00:10Z'));
    const second = (await t.get('/v1/fvg?symbol=BTC&lookback=3')).json();
    expect(second.meta.sources[0].cached).toBe(true);
    expect(second.data).toEqual(first.data);
  });

  it('judges "closed" at the time the request was sent: a cached answer keeps its forming candle out after its hour ends', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-03-10T09:59:50Z'));
    binance.route(`GET ${KLINES}`, klinesHandler([row(10, 11, 9, 10.5), row(10.5, 14, 10.4, 13.5), row(13.5, 15, 12, 14.5), row(14.5, 14.6, 5, 6)]));
    const first = (await t.get('/v1/fvg?symbol=BTC&lookback=3')).json();
    // 20 s later the 09:00 candle's hour is over, but the cached answer (CACHE_TTL_OHLCV_S 30) holds it as it was at 09:59:50.
    vi.setSystemTime(new Date('2025-03-10T10:00:10Z'));
    const second = (await t.get('/v1/fvg?symbol=BTC&lookback=3')).json();
    expect(second.meta.sources[0].cached).toBe(true);
    expect(binance.calls(KLINES)).toHaveLength(1);
    expect(second.data).toEqual(first.data);
    expect(second.data).toMatchObject({ candles_analysed: 3, price: 14.5, as_of: '2025-03-10T09:00:00.000Z' });
  });

  it('answers 400 with fewer than 3 closed candles, and for a lookback out of bounds', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler([row(1, 2, 0.5, 1.5), row(1.5, 2, 1, 1.8), row(1.8, 2, 1, 1.9)]));
    const few = await t.get('/v1/fvg?symbol=BTC');
    expect(few.statusCode).toBe(400);
    expect(few.json().error).toBe('a fair value gap (three candles) needs at least 3 closed 1h candles; binance has 2 for BTC/USDT');
    const bad = await t.get('/v1/fvg?symbol=BTC&lookback=2');
    expect(bad.json()).toEqual({ error: "query parameter 'lookback' must be a whole number from 3 to 1000" });
  });
});

describe('GET /v1/liquidity-levels', () => {
  // The hand-worked series of test/analytics/liquidity.test.ts after four quiet candles (no swing among them, none
  // created at its first candle), then a forming candle that would take every level if it counted.
  const quiet = Array.from({ length: 4 }, () => row(8.5, 9, 7.9, 8.5));
  const series: [number, number, number][] = [
    [10, 8, 9.5], [14, 9, 13], [13.5, 11, 12], [12.5, 10, 10.5], [12, 10.2, 11.5], [14.5, 11, 12.5],
    [13, 9.5, 9.8], [12, 10, 11.8], [12.02, 10.5, 11], [11.9, 10.4, 11.2], [12.0, 10.6, 11.5], [11.95, 10.9, 11.3],
  ];
  const rows = [...quiet, ...series.map(([h, l, c]) => row(c, h, l, c)), row(11.3, 30, 1, 30)];
  // Hand series index k opens at 10:00 − (12 − k) h: #0 at 22:00 the day before, #10 at 08:00, #11 at 09:00.
  const at = (k: number) => iso(Date.parse('2025-03-10T10:00:00Z') - (12 - k) * H);

  it('reports the swings, their status, the equal-high pool and the nearest untaken levels', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler(rows));
    const res = await t.get('/v1/liquidity-levels?symbol=BTC&timeframe=1h&swing_bars=1&lookback=30');
    expect(res.statusCode).toBe(200);
    const { data } = res.json();
    expect(data).toMatchObject({ symbol: 'BTC/USDT', swing_bars: 1, price: 11.3, candles_analysed: 16, as_of: '2025-03-10T10:00:00.000Z' });
    expect(data.buy_side).toEqual([
      { price: 14, formed_at: at(1), status: 'swept' },
      { price: 14.5, formed_at: at(5), status: 'untaken' },
      { price: 12.02, formed_at: at(8), status: 'untaken' },
      { price: 12, formed_at: at(10), status: 'untaken' },
    ]);
    expect(data.sell_side).toEqual([
      { price: 10, formed_at: at(3), status: 'taken' },
      { price: 9.5, formed_at: at(6), status: 'untaken' },
      { price: 10.4, formed_at: at(9), status: 'untaken' },
    ]);
    // 15 true ranges (1.1 × 3, 2, 5, 2.5, 2.5, 1.8, 3.5, 3.5, 2.2, 1.52, 1.5, 1.4, then 1.05): the first ATR(14) is the mean of
    // the first 14, 30.72 / 14 = 2.194285…; then (2.194285… × 13 + 1.05) / 14 = 2.11255…; the tolerance 0.211 pools 12 and 12.02 only.
    expect(data.atr).toBeCloseTo(2.11255102041, 10);
    expect(data.pool_tolerance).toBeCloseTo(0.211255102041, 10);
    expect(data.pools).toEqual({ buy_side: [{ price: 12.02, count: 2, members: [{ price: 12.02, formed_at: at(8) }, { price: 12, formed_at: at(10) }] }], sell_side: [] });
    expect(data.nearest_untaken_above).toEqual({ side: 'buy_side', price: 12, formed_at: at(10), distance_pct: 6.19469026549 });
    expect(data.nearest_untaken_below).toEqual({ side: 'sell_side', price: 10.4, formed_at: at(9), distance_pct: -7.96460176991 });
  });

  it('answers 400 with too few closed candles for the swings or the ATR', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler(rows.slice(4)));
    const res = await t.get('/v1/liquidity-levels?symbol=BTC&swing_bars=1');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe(
      "query parameter 'swing_bars' = 1 (a swing needs 3 candles; the pool tolerance needs ATR(14), 15 candles) needs at least 15 closed 1h candles; binance has 12 for BTC/USDT",
    );
    expect((await t.get('/v1/liquidity-levels?symbol=BTC&swing_bars=11')).json()).toEqual({ error: "query parameter 'swing_bars' must be a whole number from 1 to 10" });
  });
});

describe('GET /v1/momentum-score', () => {
  const ASSETS = 'BTC, ETH, SOL, BNB, XRP, DOGE, ADA, AVAX, LINK, DOT';
  const ACCEPTED = `one of the supported assets ${ASSETS}, alone or as a pair quoted in USDT or USD (BTCUSDT, BTC-USD)`;

  it.each([
    ['symbol=PEPE', `query parameter 'symbol' must be ${ACCEPTED}; got 'PEPE'`],
    ['symbol=PEPEUSDT', `query parameter 'symbol' must be ${ACCEPTED}; got 'PEPEUSDT'`],
    ['symbol=BTCEUR', `query parameter 'symbol' must be ${ACCEPTED}; got 'BTCEUR'`],
    ['symbol=BTC-USDC', `query parameter 'symbol' must be ${ACCEPTED}; got 'BTC-USDC'`],
    ['timeframe=4h', `query parameter 'symbol' is required: ${ACCEPTED}`],
    ['symbol=BTC&timeframe=15m', "query parameter 'timeframe' must be one of 1h, 4h, 1d"],
  ])('400 for %s, naming what is accepted', async (qs, error) => {
    const res = await t.get(`/v1/momentum-score?${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error });
    expect(binance.requests).toHaveLength(0);
  });

  it('gives the verdict of the last 500 closed candles (case-insensitive symbol and timeframe), with the disclaimer', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, klinesHandler());
    const res = await t.get('/v1/momentum-score?symbol=eth&timeframe=4H');
    expect(res.statusCode).toBe(200);
    const q = binance.calls(KLINES)[0]!.query;
    expect([q.get('symbol'), q.get('interval'), q.get('limit')]).toEqual(['ETHUSDT', '4h', '501']);
    const { data, meta } = res.json();
    // The same candles through the pure function: rows 99-598 of the constructed series (row 599 is forming).
    const closed = retimed(constructedKlines(), '4h', 501).slice(0, 500).map((r) => ({
      time: iso(r[0]), open: Number(r[1]), high: Number(r[2]), low: Number(r[3]), close: Number(r[4]), volume: Number(r[5]),
    }));
    const m = momentumScore(closed, 'ETH/USDT 4h')!;
    expect(data).toMatchObject({ symbol: 'ETH/USDT', venue_symbol: 'ETHUSDT', currency: 'USDT', timeframe: '4h', candles_analysed: 500, as_of: '2025-03-10T08:00:00.000Z' });
    expect(data).toMatchObject({ bias: 'bearish', confidence: 47, score: -0.555555555556, price: 32207.33 });
    expect(data.signals).toEqual(m.signals);
    expect(data.thesis).toBe(m.thesis);
    expect([data.entry, data.invalidation, data.targets]).toEqual([m.entry, m.invalidation, m.targets]);
    expect(meta.disclaimer).toMatch(/^Not financial advice/);
  });

  it('answers 400 saying it needs 208 closed candles (EMA200, the ATR(14) report with its warm-up) when the source has fewer', async () => {
    binance.route(`GET ${KLINES}`, { body: recorded('binance__spot_klines.json') });
    const res = await t.get('/v1/momentum-score?symbol=BTC');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'the momentum score (EMA200 and the ATR(14) report) needs at least 208 closed 1h candles; binance has 1 for BTC/USDT' });
  });

  it('falls back to Coinbase Exchange when Binance is geo-blocked: 4h candles from 1h ones, 7 pages', async () => {
    freeze();
    binance.route(`GET ${KLINES}`, { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    coinbase.route('GET /products/SOL-USD/candles', coinbaseCandlesHandler(constructedCoinbaseRow));
    const res = await t.get('/v1/momentum-score?symbol=SOL&timeframe=4h');
    expect(res.statusCode).toBe(200);
    // 501 buckets of 4 h up to the one forming since 08:00: hourly candles from 08:00 − 2000 h to 10:00 (forming) = 2003 → 7 pages of 299.
    expect(coinbase.calls('/products/SOL-USD/candles')).toHaveLength(7);
    expect(coinbase.calls('/products/SOL-USD/candles').every((c) => c.query.get('granularity') === '3600')).toBe(true);
    const { data, meta } = res.json();
    expect(data).toMatchObject({ symbol: 'SOL/USD', timeframe: '4h', candles_analysed: 500, as_of: '2025-03-10T08:00:00.000Z' });
    expect(meta.fallback).toEqual({ from: 'binance', to: 'coinbase', reason: 'binance answered HTTP 451' });
    expect(meta.sources.map((s: { provider: string }) => s.provider)).toEqual(['coinbase']);
  });

  it('lists the 10 assets in /v1/status (the symbol parameter takes pairs too, so it is described, not an enum)', async () => {
    const status = (await t.get('/v1/status', {})).json().data.endpoints.find((e: { path: string }) => e.path === '/v1/momentum-score');
    const symbol = status.parameters.find((p: { name: string }) => p.name === 'symbol');
    expect(symbol).toMatchObject({ required: true, type: 'string' });
    expect(symbol.description).toContain(ASSETS);
    expect(status.access).toBe('paid');
  });
});

describe('access', () => {
  it.each(['/v1/atr?symbol=BTC', '/v1/fvg?symbol=BTC', '/v1/liquidity-levels?symbol=BTC', '/v1/momentum-score?symbol=BTC'])('%s is paid: 401 without a key', async (url) => {
    expect((await t.get(url, {})).statusCode).toBe(401);
    expect(binance.requests).toHaveLength(0);
  });
});
