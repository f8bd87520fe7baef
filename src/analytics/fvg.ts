// Fair value gaps: three-candle patterns where candle 3 does not overlap candle 1, leaving a price
// zone that candle 2 crossed with no trading on the other side. Pure: closed candles (oldest first) in.
import type { Candle } from './candles.ts';
import { clean } from './numbers.ts';

export type GapDirection = 'bullish' | 'bearish';
export type GapStatus = 'unfilled' | 'partially_filled' | 'filled';

export interface FairValueGap {
  direction: GapDirection;
  /** Upper edge of the zone. */
  top: number;
  /** Lower edge of the zone. */
  bottom: number;
  /** Consequent encroachment: the zone's 50 % level, (top + bottom) / 2. */
  ce: number;
  /** top − bottom. */
  size: number;
  /** size / ce × 100. */
  size_pct: number;
  /** Open time of candle 2, the candle whose range holds the gap. */
  formed_at: string;
  /** Closed candles after candle 3 (those that judge the fill); 0 when candle 3 is the last closed candle. */
  age_candles: number;
  status: GapStatus;
  /** How deep later candles reached into the zone, percent of its size (0-100). */
  fill_pct: number;
  /** (nearest edge − price) / price × 100: positive above the price, negative below, 0 when the price is inside. */
  distance_pct: number;
}

export interface GapReport {
  /** Close of the last closed candle: the price the distances are measured from. */
  price: number;
  /** Oldest first. */
  gaps: FairValueGap[];
  /** The unfilled gap above the price with the smallest distance; null when there is none. */
  nearest_unfilled_above: FairValueGap | null;
  nearest_unfilled_below: FairValueGap | null;
}

/**
 * Every gap in `c`, for candles i−2, i−1, i (candle 1, 2, 3):
 *   bullish when low_3 > high_1: zone bottom = high_1, top = low_3;
 *   bearish when high_3 < low_1: zone top = low_1, bottom = high_3.
 * Fill is judged on the candles after candle 3: for a bullish gap (below the move) how far their
 * lowest low came down into the zone, fill = (top − min low) / size; for a bearish gap how far their
 * highest high came up, fill = (max high − bottom) / size; each clamped to 0-100 %.
 * status: unfilled at 0 % (no later candle traded inside the zone; touching an edge is not inside),
 * filled at 100 % (a later candle traded through the far edge), partially_filled in between.
 */
export function fairValueGaps(c: readonly Candle[]): GapReport | null {
  if (c.length === 0) return null;
  const price = c.at(-1)!.close;
  const gaps: FairValueGap[] = [];
  for (let i = 2; i < c.length; i++) {
    const first = c[i - 2]!;
    const third = c[i]!;
    let direction: GapDirection;
    let top: number;
    let bottom: number;
    if (third.low > first.high) [direction, bottom, top] = ['bullish', first.high, third.low];
    else if (third.high < first.low) [direction, top, bottom] = ['bearish', first.low, third.high];
    else continue;
    gaps.push(gap(direction, top, bottom, c[i - 1]!.time, c.slice(i + 1), price));
  }
  const open = gaps.filter((g) => g.status === 'unfilled');
  const nearest = (side: FairValueGap[]) => side.reduce<FairValueGap | null>((best, g) => (best === null || Math.abs(g.distance_pct) < Math.abs(best.distance_pct) ? g : best), null);
  return {
    price,
    gaps,
    nearest_unfilled_above: nearest(open.filter((g) => g.bottom > price)),
    nearest_unfilled_below: nearest(open.filter((g) => g.top < price)),
  };
}

function gap(direction: GapDirection, top: number, bottom: number, formedAt: string, after: readonly Candle[], price: number): FairValueGap {
  const size = top - bottom;
  const reach = direction === 'bullish' ? top - Math.min(top, ...after.map((b) => b.low)) : Math.max(bottom, ...after.map((b) => b.high)) - bottom;
  const fill = Math.min(1, Math.max(0, reach / size));
  const edge = price < bottom ? bottom : price > top ? top : price;
  const ce = (top + bottom) / 2;
  return {
    direction,
    top,
    bottom,
    ce: clean(ce),
    size: clean(size),
    size_pct: clean((size / ce) * 100),
    formed_at: formedAt,
    age_candles: after.length,
    status: fill <= 0 ? 'unfilled' : fill >= 1 ? 'filled' : 'partially_filled',
    fill_pct: clean(fill * 100),
    distance_pct: clean(((edge - price) / price) * 100),
  };
}
