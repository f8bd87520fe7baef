// /v1/chain-block: one block's header figures, by tag (latest, safe, finalized) or number; cached by
// finality (src/sources/evm-lookups.ts).
import { z } from 'zod';
import { defineRoute } from '../../catalog/route.ts';
import { derived, envelope } from '../../upstream/envelope.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { WireBlock } from '../../sources/evm-wire.ts';
import { loadViem } from '../../sources/viem.ts';
import { chainField } from './fields.ts';
import { blockParam, chainParam, parseBlock, parseChain, rpcOf } from './params.ts';

const query = z.object({ chain: chainParam, block: blockParam });

const data = z.object({
  chain: chainField,
  number: z.number().int().describe('Block number'),
  hash: z.string().describe('Block hash, lower-case hex'),
  timestamp: z.string().describe('Block timestamp (seconds, as the block states it), ISO-8601 UTC'),
  miner: z.string().describe('Fee recipient (coinbase) of the block, EIP-55 checksummed; on rollups the sequencer\'s fee vault'),
  transaction_count: z.number().int().describe('Transactions in the block'),
  gas_used: z.number().int().describe('Gas used by all its transactions'),
  gas_limit: z.number().int().describe('Gas limit of the block'),
  base_fee_per_gas_wei: z.string().nullable().describe('EIP-1559 base fee per gas in wei, a decimal integer string; null before London (no base fee)'),
  base_fee_per_gas_gwei: z.string().nullable().describe('The same in gwei (wei / 10^9), an exact decimal string'),
});

type BlockData = z.output<typeof data>;

function blockData(chain: string, b: WireBlock, formatGwei: (wei: bigint) => string): BlockData {
  return {
    chain,
    number: b.number,
    hash: b.hash,
    timestamp: new Date(b.timestamp * 1000).toISOString(),
    miner: b.miner,
    transaction_count: b.transactions.length,
    gas_used: b.gasUsed,
    gas_limit: b.gasLimit,
    base_fee_per_gas_wei: b.baseFeePerGas === undefined ? null : b.baseFeePerGas.toString(),
    base_fee_per_gas_gwei: b.baseFeePerGas === undefined ? null : formatGwei(b.baseFeePerGas),
  };
}

export const chainBlock = defineRoute({
  path: '/v1/chain-block',
  summary: 'A block of an EVM chain: number, hash, time, miner, transactions, gas and base fee',
  description:
    'eth_getBlockByNumber at a tag (latest, safe, finalized) or a number. Cached briefly (CACHE_TTL_CHAIN_HEAD_S) for tags and for blocks above ' +
    'the newest finalized block, longer (CACHE_TTL_CHAIN_FINAL_S) for finalized blocks, which can no longer change. A number beyond the head is a 404.',
  tag: 'On-chain',
  access: 'paid',
  query,
  data,
  example: { chain: 'ethereum', block: 'latest' },
  handler: async (req, { sources }) => {
    const chain = parseChain(req.query.chain);
    const ref = parseBlock(req.query.block);
    const rpc = rpcOf(sources, chain);
    const got = await rpc.block(ref);
    const block = got.data;
    if (!block) throw new NotFoundError(typeof ref === 'number' ? `${chain.name} has no block ${ref} (beyond the head)` : `${chain.name} has no ${ref} block`, rpc.name);
    const { formatGwei } = await loadViem();
    return envelope(derived(block, 'chain-block', () => blockData(chain.name, block, formatGwei)), [got.meta]);
  },
});
