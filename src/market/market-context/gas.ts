// /v1/gas: Ethereum mainnet gas prices in gwei. With ETHERSCAN_API_KEY, Etherscan's gas oracle; without
// one, derived from eth_feeHistory on RPC_URL_ETHEREUM (src/analytics/gas.ts). `method` says which.
import { z } from 'zod';
import { gasFromFeeHistory } from '../../analytics/gas.ts';
import { defineRoute } from '../../catalog/route.ts';
import { derived, envelope } from '../../upstream/envelope.ts';
import { feeHistory } from '../../sources/eth-fee-history.ts';

/** Blocks of fee history read (about 4 minutes at 12 s a block). */
export const FEE_HISTORY_BLOCKS = 20;
/** Priority-fee percentiles asked for: safe, propose, fast. */
export const FEE_PERCENTILES = [25, 50, 75] as const;

const METHODS = ['etherscan_gas_oracle', 'eth_feeHistory'] as const;

const gwei = (what: string) => z.number().nullable().describe(`${what}, gwei`);

const data = z.object({
  safe_gwei: gwei('Gas price (base fee + priority fee) for a slower inclusion: Etherscan SafeGasPrice, or next base fee + median 25th-percentile priority fee'),
  propose_gwei: gwei('Gas price for a standard inclusion: Etherscan ProposeGasPrice, or next base fee + median 50th-percentile priority fee'),
  fast_gwei: gwei('Gas price for a fast inclusion: Etherscan FastGasPrice, or next base fee + median 75th-percentile priority fee'),
  base_fee_gwei: gwei("Base fee of the next block: Etherscan suggestBaseFee, or the last baseFeePerGas of eth_feeHistory; null when not given"),
  block: z.number().int().describe('Newest block the figures are based on (Etherscan LastBlock, or the newest block of the fee history)'),
  method: z
    .enum(METHODS)
    .describe(
      `etherscan_gas_oracle: Etherscan API V2 gastracker/gasoracle (ETHERSCAN_API_KEY set). eth_feeHistory: the last ${FEE_HISTORY_BLOCKS} blocks of ` +
        `eth_feeHistory with priority-fee percentiles ${FEE_PERCENTILES.join('/')}; each tier = next base fee + the median over non-empty blocks of that percentile`,
    ),
});

export const gas = defineRoute({
  path: '/v1/gas',
  summary: 'Ethereum gas prices (safe, propose, fast, base fee) in gwei',
  description:
    'With ETHERSCAN_API_KEY: the Etherscan API V2 gas oracle (SafeGasPrice, ProposeGasPrice, FastGasPrice, suggestBaseFee, LastBlock); its ' +
    'errors (HTTP 200 with status "0") are a 502, its rate limit a 503. Without a key: eth_feeHistory over the last ' +
    `${FEE_HISTORY_BLOCKS} blocks on RPC_URL_ETHEREUM with priority-fee percentiles ${FEE_PERCENTILES.join(', ')}: base_fee_gwei is the next block's base fee ` +
    '(the last baseFeePerGas), and safe/propose/fast = base fee + the median, over the blocks that carried transactions, of the 25th/50th/75th ' +
    'percentile priority fee. method says which was used. Free: limited per client IP (FREE_RATE_LIMIT, 60/min by default).',
  tag: 'Market context',
  access: 'free',
  data,
  handler: async (_req, { sources, config }) => {
    if (sources.etherscan.configured) {
      const o = await sources.etherscan.gasOracle();
      const d = o.data;
      return envelope(
        { safe_gwei: d.safe_gwei, propose_gwei: d.propose_gwei, fast_gwei: d.fast_gwei, base_fee_gwei: d.base_fee_gwei, block: d.last_block, method: 'etherscan_gas_oracle' as const },
        [o.meta],
      );
    }
    const h = await feeHistory(sources.rpcEthereum, FEE_HISTORY_BLOCKS, FEE_PERCENTILES, config.sources.etherscan.gasTtlS);
    const answer = derived(h.data, 'gas', () => {
      const g = gasFromFeeHistory(h.data, FEE_PERCENTILES.length);
      const [safe, propose, fast] = g.pricesGwei;
      return { safe_gwei: safe ?? null, propose_gwei: propose ?? null, fast_gwei: fast ?? null, base_fee_gwei: g.nextBaseFeeGwei, block: g.block, method: 'eth_feeHistory' as const };
    });
    return envelope(answer, [h.meta]);
  },
});
