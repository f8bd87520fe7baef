// Order-book statistics: a pure function of the levels a venue sent.
import { roundTo } from './numbers.ts';

export type Level = [price: number, size: number];

export interface BookSummary {
  bids: Level[];
  asks: Level[];
  best_bid: number | null;
  best_ask: number | null;
  mid: number | null;
  spread: number | null;
  spread_bps: number | null;
  bid_depth_quote: number;
  ask_depth_quote: number;
  imbalance: number | null;
}

/**
 * Sorts each side best first (bids high→low, asks low→high), keeps `depth` levels, and computes:
 *   mid = (best_bid + best_ask) / 2          spread = best_ask − best_bid
 *   spread_bps = spread / mid × 10 000       side depth = Σ price × size over the returned levels (quote currency)
 *   imbalance = (bid_depth − ask_depth) / (bid_depth + ask_depth), from −1 (all asks) to 1 (all bids)
 * An empty side makes best/mid/spread null (its depth is 0); an empty book makes imbalance null.
 * Float noise is removed by rounding to the inputs' own decimals (spread: the prices' decimals, mid: one
 * more, depth: price decimals + size decimals); spread_bps is rounded to 4 decimals, imbalance to 6.
 */
export function summariseBook(bids: Level[], asks: Level[], depth: number): BookSummary {
  const b = [...bids].sort((x, y) => y[0] - x[0]).slice(0, depth);
  const a = [...asks].sort((x, y) => x[0] - y[0]).slice(0, depth);
  const bestBid = b[0]?.[0] ?? null;
  const bestAsk = a[0]?.[0] ?? null;
  let mid: number | null = null;
  let spread: number | null = null;
  let spreadBps: number | null = null;
  if (bestBid !== null && bestAsk !== null) {
    const dp = Math.max(decimals(bestBid), decimals(bestAsk));
    mid = roundTo((bestBid + bestAsk) / 2, dp + 1);
    spread = roundTo(bestAsk - bestBid, dp);
    spreadBps = mid === 0 ? null : roundTo((spread / mid) * 1e4, 4);
  }
  const bidDepth = sideDepth(b);
  const askDepth = sideDepth(a);
  const total = bidDepth + askDepth;
  return {
    bids: b,
    asks: a,
    best_bid: bestBid,
    best_ask: bestAsk,
    mid,
    spread,
    spread_bps: spreadBps,
    bid_depth_quote: bidDepth,
    ask_depth_quote: askDepth,
    imbalance: total === 0 ? null : roundTo((bidDepth - askDepth) / total, 6),
  };
}

function sideDepth(levels: Level[]): number {
  if (levels.length === 0) return 0;
  const dp = Math.max(...levels.map(([p]) => decimals(p))) + Math.max(...levels.map(([, s]) => decimals(s)));
  return roundTo(levels.reduce((sum, [p, s]) => sum + p * s, 0), dp);
}

/** Decimal places of a finite number as JavaScript prints it (1e-7 → 7, 0.125 → 3). */
function decimals(n: number): number {
  const [mantissa = '', exp] = String(n).split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exp ?? 0));
}
