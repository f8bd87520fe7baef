// A momentum verdict from closed candles: six readings, a weighted vote, and a trade frame built
// from the same candles (entry zone, invalidation beyond the nearest opposing swing, targets at
// untaken liquidity or ATR multiples). Pure and deterministic: the same candles give the same verdict.
import { atrCandlesNeeded, atrReport, type AtrRegime } from './atr.ts';
import type { Candle } from './candles.ts';
import { ema, macd, rsi } from './indicators.ts';
import { liquidityLevels, POOL_TOLERANCE_ATR, SWING_BARS, type LiquidityReport } from './liquidity.ts';
import { clean } from './numbers.ts';

export const ATR_PERIOD = 14;

/**
 * Closed candles needed: EMA200 is defined from the 200th close, the ATR(14) report (as /v1/atr computes it,
 * warm-up included) takes 208, MACD 35.
 */
export const MOMENTUM_CANDLES_NEEDED = Math.max(200, atrCandlesNeeded(ATR_PERIOD));
export const RSI_PERIOD = 14;
/** RSI at or above this reads bullish, at or below RSI_BEARISH_AT_MOST bearish. */
export const RSI_BULLISH_AT_LEAST = 55;
export const RSI_BEARISH_AT_MOST = 45;
/** Liquidity position above this reads bullish, below LIQUIDITY_BEARISH_BELOW bearish. */
export const LIQUIDITY_BULLISH_ABOVE = 0.6;
export const LIQUIDITY_BEARISH_BELOW = 0.4;
/** |score| at or above this is a directional bias. */
export const BIAS_THRESHOLD = 0.3;
/** Confidence is scaled by the ATR regime: wild markets make any reading less reliable. */
export const REGIME_FACTOR: Record<AtrRegime, number> = { low: 1, normal: 1, high: 0.85, extreme: 0.7 };
/** Entry zone depth, invalidation buffer beyond the swing, and fallbacks, in ATRs. */
export const ENTRY_ATR = 0.5;
export const INVALIDATION_BUFFER_ATR = 0.1;
export const INVALIDATION_FALLBACK_ATR = 1;
export const TARGET_ATR_MULTIPLES = [2, 3] as const;
export const MAX_TARGETS = 3;

export type Reading = 'bullish' | 'bearish' | 'neutral';
export type Bias = Reading;

export interface Signal {
  name: 'ema_trend' | 'rsi_14' | 'macd_histogram' | 'macd_histogram_slope' | 'atr_regime' | 'liquidity_position';
  value: number | null;
  reading: Reading;
  weight: number;
}

export interface Target {
  price: number;
  basis: 'liquidity' | 'atr_multiple';
}

export interface Momentum {
  bias: Bias;
  confidence: number;
  thesis: string;
  entry: { low: number; high: number } | null;
  invalidation: number | null;
  invalidation_basis: 'swing' | 'atr_multiple' | null;
  targets: Target[];
  signals: Signal[];
  score: number;
  price: number;
  indicators: {
    ema20: number;
    ema50: number;
    ema200: number;
    rsi14: number;
    macd: { line: number; signal: number; histogram: number; histogram_prev: number };
    atr14: number;
    atr_pct: number;
    atr_percentile: number;
    atr_regime: AtrRegime;
  };
  liquidity: { nearest_untaken_above: number | null; nearest_untaken_below: number | null };
}

const WEIGHTS: Record<Signal['name'], number> = {
  ema_trend: 3,
  rsi_14: 2,
  macd_histogram: 2,
  macd_histogram_slope: 1,
  atr_regime: 0,
  liquidity_position: 1,
};

const sign = (x: number) => (x > 0 ? 1 : x < 0 ? -1 : 0);
const bySign = (x: number): Reading => (x > 0 ? 'bullish' : x < 0 ? 'bearish' : 'neutral');
const DIRECTION: Record<Reading, number> = { bullish: 1, bearish: -1, neutral: 0 };

