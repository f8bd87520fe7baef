// Wilder's Average True Range and where today's sits among recent values. Pure: closed candles
// (oldest first) in, numbers out.
//
// Wilder's ATR is a recursive average seeded by the mean of the first `period` true ranges: after k more
// candles the seed still weighs ((period − 1) / period)^k in the value. An ATR read too soon after its seed
// depends on where the candles happened to start (ATR(200) read 100 candles after its seed was 3.8 % off,
// and two routes reading ATR(14) over different spans put the same day in different regimes). So the report
// is always computed over one fixed span, warm-up included, the same wherever it is asked from: the last
// atrCandlesNeeded(period) candles, however many more the caller has.
import type { Candle } from './candles.ts';
import { clean } from './numbers.ts';

/** ATR% values the percentile is taken over: the last 100 closed candles' ATR%, the newest included. */
export const ATR_LOOKBACK = 100;

/** The largest weight the seed may keep in the oldest ATR of the percentile window (0.1 %; in today's ATR it is less still). */
export const ATR_SEED_RESIDUAL = 0.001;

/**
 * Candles of warm-up between the seed and the first ATR of the percentile window: the fewest k with
 * ((period − 1) / period)^k ≤ ATR_SEED_RESIDUAL, about 6.9 × period (14 → 94, 50 → 342, 114 → 785).
 */
export function atrWarmUp(period: number): number {
  return Math.ceil(Math.log(ATR_SEED_RESIDUAL) / Math.log((period - 1) / period));
}

export type AtrRegime = 'low' | 'normal' | 'high' | 'extreme';

/**
 * True range of each candle after the first (the first has no previous close):
 * TR_i = max(high_i − low_i, |high_i − close_{i−1}|, |low_i − close_{i−1}|). Index k is candle k + 1.
 */
export function trueRanges(c: readonly Candle[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < c.length; i++) {
    const { high, low } = c[i]!;
    const prev = c[i - 1]!.close;
    out.push(Math.max(high - low, Math.abs(high - prev), Math.abs(low - prev)));
  }
  return out;
}

/**
 * Wilder's ATR at every candle from index `period` on (index k of the result is candle period + k):
 * the first is the simple mean of the first `period` true ranges (candles 1..period), then
 * ATR_i = (ATR_{i−1} × (period − 1) + TR_i) / period. Empty when there are fewer than period + 1 candles.
 */
export function wilderAtr(c: readonly Candle[], period: number): number[] {
  const tr = trueRanges(c);
  if (tr.length < period) return [];
  let atr = tr.slice(0, period).reduce((a, b) => a + b, 0) / period;
  const out = [atr];
  for (let k = period; k < tr.length; k++) {
    atr = (atr * (period - 1) + tr[k]!) / period;
    out.push(atr);
  }
  return out;
}

/**
 * Closed candles an ATR report takes: period + 1 seed the first ATR, `warmUp` more smooth the seed away, and
 * lookback − 1 more complete the window (its first value is the ATR at the end of the warm-up).
 */
export function atrCandlesNeeded(period: number, lookback = ATR_LOOKBACK, warmUp = atrWarmUp(period)): number {
  return period + 1 + warmUp + lookback - 1;
}

/**
 * Where `value` sits among `others`: the share of them strictly below it, in percent (0 = below
 * all of them ... 100 = above all of them). Null when there are no others.
 */
export function percentileRank(value: number, others: readonly number[]): number | null {
  if (others.length === 0) return null;
  return clean((100 * others.filter((v) => v < value).length) / others.length);
}

/** low < 25th percentile ≤ normal ≤ 75th < high ≤ 95th < extreme. */
export function atrRegime(percentile: number): AtrRegime {
  if (percentile < 25) return 'low';
  if (percentile <= 75) return 'normal';
  if (percentile <= 95) return 'high';
  return 'extreme';
}

export interface AtrReport {
  atr: number;
  /** atr / last_close × 100. */
  atr_pct: number;
  last_close: number;
  /** Percentile rank of today's ATR% among the other ATR% values of the window. */
  percentile: number;
  regime: AtrRegime;
  lookback: { bars: number; from: string; to: string };
}

/**
 * Today's ATR (at the last closed candle), as a share of its close, and its regime, computed over exactly
 * the last atrCandlesNeeded(period, lookback, warmUp) candles (earlier ones are not used, so any caller with
 * at least that many gets the same numbers): ATR%_i = ATR_i / close_i × 100 for the last `lookback` candles
 * (today included); `percentile` = share of the other lookback − 1 values strictly below today's. Null when
 * there are fewer candles than that.
 */
export function atrReport(all: readonly Candle[], period: number, lookback = ATR_LOOKBACK, warmUp = atrWarmUp(period)): AtrReport | null {
  const needed = atrCandlesNeeded(period, lookback, warmUp);
  if (all.length < needed || lookback < 2) return null;
  const c = all.slice(-needed);
  const atr = wilderAtr(c, period);
  const window = atr.slice(-lookback).map((a, k) => {
    const candle = c[c.length - lookback + k]!;
    return { time: candle.time, pct: (a / candle.close) * 100 };
  });
  const today = window.at(-1)!;
  const percentile = percentileRank(today.pct, window.slice(0, -1).map((w) => w.pct))!;
  const last = c.at(-1)!;
  return {
    atr: clean(atr.at(-1)!),
    atr_pct: clean(today.pct),
    last_close: last.close,
    percentile,
    regime: atrRegime(percentile),
    lookback: { bars: lookback, from: window[0]!.time, to: today.time },
  };
}
