// eth_feeHistory over a chain's JSON-RPC source (src/sources/evm-rpc.ts), validated.
//   {"method": "eth_feeHistory", "params": [blockCount (hex), "latest", [percentiles...]]}
//   → {oldestBlock, baseFeePerGas[n+1], gasUsedRatio[n], reward[n][percentiles], baseFeePerBlobGas?, blobGasUsedRatio?}
// Quantities are hex wei; ratios JSON numbers; a node may return fewer blocks than asked (n ≤ blockCount).
import { z } from 'zod';
import type { FeeHistoryWindow } from '../analytics/gas.ts';
import { derived } from '../upstream/envelope.ts';
import { UpstreamError } from '../lib/errors.ts';
import type { Sourced } from './define-source.ts';
import type { EvmRpc } from './evm-rpc.ts';

const hexQuantity = z
  .string()
  .regex(/^0x[0-9a-fA-F]{1,32}$/)
  .transform((v) => Number(BigInt(v)));

const feeHistorySchema = z
  .object({
    oldestBlock: hexQuantity,
    baseFeePerGas: z.array(hexQuantity),
    gasUsedRatio: z.array(z.number().min(0)).min(1),
    reward: z.array(z.array(hexQuantity)),
  })
  .refine((h) => h.baseFeePerGas.length === h.gasUsedRatio.length + 1 && h.reward.length === h.gasUsedRatio.length, {
    message: 'baseFeePerGas must have one entry more than gasUsedRatio, and reward one row per block',
  });

/** The fee history of the newest `blocks` blocks with the `percentiles` priority-fee columns; 502 when the node's answer is not one. */
export async function feeHistory(rpc: EvmRpc, blocks: number, percentiles: readonly number[], ttlS: number): Promise<Sourced<FeeHistoryWindow>> {
  const res = await rpc.request('eth_feeHistory', [`0x${blocks.toString(16)}`, 'latest', percentiles], ttlS);
  const parse = () => feeHistorySchema.safeParse(res.data);
  // A cached answer is the same object: validate it once.
  const checked = typeof res.data === 'object' && res.data !== null ? derived(res.data, 'feeHistory', parse) : parse();
  const source = res.meta.provider;
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue && issue.path.length ? ` at result.${issue.path.join('.')}` : '';
    throw new UpstreamError(source, 'schema', `${source} returned an unexpected eth_feeHistory result${where}`);
  }
  const wrongRow = checked.data.reward.findIndex((row) => row.length !== percentiles.length);
  if (wrongRow >= 0) {
    throw new UpstreamError(source, 'schema', `${source} returned ${checked.data.reward[wrongRow]!.length} reward percentiles for block ${wrongRow}, ${percentiles.length} were asked`);
  }
  return { data: checked.data, meta: res.meta };
}
