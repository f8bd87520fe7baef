// Implied vs realized volatility (no I/O). Definitions, also in docs/using/market-context.md:
//
//   implied_volatility_30d        = DVOL at the end of the newest completed DVOL candle (its close).
//   implied_volatility_change_24h = that value − DVOL exactly 24 h earlier (the close of the candle that ended
//                                   then), in volatility points; null when that candle is not in the answer.
//   iv_rv_spread                  = implied volatility − realized volatility, in volatility points.
//
// Only completed candles are read: the close of the candle still forming is the value at some moment
// inside it, so two closes 24 h apart by open time could be anything from 23 to 24 h apart in value time.
import { clean } from './numbers.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface TimedValue {
  /** Epoch ms. */
  time: number;
  value: number;
}

/** The point with the largest time; null for an empty series. */
export function newest<T extends { time: number }>(series: readonly T[]): T | null {
  let best: T | null = null;
  for (const p of series) if (best === null || p.time > best.time) best = p;
  return best;
}

/**
 * Values at candle ends: each candle (open time, close) of `widthMs` that has ended by `asOfMs`, as its
 * close at its end time (open + width). A candle still forming at `asOfMs` is left out.
 */
export function completedValues(candles: readonly { time: number; close: number }[], widthMs: number, asOfMs: number): TimedValue[] {
  return candles.filter((c) => c.time + widthMs <= asOfMs).map((c) => ({ time: c.time + widthMs, value: c.close }));
}

/** `now.value` − the value exactly 24 h before `now.time` among `earlier`; null when it is not there. */
export function change24h(now: TimedValue, earlier: readonly TimedValue[]): number | null {
  const dayAgo = earlier.find((p) => p.time === now.time - DAY_MS);
  return dayAgo ? clean(now.value - dayAgo.value) : null;
}

/** a − b, float noise stripped; null when either is unknown. */
export function spread(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : clean(a - b);
}
