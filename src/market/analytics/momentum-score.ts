// /v1/momentum-score: a deterministic momentum verdict for ten large crypto assets from their closed
// candles: EMA alignment, RSI, MACD, ATR regime and position between liquidity levels, weighed into a
// bias with an entry zone, an invalidation and targets (src/analytics/momentum.ts).
import { z } from 'zod';
import { momentumScore, MOMENTUM_CANDLES_NEEDED } from '../../analytics/momentum.ts';
import { BadRequestError } from '../../lib/errors.ts';
import { requiredString } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { asOfField, CLOSED_CANDLE_RULE, loadClosedCandles } from '../closed-candles.ts';
import { parseCryptoSymbol, type CryptoSymbol } from '../../params/symbols.ts';
import { timeframeQuery } from '../timeframe.ts';

/** The supported assets: large, liquid, listed on Binance spot against USDT. */
export const MOMENTUM_ASSETS = ['BTC', 'ETH', 'SOL', 'BNB', 'XRP', 'DOGE', 'ADA', 'AVAX', 'LINK', 'DOT'] as const;
export const MOMENTUM_TIMEFRAMES = ['1h', '4h', '1d'] as const;
/** Quotes of the markets the candles come from: Binance's USDT pairs, Coinbase Exchange's USD products. */
export const MOMENTUM_QUOTES = ['USDT', 'USD'] as const;

/** Closed candles the verdict is computed over (EMA200 settles over the 300 after its seed). */
const CANDLES = 500;

export const DISCLAIMER =
  'Not financial advice: a mechanical reading of past candles by fixed rules, with no view of news, flows or fundamentals. Markets can move against any reading.';

const ASSET_LIST = MOMENTUM_ASSETS.join(', ');
const ACCEPTED_MOMENTUM_SYMBOL = `one of the supported assets ${ASSET_LIST}, alone or as a pair quoted in ${MOMENTUM_QUOTES.join(' or ')} (BTCUSDT, BTC-USD)`;

const query = z.object({
  symbol: requiredString(ACCEPTED_MOMENTUM_SYMBOL)
    .trim()
    .regex(/^[A-Za-z0-9\-/]{1,24}$/, `must be ${ACCEPTED_MOMENTUM_SYMBOL}`)
    .describe(
    `Crypto only: ${ACCEPTED_MOMENTUM_SYMBOL}, case-insensitive. Alone or with USDT: Binance's USDT pair, Coinbase Exchange's USD product on the fallback; with USD: Coinbase Exchange's USD product.`,
  )
    // OpenAPI lists the assets; their pairs and other cases are accepted too, as the description says.
    .meta({ enum: [...MOMENTUM_ASSETS], pattern: undefined }),
  timeframe: timeframeQuery(MOMENTUM_TIMEFRAMES, `Candle length: ${MOMENTUM_TIMEFRAMES.join(', ')}.`),
});

/** A supported asset, alone or as a pair with a supported quote; anything else is a 400 listing them. */
function momentumSymbol(input: string): CryptoSymbol {
  const refuse = () => new BadRequestError(`query parameter 'symbol' must be ${ACCEPTED_MOMENTUM_SYMBOL}; got '${input}'`);
  let sym: CryptoSymbol;
  try {
    sym = parseCryptoSymbol(input);
  } catch {
    throw refuse();
  }
  const assetOk = (MOMENTUM_ASSETS as readonly string[]).includes(sym.base);
  const quoteOk = !sym.explicitQuote || (MOMENTUM_QUOTES as readonly string[]).includes(sym.quote);
  if (!assetOk || !quoteOk) throw refuse();
  return sym;
}

const reading = z.enum(['bullish', 'bearish', 'neutral']);

