// Pure computations behind the derivatives endpoints (funding-oi, long-short-ratio, perpdex).
// No I/O: every input is a number a provider sent (or null when it sent none), and every
// output is null when its inputs do not allow it — nothing is guessed.

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** Funding rates compared across venues are expressed per this many hours. */
export const FUNDING_BASIS_HOURS = 8 as const;

/**
 * Bias thresholds on the OI-weighted funding rate per 8 h (a fraction). Binance and Bybit both
 * settle a baseline of +0.01 % per 8 h when perp and index agree (their interest-rate component),
 * so the neutral band is that baseline ± 0.02 %.
 */
export const BIAS_LONG_ABOVE = 0.0003; // > +0.03 % per 8 h: longs pay three times the baseline
export const BIAS_SHORT_BELOW = -0.0001; // < −0.01 % per 8 h: shorts pay longs

import { clean, signedPct } from './numbers.ts';

export { clean };

/** A fraction as a percentage: 0.7069 → 70.69. */
export function toPct(fraction: number): number;
export function toPct(fraction: number | null): number | null;
export function toPct(fraction: number | null): number | null {
  return fraction === null ? null : clean(fraction * 100);
}

/** (to − from) / from × 100; null when either is missing or `from` is 0. */
export function changePct(from: number | null, to: number | null): number | null {
  if (from === null || to === null || from === 0) return null;
  return clean(((to - from) / from) * 100);
}

/** a × b, null when either is missing. */
export function product(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : clean(a * b);
}

/** Sum of the values given; null when none is given. */
export function sumGiven(values: (number | null)[]): number | null {
  const given = values.filter((v): v is number => v !== null);
  return given.length === 0 ? null : clean(given.reduce((a, b) => a + b, 0));
}

/**
 * Σ value × weight / Σ weight over the items whose value and weight are both given and whose
 * weight is positive; null when there is none.
 */
export function weightedAverage(items: { value: number | null; weight: number | null }[]): number | null {
  let num = 0;
  let den = 0;
  for (const { value, weight } of items) {
    if (value === null || weight === null || !(weight > 0)) continue;
    num += value * weight;
    den += weight;
  }
  return den > 0 ? clean(num / den) : null;
}

export interface FundingPoint {
  /** Settlement time, epoch ms. */
  time: number;
  rate: number;
}

/**
 * Mean funding rate over the `windowMs` ending at the newest settlement: the rows with
 * time in (newest − window, newest]. At an 8-hour interval and a 7-day window that is 21 rows.
 * The window is anchored on the newest row, not on the clock, so a cached answer stays coherent.
 */
export function windowAverage(points: FundingPoint[], windowMs = 7 * DAY_MS): { average: number; count: number; from: number; to: number } | null {
  if (points.length === 0) return null;
  const newest = Math.max(...points.map((p) => p.time));
  const inWindow = points.filter((p) => p.time > newest - windowMs && p.time <= newest);
  const oldest = Math.min(...inWindow.map((p) => p.time));
  return { average: clean(inWindow.reduce((a, p) => a + p.rate, 0) / inWindow.length), count: inWindow.length, from: oldest, to: newest };
}

/**
 * Hours between the two newest settlements, when that is a whole number of hours from 1 to 24;
 * otherwise null. Used only when a venue does not state its funding interval.
 */
export function inferIntervalHours(times: number[]): number | null {
  if (times.length < 2) return null;
  const [a, b] = [...times].sort((x, y) => y - x);
  const hours = (a! - b!) / HOUR_MS;
  return Number.isInteger(hours) && hours >= 1 && hours <= 24 ? hours : null;
}

/** A rate paid every `intervalHours`, restated per 8 h (a 4-hour rate counts twice). */
export function per8h(rate: number | null, intervalHours: number | null): number | null {
  if (rate === null || intervalHours === null || intervalHours <= 0) return null;
  return clean((rate * FUNDING_BASIS_HOURS) / intervalHours);
}

export interface OiPoint {
  /** Epoch ms of the bucket. */
  time: number;
  /** Open interest in base-asset units. */
  openInterest: number;
}

/** The newest point and the point exactly 24 h before it; null when either is missing. */
export function pointsFor24h(series: OiPoint[]): { now: OiPoint; dayAgo: OiPoint } | null {
  if (series.length === 0) return null;
  const now = series.reduce((a, b) => (b.time > a.time ? b : a));
  const dayAgo = series.find((p) => p.time === now.time - DAY_MS);
  return dayAgo ? { now, dayAgo } : null;
}

/**
 * 24-hour change of open interest summed over venues, in base-asset units (coins), so a price
 * move alone does not change it: (Σ now − Σ 24 h ago) / Σ 24 h ago × 100, over the venues that
 * have both points. Null when no venue has.
 */
export function aggregateOiChange24h(perVenue: { venue: string; series: OiPoint[] }[]): { pct: number | null; venues: string[] } {
  let now = 0;
  let then = 0;
  const venues: string[] = [];
  for (const v of perVenue) {
    const pts = pointsFor24h(v.series);
    if (!pts) continue;
    now += pts.now.openInterest;
    then += pts.dayAgo.openInterest;
    venues.push(v.venue);
  }
  return { pct: venues.length ? changePct(then, now) : null, venues };
}

export type BiasSignal = 'long' | 'short' | 'neutral';


/**
 * Positioning bias from the OI-weighted funding rate per 8 h:
 *   > +0.03 % → "long" (longs crowded: they pay at least three times the +0.01 % baseline),
 *   < −0.01 % → "short" (shorts crowded: they pay longs),
 *   otherwise "neutral". Null when the funding rate is not known.
 * The 7-day average and the 24 h open-interest change only add context to the reason.
 */
export function fundingBias(
  funding8h: number | null,
  avg7d8h: number | null,
  oiChange24hPct: number | null,
): { signal: BiasSignal; reason: string } | null {
  if (funding8h === null) return null;
  const band = `neutral band ${signedPct(BIAS_SHORT_BELOW)} to ${signedPct(BIAS_LONG_ABOVE)}`;
  let signal: BiasSignal;
  let head: string;
  if (funding8h > BIAS_LONG_ABOVE) {
    signal = 'long';
    head = `OI-weighted funding ${signedPct(funding8h)} per 8h is above ${signedPct(BIAS_LONG_ABOVE)}: longs are crowded and pay shorts`;
  } else if (funding8h < BIAS_SHORT_BELOW) {
    signal = 'short';
    head = `OI-weighted funding ${signedPct(funding8h)} per 8h is below ${signedPct(BIAS_SHORT_BELOW)}: shorts are crowded and pay longs`;
  } else {
    signal = 'neutral';
    head = `OI-weighted funding ${signedPct(funding8h)} per 8h is inside the ${band}`;
  }
  const context = [
    avg7d8h !== null ? `7-day average ${signedPct(avg7d8h)} per 8h` : null,
    oiChange24hPct !== null ? `open interest ${oiChange24hPct >= 0 ? '+' : ''}${oiChange24hPct.toFixed(2)}% in 24h` : null,
  ].filter(Boolean);
  return { signal, reason: context.length ? `${head} (${context.join(', ')})` : head };
}
