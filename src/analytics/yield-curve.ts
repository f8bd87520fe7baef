// The US Treasury par yield curve: its tenors, and the two spreads watched as recession signals.
import { clean } from './numbers.ts';

/** Tenors in the order of the curve, as the API names them. */
export const TENORS = ['1M', '1.5M', '2M', '3M', '4M', '6M', '1Y', '2Y', '3Y', '5Y', '7Y', '10Y', '20Y', '30Y'] as const;
export type Tenor = (typeof TENORS)[number];

/** Par yields in percent by tenor; null where Treasury left the cell blank. */
export type Curve = Record<Tenor, number | null>;

export interface CurveDay {
  /** YYYY-MM-DD. */
  date: string;
  curve: Curve;
}

export interface CurveSignals {
  /** Percentage points: 10Y − 2Y and 10Y − 3M; null when either yield is missing. */
  spreads: { '10y_2y': number | null; '10y_3m': number | null };
  /** True when the spread is below 0 (the long rate under the short one); null when the spread is. */
  inverted: { '10y_2y': boolean | null; '10y_3m': boolean | null };
}

const spread = (long: number | null, short: number | null) => (long === null || short === null ? null : clean(long - short));

export function curveSignals(curve: Curve): CurveSignals {
  const s10y2y = spread(curve['10Y'], curve['2Y']);
  const s10y3m = spread(curve['10Y'], curve['3M']);
  return {
    spreads: { '10y_2y': s10y2y, '10y_3m': s10y3m },
    inverted: { '10y_2y': s10y2y === null ? null : s10y2y < 0, '10y_3m': s10y3m === null ? null : s10y3m < 0 },
  };
}
