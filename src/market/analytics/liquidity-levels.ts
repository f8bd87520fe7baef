// /v1/liquidity-levels: swing highs and lows of a crypto pair or a US equity/ETF as buy-side and
// sell-side liquidity, whether later candles swept or took them, and pools of relative-equal swings
// (src/analytics/liquidity.ts).
import { z } from 'zod';
import { wilderAtr } from '../../analytics/atr.ts';
import { liquidityLevels, POOL_TOLERANCE_ATR, SWING_BARS } from '../../analytics/liquidity.ts';
import { clean } from '../../analytics/numbers.ts';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { TIMEFRAMES } from '../candles.ts';
import { asOfField, CLOSED_CANDLES_TEXT, loadClosedCandles } from '../closed-candles.ts';
import { assetClassParam, symbolParam } from '../../params/symbols.ts';
import { resolveSymbol } from '../resolve-symbol.ts';
import { CANDLE_TIMEFRAMES_TEXT, timeframeQuery } from '../timeframe.ts';

/** The ATR that scales the pool tolerance. */
const ATR_PERIOD = 14;

const query = z.object({
  symbol: symbolParam,
  timeframe: timeframeQuery(TIMEFRAMES, CANDLE_TIMEFRAMES_TEXT),
  swing_bars: boundedInt(1, 10, SWING_BARS, 'N: a swing high (low) is a candle whose high (low) is strictly above (below) those of the N candles on each side, 1-10.'),
  lookback: boundedInt(30, 1000, 200, 'Closed candles analysed (the most recent), 30-1000 (1000 gives 999 while a candle is forming: sources serve 1000 at most).'),
  asset_class: assetClassParam,
});

const level = z.object({
  price: z.number().describe('The swing high (buy-side) or swing low (sell-side)'),
  formed_at: z.string().describe('Open time of the swing candle, ISO-8601 UTC'),
  status: z
    .enum(['untaken', 'swept', 'taken'])
    .describe('taken: a later close went through the level; swept: a later wick went through but every later close stayed on this side; untaken: no later candle traded through it'),
});

const pool = z.object({
  price: z.number().describe('The outermost member: the highest of relative-equal highs, the lowest of relative-equal lows'),
  count: z.number().int().describe('Members (2 or more)'),
  members: z.array(z.object({ price: z.number(), formed_at: z.string() })).describe('The untaken swings of the pool, oldest first'),
});

const nearest = z
  .object({
    side: z.enum(['buy_side', 'sell_side']),
    price: z.number(),
    formed_at: z.string(),
    distance_pct: z.number().describe('(level − price) / price × 100'),
  })
  .nullable();

const data = z.object({
  symbol: z.string().describe('BASE/QUOTE of the market used for crypto, the ticker for equities'),
  venue_symbol: z.string().describe('The market as the venue that served the candles spells it: BTCUSDT (Binance), BTC-USD (Coinbase Exchange), BRK-B (Yahoo)'),
  asset_class: z.enum(['crypto', 'equity']),
  timeframe: z.enum(TIMEFRAMES),
  currency: z.string().nullable().describe('Currency of the prices'),
  swing_bars: z.number().int().describe('N candles on each side of a swing'),
  price: z.number().describe('Close of the last closed candle'),
  candles_analysed: z.number().int().describe('Closed candles searched (lookback, or fewer when the source has fewer)'),
  atr: z.number().describe(`Wilder's ATR(${ATR_PERIOD}) at the last closed candle, in the price currency`),
  pool_tolerance: z.number().describe(`${POOL_TOLERANCE_ATR} × atr, in the price currency: swings of one side within this of the first (lowest) swing of a group are relative-equal`),
  buy_side: z.array(level).describe('Swing highs, oldest first: buy-side liquidity rests above them'),
  sell_side: z.array(level).describe('Swing lows, oldest first: sell-side liquidity rests below them'),
  pools: z
    .object({ buy_side: z.array(pool), sell_side: z.array(pool) })
    .describe('Relative-equal untaken swings: sorted by price, a pool starts at a swing and takes each next one within pool_tolerance of it'),
  nearest_untaken_above: nearest.describe('The untaken swing high nearest the price (at or above it); null when none'),
  nearest_untaken_below: nearest.describe('The untaken swing low nearest the price (at or below it); null when none'),
  as_of: asOfField(),
});

export const liquidityLevelsRoute = defineRoute({
  path: '/v1/liquidity-levels',
  summary: 'Swing highs and lows as buy-side and sell-side liquidity, with sweeps and equal-level pools',
  description:
    CLOSED_CANDLES_TEXT +
    'A swing high (low) is a candle whose high (low) is strictly above (below) those of the swing_bars candles on each side (so the last swing_bars candles cannot be swings yet). ' +
    'Buy-side liquidity rests above swing highs, sell-side below swing lows. Status from the later candles: taken = a close went through; swept = only a wick went through; untaken = neither. ' +
    `Pools: untaken swings of one side within ${POOL_TOLERANCE_ATR} × ATR(${ATR_PERIOD}) of each other (sorted by price, grouped from the first). ` +
    `Needs max(2 × swing_bars + 1, ${ATR_PERIOD + 1}) closed candles, else 400.`,
  tag: 'Analytics',
  access: 'paid',
  maxStale: 'CANDLES_STALE_S',
  query,
  data,
  example: { symbol: 'BTC', timeframe: '1h', swing_bars: '3' },
  handler: async (req, ctx) => {
    const { timeframe, swing_bars: n, lookback } = req.query;
    const sym = await resolveSymbol(ctx.cryptoListings, req.query.symbol, req.query.asset_class);
    const needed = Math.max(2 * n + 1, ATR_PERIOD + 1);
    const why = `query parameter 'swing_bars' = ${n} (a swing needs ${2 * n + 1} candles; the pool tolerance needs ATR(${ATR_PERIOD}), ${ATR_PERIOD + 1} candles)`;
    const { series, closed, as_of } = await loadClosedCandles(ctx, sym, timeframe, lookback, needed, why);
    const atr = wilderAtr(closed, ATR_PERIOD).at(-1)!;
    const report = liquidityLevels(closed, n, POOL_TOLERANCE_ATR * atr)!;
    return envelope(
      {
        symbol: series.symbol,
        venue_symbol: series.venue_symbol,
        asset_class: series.asset_class,
        timeframe,
        currency: series.currency,
        swing_bars: n,
        price: report.price,
        candles_analysed: closed.length,
        atr: clean(atr),
        pool_tolerance: report.pool_tolerance,
        buy_side: report.buy_side,
        sell_side: report.sell_side,
        pools: report.pools,
        nearest_untaken_above: report.nearest_untaken_above,
        nearest_untaken_below: report.nearest_untaken_below,
        as_of,
      },
      series.sources,
      series.meta,
    );
  },
});
