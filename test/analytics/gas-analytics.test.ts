// The gas derivation from eth_feeHistory (src/analytics/gas.ts), on the recorded mainnet answer.
import { describe, expect, it } from 'vitest';
import { gasFromFeeHistory, median } from '../../src/analytics/gas.ts';
import { recorded } from '../fixtures.ts';

const hexes = (xs: string[]) => xs.map((x) => Number(BigInt(x)));

/** The recorded answer (asked with percentiles [25, 75]) as the analytics take it. */
function recordedWindow() {
  const r = recorded('ethrpc__eth_feeHistory_mainnet.json').result;
  return { oldestBlock: Number(BigInt(r.oldestBlock)), baseFeePerGas: hexes(r.baseFeePerGas), gasUsedRatio: r.gasUsedRatio, reward: r.reward.map(hexes) };
}

describe('median', () => {
  it('is the middle value, or the mean of the two middle values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNull();
  });
});

describe('gasFromFeeHistory', () => {
  it('derives the tiers from the recorded mainnet fee history (blocks 22,367,938-22,367,941, percentiles 25 and 75)', () => {
    const g = gasFromFeeHistory(recordedWindow(), 2);
    // Next base fee = last baseFeePerGas 0x359f85b3 = 899,646,899 wei = 0.899646899 gwei.
    expect(g.nextBaseFeeGwei).toBe(0.899646899);
    // 25th-percentile tips (gwei): 0.079, 0.060211641, 2, 0.05 → sorted 0.05, 0.060211641, 0.079, 2
    //   → median (0.060211641 + 0.079) / 2 = 0.0696058205.
    // 75th-percentile tips: 0.790873196, 1.297587536, 2, 1 → median (1 + 1.297587536) / 2 = 1.148793768.
    expect(g.tipsGwei).toEqual([0.0696058205, 1.148793768]);
    // Prices = base + tip: 0.899646899 + 0.0696058205 = 0.9692527195; 0.899646899 + 1.148793768 = 2.048440667.
    expect(g.pricesGwei).toEqual([0.9692527195, 2.048440667]);
    // oldestBlock 0x1554ec2 = 22,367,938; four blocks → the newest is 22,367,941.
    expect(g.block).toBe(22_367_941);
    expect(g.blocksUsed).toBe(4);
  });

  it('leaves empty blocks (gasUsedRatio 0, zero rewards) out of the medians', () => {
    const w = recordedWindow();
    w.gasUsedRatio[3] = 0;
    w.reward[3] = [0, 0];
    const g = gasFromFeeHistory(w, 2);
    // 25th: 0.079, 0.060211641, 2 → 0.079; 75th: 0.790873196, 1.297587536, 2 → 1.297587536.
    expect(g.tipsGwei).toEqual([0.079, 1.297587536]);
    expect(g.blocksUsed).toBe(3);
  });

  it('gives no tier when every block was empty, but still the base fee', () => {
    const w = recordedWindow();
    w.gasUsedRatio = w.gasUsedRatio.map(() => 0);
    const g = gasFromFeeHistory(w, 2);
    expect(g.tipsGwei).toEqual([null, null]);
    expect(g.pricesGwei).toEqual([null, null]);
    expect(g.nextBaseFeeGwei).toBe(0.899646899);
  });
});