/**
 * The verdict over closed candles (oldest first), null with fewer than MOMENTUM_CANDLES_NEEDED.
 *
 * Signals (reading, weight):
 *   ema_trend: sign(close − EMA20) + sign(EMA20 − EMA50) + sign(EMA50 − EMA200), −3..3; ≥ 2 bullish, ≤ −2 bearish (3).
 *   rsi_14: Wilder RSI(14); ≥ 55 bullish, ≤ 45 bearish (2).
 *   macd_histogram: MACD(12,26,9) line − signal; > 0 bullish, < 0 bearish (2).
 *   macd_histogram_slope: histogram − previous histogram; > 0 bullish, < 0 bearish (1).
 *   atr_regime: percentile of ATR(14)% among the last 100 candles; always neutral, it scales confidence (0).
 *   liquidity_position: (close − nearest untaken sell-side level below) / (nearest untaken buy-side
 *     level above − that level), 0..1; > 0.6 bullish (pressing toward the highs), < 0.4 bearish, null
 *     (neutral) without a level on both sides (1).
 * score = Σ weight × (+1 bullish, −1 bearish, 0 neutral) / Σ weight, −1..1; bias bullish at
 * score ≥ 0.3, bearish at ≤ −0.3, else neutral. confidence = 100 × |score| for a directional bias,
 * 100 × (1 − |score| / 0.3) for neutral, times the regime factor (1, 1, 0.85, 0.7), rounded.
 */
export function momentumScore(c: readonly Candle[], label: string): Momentum | null {
  if (c.length < MOMENTUM_CANDLES_NEEDED) return null;
  const closes = c.map((b) => b.close);
  const last = closes.length - 1;
  const price = closes[last]!;
  const [e20, e50, e200] = [20, 50, 200].map((p) => ema(closes, p)[last]!) as [number, number, number];
  const r = rsi(closes, RSI_PERIOD)[last]!;
  const m = macd(closes);
  const now = m[last]!;
  const prev = m[last - 1]!;
  const atr = atrReport(c, ATR_PERIOD)!;
  const liq = liquidityLevels(c, SWING_BARS, POOL_TOLERANCE_ATR * atr.atr)!;
  const above = liq.nearest_untaken_above?.price ?? null;
  const below = liq.nearest_untaken_below?.price ?? null;

  const trend = sign(price - e20) + sign(e20 - e50) + sign(e50 - e200);
  const slope = now.histogram - prev.histogram;
  const position = above !== null && below !== null && above > below ? (price - below) / (above - below) : null;
  const signals: Signal[] = [
    signal('ema_trend', trend, trend >= 2 ? 'bullish' : trend <= -2 ? 'bearish' : 'neutral'),
    signal('rsi_14', r, r >= RSI_BULLISH_AT_LEAST ? 'bullish' : r <= RSI_BEARISH_AT_MOST ? 'bearish' : 'neutral'),
    signal('macd_histogram', now.histogram, bySign(now.histogram)),
    signal('macd_histogram_slope', slope, bySign(slope)),
    signal('atr_regime', atr.percentile, 'neutral'),
    signal(
      'liquidity_position',
      position,
      position === null ? 'neutral' : position > LIQUIDITY_BULLISH_ABOVE ? 'bullish' : position < LIQUIDITY_BEARISH_BELOW ? 'bearish' : 'neutral',
    ),
  ];
  const totalWeight = signals.reduce((a, s) => a + s.weight, 0);
  const score = signals.reduce((a, s) => a + s.weight * DIRECTION[s.reading], 0) / totalWeight;
  const bias: Bias = score >= BIAS_THRESHOLD ? 'bullish' : score <= -BIAS_THRESHOLD ? 'bearish' : 'neutral';
  const agreement = bias === 'neutral' ? 1 - Math.abs(score) / BIAS_THRESHOLD : Math.abs(score);
  const confidence = Math.round(100 * agreement * REGIME_FACTOR[atr.regime]);
  const frame = tradeFrame(bias, price, atr.atr, liq);

  const indicators: Momentum['indicators'] = {
    ema20: clean(e20),
    ema50: clean(e50),
    ema200: clean(e200),
    rsi14: clean(r),
    macd: { line: clean(now.line), signal: clean(now.signal), histogram: clean(now.histogram), histogram_prev: clean(prev.histogram) },
    atr14: atr.atr,
    atr_pct: atr.atr_pct,
    atr_percentile: atr.percentile,
    atr_regime: atr.regime,
  };
  return {
    bias,
    confidence,
    thesis: thesis(label, bias, confidence, price, indicators, trend, slope, above, below),
    ...frame,
    signals,
    score: clean(score),
    price,
    indicators,
    liquidity: { nearest_untaken_above: above, nearest_untaken_below: below },
  };
}

