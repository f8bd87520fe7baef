// Implied vs realized volatility (no I/O). Definitions, also in docs/market-context.md:
//
//   implied_volatility_change_24h = close(newest DVOL candle) − close(the candle whose open time is exactly
//                                   24 h before the newest one), in volatility points; null when that candle
//                                   is not in the answer.
//   iv_rv_spread                  = implied volatility − realized volatility, in volatility points.
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

/** See the definition at the top. */
export function change24h(series: readonly TimedValue[]): number | null {
  const now = newest(series);
  if (!now) return null;
  const dayAgo = series.find((p) => p.time === now.time - DAY_MS);
  return dayAgo ? clean(now.value - dayAgo.value) : null;
}

/** a − b, float noise stripped; null when either is unknown. */
export function spread(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : clean(a - b);
}
