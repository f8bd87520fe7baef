// /v1/atr: Wilder's Average True Range of a crypto pair or a US equity/ETF, as a share of price,
// and where it sits among the last 100 candles (src/analytics/atr.ts).
import { z } from 'zod';
import { ATR_LOOKBACK, ATR_SEED_RESIDUAL, atrCandlesNeeded, atrReport, atrWarmUp } from '../../analytics/atr.ts';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { TIMEFRAMES } from '../candles.ts';
import { asOfField, CLOSED_CANDLES_TEXT, loadClosedCandles, MAX_LOAD } from '../closed-candles.ts';
import { assetClassParam, symbolParam } from '../../params/symbols.ts';
import { resolveSymbol } from '../resolve-symbol.ts';
import { CANDLE_TIMEFRAMES_TEXT, timeframeQuery } from '../timeframe.ts';

/**
 * The largest period whose report, warm-up included, fits in the closed candles one load gives (MAX_LOAD − 1:
 * one of them may be forming): 114. A longer period could only be served unconverged, so it is refused.
 */
const MAX_PERIOD = (() => {
  let p = 2;
  while (atrCandlesNeeded(p + 1) <= MAX_LOAD - 1) p++;
  return p;
})();

const RESIDUAL_PCT = `${ATR_SEED_RESIDUAL * 100} %`;

const query = z.object({
  symbol: symbolParam,
  timeframe: timeframeQuery(TIMEFRAMES, CANDLE_TIMEFRAMES_TEXT),
  period: boundedInt(
    2,
    MAX_PERIOD,
    14,
    `Wilder's ATR period in candles, 2-${MAX_PERIOD} (the longest whose warm-up fits in the ${MAX_LOAD - 1} closed candles one load of the sources gives).`,
  ),
  asset_class: assetClassParam,
});

const data = z.object({
  symbol: z.string().describe('BASE/QUOTE of the market used for crypto (BTC/USDT; BTC/USD after a Coinbase fallback), the ticker for equities'),
  venue_symbol: z.string().describe('The market as the venue that served the candles spells it: BTCUSDT (Binance), BTC-USD (Coinbase Exchange), BRK-B (Yahoo)'),
  asset_class: z.enum(['crypto', 'equity']),
  timeframe: z.enum(TIMEFRAMES),
  period: z.number().int(),
  currency: z.string().nullable().describe('Currency of atr and last_close'),
  atr: z.number().describe("Wilder's ATR at the last closed candle, in `currency`"),
  atr_pct: z.number().describe('atr / last_close × 100'),
  last_close: z.number().describe('Close of the last closed candle'),
  percentile: z
    .number()
    .describe(`Share (percent) of the other ${ATR_LOOKBACK - 1} ATR% values of the lookback window strictly below today's: 0 = the calmest, 100 = the most volatile`),
  regime: z.enum(['low', 'normal', 'high', 'extreme']).describe('low: percentile < 25; normal: 25-75; high: above 75 up to 95; extreme: above 95'),
  lookback: z
    .object({
      bars: z.number().int().describe('ATR% values in the window (the newest closed candles, today included)'),
      from: z.string().describe('Open time of the oldest candle of the window, ISO-8601 UTC'),
      to: z.string().describe('Open time of the newest (last closed) candle, ISO-8601 UTC'),
    })
    .describe('The window the percentile is taken over'),
  as_of: asOfField(),
});

export const atr = defineRoute({
  path: '/v1/atr',
  summary: "Wilder's Average True Range, its share of price and its regime",
  description:
    CLOSED_CANDLES_TEXT +
    'TR = max(high − low, |high − previous close|, |low − previous close|), from the second candle on; the first ATR is the mean of the first `period` TRs, ' +
    'then ATR = (previous ATR × (period − 1) + TR) / period. atr_pct = ATR / last close × 100. ' +
    `percentile: where today's ATR% (ATR_i / close_i × 100) sits among the ATR% of the last ${ATR_LOOKBACK} closed candles (the share of the other ${ATR_LOOKBACK - 1} strictly below it); ` +
    'regime low (< 25), normal (25-75), high (> 75 to 95), extreme (> 95). ' +
    `Converged: computed over exactly the last period + 1 + warm-up + ${ATR_LOOKBACK - 1} closed candles, the warm-up being the fewest candles k with ((period − 1) / period)^k ≤ ${ATR_SEED_RESIDUAL} ` +
    `(about 6.9 × period; 94 for period 14), so the seed weighs at most ${RESIDUAL_PCT} in the oldest ATR of the window; /v1/momentum-score's ATR(14) is this same computation. ` +
    'Too few closed candles → 400 saying how many are needed.',
  tag: 'Analytics',
  access: 'paid',
  maxStale: 'CANDLES_STALE_S',
  query,
  data,
  example: { symbol: 'BTC', timeframe: '1d', period: '14' },
  handler: async (req, ctx) => {
    const { timeframe, period } = req.query;
    const sym = await resolveSymbol(ctx.cryptoListings, req.query.symbol, req.query.asset_class);
    const needed = atrCandlesNeeded(period);
    const why =
      `query parameter 'period' = ${period} (Wilder's ATR: ${period + 1} candles seed it, ${atrWarmUp(period)} more bring the seed's weight to ${RESIDUAL_PCT} or less, ` +
      `${ATR_LOOKBACK - 1} more complete the percentile window of ${ATR_LOOKBACK})`;
    const { series, closed, as_of } = await loadClosedCandles(ctx, sym, timeframe, needed, needed, why);
    const report = atrReport(closed, period)!;
    return envelope(
      { symbol: series.symbol, venue_symbol: series.venue_symbol, asset_class: series.asset_class, timeframe, period, currency: series.currency, ...report, as_of },
      series.sources,
      series.meta,
    );
  },
});
