// /v1/fvg: fair value gaps (three-candle imbalances) of a crypto pair or a US equity/ETF, with how
// much of each later candles filled (src/analytics/fvg.ts).
import { z } from 'zod';
import { fairValueGaps } from '../../analytics/fvg.ts';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { TIMEFRAMES } from '../candles.ts';
import { asOfField, CLOSED_CANDLES_TEXT, loadClosedCandles } from '../closed-candles.ts';
import { assetClassParam, symbolParam } from '../../params/symbols.ts';
import { resolveSymbol } from '../resolve-symbol.ts';
import { CANDLE_TIMEFRAMES_TEXT, timeframeQuery } from '../timeframe.ts';

const query = z.object({
  symbol: symbolParam,
  timeframe: timeframeQuery(TIMEFRAMES, CANDLE_TIMEFRAMES_TEXT),
  lookback: boundedInt(3, 1000, 200, 'Closed candles analysed (the most recent), 3-1000 (1000 gives 999 while a candle is forming: sources serve 1000 at most); gaps are searched and their fill judged within them.'),
  asset_class: assetClassParam,
});

const gap = z.object({
  direction: z.enum(['bullish', 'bearish']).describe("bullish: candle 3's low above candle 1's high; bearish: candle 3's high below candle 1's low"),
  top: z.number().describe("Upper edge: candle 3's low (bullish) or candle 1's low (bearish)"),
  bottom: z.number().describe("Lower edge: candle 1's high (bullish) or candle 3's high (bearish)"),
  ce: z.number().describe('Consequent encroachment, the 50 % level: (top + bottom) / 2'),
  size: z.number().describe('top − bottom, in the price currency'),
  size_pct: z.number().describe('size / ce × 100'),
  formed_at: z.string().describe('Open time of candle 2 (the candle whose range holds the gap), ISO-8601 UTC'),
  age_candles: z.number().int().describe('Closed candles after candle 3 (0 = candle 3 is the last closed candle)'),
  status: z.enum(['unfilled', 'partially_filled', 'filled']).describe('Judged on the candles after candle 3: unfilled = none traded inside the zone; filled = one traded through the far edge'),
  fill_pct: z
    .number()
    .describe('How deep later candles reached, percent of size: bullish (top − lowest later low) / size, bearish (highest later high − bottom) / size, clamped to 0-100'),
  distance_pct: z.number().describe('(nearest edge − price) / price × 100: positive above the price, negative below, 0 when the price is inside the zone'),
});

const data = z.object({
  symbol: z.string().describe('BASE/QUOTE of the market used for crypto, the ticker for equities'),
  venue_symbol: z.string().describe('The market as the venue that served the candles spells it: BTCUSDT (Binance), BTC-USD (Coinbase Exchange), BRK-B (Yahoo)'),
  asset_class: z.enum(['crypto', 'equity']),
  timeframe: z.enum(TIMEFRAMES),
  currency: z.string().nullable().describe('Currency of the prices'),
  price: z.number().describe('Close of the last closed candle: distances are measured from it'),
  candles_analysed: z.number().int().describe('Closed candles searched (lookback, or fewer when the source has fewer)'),
  gaps: z.array(gap).describe('Every gap in the analysed candles, oldest first'),
  nearest_unfilled_above: gap.nullable().describe('The unfilled gap above the price (bottom > price) with the smallest distance; null when none'),
  nearest_unfilled_below: gap.nullable().describe('The unfilled gap below the price (top < price) with the smallest distance; null when none'),
  as_of: asOfField(),
});

export const fvg = defineRoute({
  path: '/v1/fvg',
  summary: 'Fair value gaps (three-candle imbalances) and how far they are filled',
  description:
    CLOSED_CANDLES_TEXT +
    'For every three consecutive candles: ' +
    "bullish gap when candle 3's low > candle 1's high (zone candle 1 high to candle 3 low), bearish when candle 3's high < candle 1's low (zone candle 3 high to candle 1 low). " +
    'Fill is judged on the candles after candle 3: fill_pct = how deep their extreme reached into the zone; unfilled at 0 %, filled at 100 %, partially_filled between. ' +
    'distance_pct is signed, from the last close to the nearest edge. Needs 3 closed candles, else 400.',
  tag: 'Analytics',
  access: 'paid',
  maxStale: 'CANDLES_STALE_S',
  query,
  data,
  example: { symbol: 'ETH', timeframe: '4h', lookback: '200' },
  handler: async (req, ctx) => {
    const { timeframe, lookback } = req.query;
    const sym = await resolveSymbol(ctx.cryptoListings, req.query.symbol, req.query.asset_class);
    const { series, closed, as_of } = await loadClosedCandles(ctx, sym, timeframe, lookback, 3, 'a fair value gap (three candles)');
    const report = fairValueGaps(closed)!;
    return envelope(
      {
        symbol: series.symbol,
        venue_symbol: series.venue_symbol,
        asset_class: series.asset_class,
        timeframe,
        currency: series.currency,
        price: report.price,
        candles_analysed: closed.length,
        gaps: report.gaps,
        nearest_unfilled_above: report.nearest_unfilled_above,
        nearest_unfilled_below: report.nearest_unfilled_below,
        as_of,
      },
      series.sources,
      series.meta,
    );
  },
});
