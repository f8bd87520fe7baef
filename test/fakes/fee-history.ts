// eth_feeHistory answers for /v1/gas, which asks for the priority-fee percentiles [25, 50, 75].
//
// The recorded mainnet answer (ethrpc__eth_feeHistory_mainnet.json, blocks 22,367,938-22,367,941) was
// asked for [25, 75] only, so its reward rows have two columns. `withMedianColumn` inserts a 50th-percentile
// column CONSTRUCTED for the tests (each value between the block's recorded 25th and 75th): it is
// test data in the recorded format, not a recording. Every other field is the recorded one.
import { recorded } from '../fixtures.ts';

/** Constructed 50th-percentile priority fees, wei: 0.5, 1, 2 and 0.5 gwei. */
export const CONSTRUCTED_P50 = ['0x1dcd6500', '0x3b9aca00', '0x77359400', '0x1dcd6500'];

/** The recorded JSON-RPC answer with reward rows [p25, constructed p50, p75]. */
export function feeHistoryWithMedianColumn(): { jsonrpc: '2.0'; id: number; result: Record<string, unknown> } {
  const answer = recorded('ethrpc__eth_feeHistory_mainnet.json');
  answer.result.reward = (answer.result.reward as string[][]).map(([p25, p75], i) => [p25, CONSTRUCTED_P50[i], p75]);
  return answer;
}