const data = z.object({
  symbol: z.string().describe('BASE/QUOTE of the market used (BTC/USDT; BTC/USD after a Coinbase fallback)'),
  venue_symbol: z.string().describe('The market as the venue that served the candles spells it: BTCUSDT (Binance), BTC-USD (Coinbase Exchange)'),
  currency: z.string().nullable().describe('Currency of every price here (price, entry, invalidation, targets, indicators): the quote of the market used'),
  timeframe: z.enum(MOMENTUM_TIMEFRAMES),
  bias: reading.describe('bullish when score ≥ 0.3, bearish when score ≤ −0.3, else neutral'),
  confidence: z
    .number()
    .int()
    .min(0)
    .max(100)
    .describe('0-100: 100 × |score| for a directional bias, 100 × (1 − |score| / 0.3) for neutral, × the ATR regime factor (low, normal 1; high 0.85; extreme 0.7), rounded'),
  score: z.number().describe('Σ weight × (+1 bullish, −1 bearish, 0 neutral) / Σ weight over the signals, from −1 to 1'),
  thesis: z.string().describe('One or two plain sentences built from the readings'),
  price: z.number().describe('Close of the last closed candle'),
  entry: z
    .object({ low: z.number(), high: z.number() })
    .nullable()
    .describe('Bullish: close − 0.5 ATR to close; bearish: close to close + 0.5 ATR; null when neutral'),
  invalidation: z
    .number()
    .nullable()
    .describe('Bullish: 0.1 ATR below the nearest untaken swing low under the entry (else 1 ATR below the entry); bearish mirrored; null when neutral'),
  invalidation_basis: z.enum(['swing', 'atr_multiple']).nullable().describe('Whether the invalidation is beyond a swing or an ATR multiple (no swing there); null when neutral'),
  targets: z
    .array(z.object({ price: z.number(), basis: z.enum(['liquidity', 'atr_multiple']) }))
    .describe('Bullish: the nearest untaken swing highs above the entry, up to 3 (else close + 2 and + 3 ATR); bearish mirrored; empty when neutral'),
  signals: z
    .array(
      z.object({
        name: z.enum(['ema_trend', 'rsi_14', 'macd_histogram', 'macd_histogram_slope', 'atr_regime', 'liquidity_position']),
        value: z.number().nullable().describe('ema_trend −3..3; rsi_14 0-100; macd_* in price units; atr_regime the ATR% percentile; liquidity_position 0..1 (null without a level on both sides)'),
        reading,
        weight: z.number().describe('Votes in the score (atr_regime: 0, it scales confidence instead)'),
      }),
    )
    .describe('The readings, each with its rule in the endpoint description'),
  indicators: z.object({
    ema20: z.number(),
    ema50: z.number(),
    ema200: z.number().describe('EMAs of closes, α = 2 / (n + 1), seeded by the mean of the first n closes of the candles loaded'),
    rsi14: z.number().describe("Wilder's RSI(14)"),
    macd: z.object({
      line: z.number().describe('EMA12 − EMA26'),
      signal: z.number().describe('EMA9 of the line'),
      histogram: z.number().describe('line − signal'),
      histogram_prev: z.number().describe('The histogram one candle earlier'),
    }),
    atr14: z.number().describe("Wilder's ATR(14), price units"),
    atr_pct: z.number().describe('atr14 / close × 100'),
    atr_percentile: z.number().describe("Share of the other 99 ATR% values of the last 100 candles strictly below today's (as /v1/atr?period=14)"),
    atr_regime: z.enum(['low', 'normal', 'high', 'extreme']),
  }),
  liquidity: z.object({
    nearest_untaken_above: z.number().nullable().describe('Nearest untaken swing high (3 candles each side) at or above the price'),
    nearest_untaken_below: z.number().nullable().describe('Nearest untaken swing low at or below the price'),
  }),
  candles_analysed: z.number().int().describe(`Closed candles the readings are computed over (up to ${CANDLES})`),
  as_of: asOfField(),
});

export const momentumScoreRoute = defineRoute({
  path: '/v1/momentum-score',
  summary: 'Momentum verdict (bias, confidence, entry, invalidation, targets) for 10 large crypto assets',
  description:
    `Supported assets: ${ASSET_LIST}, alone or as a pair quoted in ${MOMENTUM_QUOTES.join(' or ')} (any other symbol is a 400). Over the last ${CANDLES} closed candles of the Binance USDT pair (Coinbase Exchange USD fallback; ${CLOSED_CANDLE_RULE}): ` +
    'ema_trend = sign(close − EMA20) + sign(EMA20 − EMA50) + sign(EMA50 − EMA200), ≥ 2 bullish, ≤ −2 bearish (weight 3); ' +
    'rsi_14 (Wilder) ≥ 55 bullish, ≤ 45 bearish (2); macd_histogram of MACD(12,26,9) > 0 bullish, < 0 bearish (2); macd_histogram_slope (histogram − previous) > 0 bullish, < 0 bearish (1); ' +
    'atr_regime = percentile of ATR(14)% among the last 100 candles, computed exactly as /v1/atr?period=14 (same warm-up, same candles: same values), neutral, scales confidence (0); ' +
    'liquidity_position = (close − nearest untaken swing low) / (nearest untaken swing high − that low), > 0.6 bullish, < 0.4 bearish (1). ' +
    'score = Σ weight × direction / Σ weight; bias bullish at ≥ 0.3, bearish at ≤ −0.3. Entry, invalidation and targets as documented per field. ' +
    `Deterministic: the same candles give the same verdict. Needs ${MOMENTUM_CANDLES_NEEDED} closed candles (EMA200; the ATR(14) report with its warm-up), else 400. meta.disclaimer: not financial advice.`,
  tag: 'Analytics',
  access: 'paid',
  maxStale: 'CANDLES_STALE_S',
  query,
  data,
  example: { symbol: 'BTC', timeframe: '4h' },
  handler: async (req, ctx) => {
    const { timeframe } = req.query;
    const sym = momentumSymbol(req.query.symbol);
    const { series, closed, as_of } = await loadClosedCandles(ctx, sym, timeframe, CANDLES, MOMENTUM_CANDLES_NEEDED, 'the momentum score (EMA200 and the ATR(14) report)');
    const m = momentumScore(closed, `${series.symbol} ${timeframe}`)!;
    return envelope(
      {
        symbol: series.symbol,
        venue_symbol: series.venue_symbol,
        currency: series.currency,
        timeframe,
        bias: m.bias,
        confidence: m.confidence,
        score: m.score,
        thesis: m.thesis,
        price: m.price,
        entry: m.entry,
        invalidation: m.invalidation,
        invalidation_basis: m.invalidation_basis,
        targets: m.targets,
        signals: m.signals,
        indicators: m.indicators,
        liquidity: m.liquidity,
        candles_analysed: closed.length,
        as_of,
      },
      series.sources,
      { ...series.meta, disclaimer: DISCLAIMER },
    );
  },
});