function signal(name: Signal['name'], value: number | null, reading: Reading): Signal {
  return { name, value: value === null ? null : clean(value), reading, weight: WEIGHTS[name] };
}

/**
 * Bullish: entry zone [close − 0.5 ATR, close]; invalidation 0.1 ATR below the nearest untaken swing
 * low under the zone (else 1 ATR below the zone); targets the nearest untaken swing highs above the
 * zone, up to 3 (else close + 2 ATR and close + 3 ATR). Bearish mirrors it. Neutral: no frame.
 */
function tradeFrame(bias: Bias, price: number, atr: number, liq: LiquidityReport): Pick<Momentum, 'entry' | 'invalidation' | 'invalidation_basis' | 'targets'> {
  if (bias === 'neutral') return { entry: null, invalidation: null, invalidation_basis: null, targets: [] };
  const up = bias === 'bullish';
  const entry = up ? { low: clean(price - ENTRY_ATR * atr), high: price } : { low: price, high: clean(price + ENTRY_ATR * atr) };
  const opposing = (up ? liq.sell_side : liq.buy_side)
    .filter((l) => l.status === 'untaken' && (up ? l.price < entry.low : l.price > entry.high))
    .sort((a, b) => (up ? b.price - a.price : a.price - b.price))[0];
  const invalidation = opposing
    ? clean(up ? opposing.price - INVALIDATION_BUFFER_ATR * atr : opposing.price + INVALIDATION_BUFFER_ATR * atr)
    : clean(up ? entry.low - INVALIDATION_FALLBACK_ATR * atr : entry.high + INVALIDATION_FALLBACK_ATR * atr);
  const levels = (up ? liq.buy_side : liq.sell_side)
    .filter((l) => l.status === 'untaken' && (up ? l.price > entry.high : l.price < entry.low))
    .map((l) => l.price)
    .sort((a, b) => (up ? a - b : b - a));
  const targets: Target[] = levels.length
    ? [...new Set(levels)].slice(0, MAX_TARGETS).map((p) => ({ price: p, basis: 'liquidity' }))
    : TARGET_ATR_MULTIPLES.map((k) => ({ price: clean(up ? price + k * atr : price - k * atr), basis: 'atr_multiple' }));
  return { entry, invalidation, invalidation_basis: opposing ? 'swing' : 'atr_multiple', targets };
}

const fmt = (x: number) => String(Number(x.toPrecision(6)));

function thesis(
  label: string,
  bias: Bias,
  confidence: number,
  price: number,
  ind: Momentum['indicators'],
  trend: number,
  slope: number,
  above: number | null,
  below: number | null,
): string {
  const levels = `close ${fmt(price)}, EMA20 ${fmt(ind.ema20)}, EMA50 ${fmt(ind.ema50)}, EMA200 ${fmt(ind.ema200)}`;
  const emas =
    trend === 3 ? `the EMAs are stacked upward (${levels.replaceAll(', ', ' > ')})` :
    trend === -3 ? `the EMAs are stacked downward (${levels.replaceAll(', ', ' < ')})` :
    `the EMA alignment scores ${trend} of ±3 (${levels})`;
  const hist = ind.macd.histogram > 0 ? 'positive' : ind.macd.histogram < 0 ? 'negative' : 'flat';
  const dir = slope > 0 ? 'rising' : slope < 0 ? 'falling' : 'unchanged';
  const liquidity = [above !== null ? `${fmt(above)} above` : 'none above', below !== null ? `${fmt(below)} below` : 'none below'].join(' and ');
  return (
    `${bias[0]!.toUpperCase()}${bias.slice(1)} on ${label} with confidence ${confidence}: ${emas}, RSI(14) is ${ind.rsi14.toFixed(1)} ` +
    `and the MACD histogram is ${hist} and ${dir}. Volatility is ${ind.atr_regime} (ATR ${ind.atr_pct.toFixed(2)}% of price, ` +
    `percentile ${Math.round(ind.atr_percentile)} of the last 100 candles); the nearest untaken liquidity is ${liquidity}.`
  );
}
