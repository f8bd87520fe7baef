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
 * Venues stamp settlements a few milliseconds off the hour (08:00:00.011Z): window edges allow this
 * much, so the settlement exactly one window back is never counted in by its jitter.
 */
export const SETTLEMENT_JITTER_MS = 60_000;

/**
 * The funding actually paid over the `windowMs` ending at the newest settlement, per 8 h:
 * Σ(settled rates with time in (newest − window, newest]) × 8 h / window hours. Each settlement pays for
 * the interval that ends at it, so this holds when the interval changes within the window (18 settlements
 * at 8 h and 24 at 1 h are 168 h of funding), where a mean per settlement would not. Null when there is
 * no settlement, or when the history does not reach back to the window's start (no settlement at or before
 * it), since part of the window's funding would then be unknown. The window is anchored on the newest
 * settlement, not on the clock, so a cached answer stays coherent.
 */
export function fundingPaidPer8h(points: FundingPoint[], windowMs = 7 * DAY_MS): { rate8h: number; count: number; from: number; to: number } | null {
  if (points.length === 0) return null;
  const newest = Math.max(...points.map((p) => p.time));
  const start = newest - windowMs + SETTLEMENT_JITTER_MS;
  if (!points.some((p) => p.time <= start)) return null;
  const inWindow = points.filter((p) => p.time > start && p.time <= newest);
  const paid = inWindow.reduce((a, p) => a + p.rate, 0);
  const windowHours = windowMs / HOUR_MS;
  return { rate8h: clean((paid * FUNDING_BASIS_HOURS) / windowHours), count: inWindow.length, from: Math.min(...inWindow.map((p) => p.time)), to: newest };
}

/**
 * The typical spacing of the newest settlements, in whole hours: each of the newest three gaps rounded
 * to the nearest hour (settlement times carry millisecond jitter), then the most common of them, ties
 * going to the newest gap (so a recent change of interval wins as soon as it repeats). Null with fewer
 * than two settlements or outside 1–24 h. Used only when a venue does not state its funding interval.
 */
export function inferIntervalHours(times: number[]): number | null {
  const sorted = [...times].sort((x, y) => y - x);
  const gaps = sorted.slice(0, 4).flatMap((t, i, a) => (i + 1 < a.length ? [Math.round((t - a[i + 1]!) / HOUR_MS)] : []));
  if (gaps.length === 0) return null;
  const counts = gaps.map((g) => gaps.filter((h) => h === g).length);
  const typical = gaps[counts.indexOf(Math.max(...counts))]!;
  return typical >= 1 && typical <= 24 ? typical : null;
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
