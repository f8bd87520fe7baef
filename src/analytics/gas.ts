// Gas prices from an eth_feeHistory answer (no I/O). The definitions, also in docs/using/market-context.md:
//
//   next base fee   = baseFeePerGas[n]  (the node's last entry is the base fee of the block after the
//                     newest one: what a transaction sent now pays, before its priority fee)
//   tip(p)          = the median, over the blocks of the window that carried transactions (gasUsedRatio > 0),
//                     of that block's p-th percentile priority fee (reward[i][p]); empty blocks report
//                     zero rewards and would drag it down, so they are left out. Median of an even count
//                     = mean of the two middle values. null when every block was empty.
//   price(p)        = next base fee + tip(p)
//
// Everything is converted from wei to gwei (÷ 1e9) and rounded only to strip float noise.
import { clean } from './numbers.ts';

const WEI_PER_GWEI = 1e9;

export interface FeeHistoryWindow {
  /** Number of the oldest block of the window. */
  oldestBlock: number;
  /** n + 1 base fees, wei; the last is the next block's. */
  baseFeePerGas: number[];
  /** n ratios of gas used to the gas limit, one per block. */
  gasUsedRatio: number[];
  /** n rows of priority fees in wei, one column per requested percentile. */
  reward: number[][];
}

export interface FeeHistoryGas {
  /** Newest block of the window. */
  block: number;
  /** Blocks that carried transactions and entered the medians. */
  blocksUsed: number;
  nextBaseFeeGwei: number;
  /** Per requested percentile: median priority fee, gwei (null when no block carried transactions). */
  tipsGwei: (number | null)[];
  /** Per requested percentile: next base fee + tip, gwei. */
  pricesGwei: (number | null)[];
}

/** The median of a non-empty list; null for an empty one. */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** See the definitions at the top. `percentiles` is the number of reward columns asked for. */
export function gasFromFeeHistory(h: FeeHistoryWindow, percentiles: number): FeeHistoryGas {
  const n = h.gasUsedRatio.length;
  const busy = h.reward.filter((_, i) => (h.gasUsedRatio[i] ?? 0) > 0);
  const nextBaseFeeGwei = h.baseFeePerGas[n]! / WEI_PER_GWEI;
  const tipsGwei = Array.from({ length: percentiles }, (_, j) => {
    const tip = median(busy.map((row) => row[j]!));
    return tip === null ? null : tip / WEI_PER_GWEI;
  });
  return {
    block: h.oldestBlock + n - 1,
    blocksUsed: busy.length,
    nextBaseFeeGwei: clean(nextBaseFeeGwei),
    tipsGwei: tipsGwei.map((t) => (t === null ? null : clean(t))),
    pricesGwei: tipsGwei.map((t) => (t === null ? null : clean(nextBaseFeeGwei + t))),
  };
}
