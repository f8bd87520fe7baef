// Liquidity levels: swing highs (buy-side liquidity rests above them: short stops, breakout buys)
// and swing lows (sell-side liquidity below them), whether later candles took them, and clusters of
// relative-equal swings (pools). Pure: closed candles (oldest first) in.
import type { Candle } from './candles.ts';
import { clean } from './numbers.ts';

/** Default bars on each side of a swing. */
export const SWING_BARS = 3;
/** Swings whose prices lie within this many ATRs of the first of a group are relative-equal. */
export const POOL_TOLERANCE_ATR = 0.1;

export type LevelSide = 'buy_side' | 'sell_side';
export type LevelStatus = 'untaken' | 'swept' | 'taken';

export interface LiquidityLevel {
  /** The swing high (buy-side) or swing low (sell-side). */
  price: number;
  /** Open time of the swing candle. */
  formed_at: string;
  status: LevelStatus;
}

export interface LiquidityPool {
  /** The outermost member: the highest of relative-equal highs, the lowest of relative-equal lows. */
  price: number;
  count: number;
  /** Oldest first. */
  members: { price: number; formed_at: string }[];
}

export interface NearestLevel {
  side: LevelSide;
  price: number;
  formed_at: string;
  /** (level − price) / price × 100. */
  distance_pct: number;
}

export interface LiquidityReport {
  /** Close of the last closed candle. */
  price: number;
  /** Swing highs, oldest first. */
  buy_side: LiquidityLevel[];
  /** Swing lows, oldest first. */
  sell_side: LiquidityLevel[];
  /** The tolerance used to group relative-equal swings (price units). */
  pool_tolerance: number;
  pools: { buy_side: LiquidityPool[]; sell_side: LiquidityPool[] };
  nearest_untaken_above: NearestLevel | null;
  nearest_untaken_below: NearestLevel | null;
}

/**
 * Indices of swing highs (or lows): candles whose high is strictly above (low strictly below) the
 * highs (lows) of the `n` candles on each side. The last `n` candles cannot be swings yet.
 */
export function swingIndices(c: readonly Candle[], n: number, kind: 'high' | 'low'): number[] {
  const out: number[] = [];
  for (let i = n; i < c.length - n; i++) {
    const v = c[i]![kind];
    let extreme = true;
    for (let j = i - n; extreme && j <= i + n; j++) {
      if (j !== i) extreme = kind === 'high' ? c[j]!.high < v : c[j]!.low > v;
    }
    if (extreme) out.push(i);
  }
  return out;
}

/**
 * What later candles did to a swing high at `price` (mirrored for a swing low):
 * taken = a later close went above it; swept = a later high went above it but no close did (the wick
 * went through, price closed back); untaken = no later high went above it. Equal is not through.
 */
export function levelStatus(c: readonly Candle[], index: number, kind: 'high' | 'low'): LevelStatus {
  const level = c[index]![kind];
  let wick = false;
  for (let j = index + 1; j < c.length; j++) {
    const b = c[j]!;
    if (kind === 'high' ? b.close > level : b.close < level) return 'taken';
    if (kind === 'high' ? b.high > level : b.low < level) wick = true;
  }
  return wick ? 'swept' : 'untaken';
}

/**
 * Pools of relative-equal swings among `levels`: sorted by price (then time), a pool starts at the
 * first level and takes each next one within `tolerance` of that first level; a group of two or more
 * is a pool.
 */
export function equalLevelPools(levels: readonly LiquidityLevel[], tolerance: number, side: LevelSide): LiquidityPool[] {
  const sorted = [...levels].sort((a, b) => a.price - b.price || a.formed_at.localeCompare(b.formed_at));
  const pools: LiquidityPool[] = [];
  let k = 0;
  while (k < sorted.length) {
    const start = sorted[k]!.price;
    let end = k + 1;
    while (end < sorted.length && sorted[end]!.price - start <= tolerance) end++;
    const group = sorted.slice(k, end);
    if (group.length >= 2) {
      const prices = group.map((g) => g.price);
      pools.push({
        price: side === 'buy_side' ? Math.max(...prices) : Math.min(...prices),
        count: group.length,
        members: group.map((g) => ({ price: g.price, formed_at: g.formed_at })).sort((a, b) => a.formed_at.localeCompare(b.formed_at)),
      });
    }
    k = end;
  }
  return pools;
}

/**
 * Swing highs and lows of `c` with `n` bars on each side, their status, pools of untaken
 * relative-equal swings (within `tolerance` price units), and the nearest untaken level above and
 * below the last close (an untaken swing high is never below it, an untaken swing low never above it).
 */
export function liquidityLevels(c: readonly Candle[], n: number, tolerance: number): LiquidityReport | null {
  if (c.length === 0) return null;
  const price = c.at(-1)!.close;
  const levels = (kind: 'high' | 'low'): LiquidityLevel[] =>
    swingIndices(c, n, kind).map((i) => ({ price: c[i]![kind], formed_at: c[i]!.time, status: levelStatus(c, i, kind) }));
  const buy = levels('high');
  const sell = levels('low');
  const untakenBuy = buy.filter((l) => l.status === 'untaken');
  const untakenSell = sell.filter((l) => l.status === 'untaken');
  const nearest = (side: LevelSide, candidates: LiquidityLevel[]): NearestLevel | null => {
    if (candidates.length === 0) return null;
    const best = candidates.reduce((a, b) => (Math.abs(b.price - price) < Math.abs(a.price - price) ? b : a));
    return { side, price: best.price, formed_at: best.formed_at, distance_pct: clean(((best.price - price) / price) * 100) };
  };
  return {
    price,
    buy_side: buy,
    sell_side: sell,
    pool_tolerance: clean(tolerance),
    pools: { buy_side: equalLevelPools(untakenBuy, tolerance, 'buy_side'), sell_side: equalLevelPools(untakenSell, tolerance, 'sell_side') },
    nearest_untaken_above: nearest('buy_side', untakenBuy.filter((l) => l.price >= price)),
    nearest_untaken_below: nearest('sell_side', untakenSell.filter((l) => l.price <= price)),
  };
}
