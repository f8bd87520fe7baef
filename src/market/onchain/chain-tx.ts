// /v1/chain-tx: a transaction and its outcome (receipt), or "pending" while it waits in the pool;
// cached by finality (src/sources/evm-lookups.ts).
import { z } from 'zod';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { NotFoundError, UpstreamError } from '../../lib/errors.ts';
import type { EvmChain } from '../../sources/evm-rpc.ts';
import type { TxLookup } from '../../sources/evm-lookups.ts';
import { loadViem } from '../../sources/viem.ts';
import { chainField } from './fields.ts';
import { chainParam, parseChain, rpcOf, txHashParam } from './params.ts';

const query = z.object({ hash: txHashParam, chain: chainParam });

const data = z.object({
  chain: chainField,
  hash: z.string().describe('Transaction hash, lower-case hex'),
  status: z
    .enum(['success', 'reverted', 'pending'])
    .nullable()
    .describe('success / reverted: the receipt status (1 / 0); pending: not in a block yet; null: a pre-Byzantium receipt, which has no status'),
  block_number: z.number().int().nullable().describe('Block it was mined in; null while pending'),
  from: z.string().describe('Sender, EIP-55 checksummed'),
  to: z.string().nullable().describe('Recipient, EIP-55 checksummed; null for a contract creation'),
  value_wei: z.string().describe('Native value sent, in wei, a decimal integer string'),
  value: z.string().describe('value_wei / 10^18 in the native coin (ETH, or POL on polygon), an exact decimal string'),
  nonce: z.number().int().describe("The sender's nonce used by this transaction"),
  gas_used: z.number().int().nullable().describe('Gas the transaction used (receipt); null while pending'),
  effective_gas_price_wei: z.string().nullable().describe('Price per gas actually paid (receipt effectiveGasPrice), wei, decimal string; null while pending or when the node does not give it'),
  effective_gas_price_gwei: z.string().nullable().describe('The same in gwei (wei / 10^9), an exact decimal string'),
  log_count: z.number().int().nullable().describe('Event logs the transaction emitted (receipt); null while pending'),
});

type TxData = z.output<typeof data>;

type Units = Pick<typeof import('viem'), 'formatGwei' | 'formatUnits'>;

function txData(chain: EvmChain, source: string, hash: string, { transaction: tx, receipt }: TxLookup, { formatGwei, formatUnits }: Units): TxData {
  if (!tx) {
    if (receipt) throw new UpstreamError(source, 'provider', `${source} has a receipt for ${hash} but not the transaction (inconsistent answers)`);
    throw new NotFoundError(`${chain.name} has no transaction ${hash}`, source);
  }
  // A transaction that is in a block has a receipt; a node that has not indexed it yet cannot say how it went.
  if (!receipt && tx.blockNumber !== null) throw new UpstreamError(source, 'provider', `${source} has ${hash} in block ${tx.blockNumber} but no receipt for it yet`);
  const price = receipt?.effectiveGasPrice ?? null;
  return {
    chain: chain.name,
    hash: tx.hash,
    status: !receipt ? 'pending' : receipt.status === undefined ? null : receipt.status === '0x1' ? 'success' : 'reverted',
    block_number: receipt?.blockNumber ?? null,
    from: tx.from,
    to: tx.to,
    value_wei: tx.value.toString(),
    value: formatUnits(tx.value, chain.viem.nativeCurrency.decimals),
    nonce: tx.nonce,
    gas_used: receipt?.gasUsed ?? null,
    effective_gas_price_wei: price === null ? null : price.toString(),
    effective_gas_price_gwei: price === null ? null : formatGwei(price),
    log_count: receipt ? receipt.logs.length : null,
  };
}

export const chainTx = defineRoute({
  path: '/v1/chain-tx',
  summary: 'A transaction on an EVM chain: status, block, sender, recipient, value, nonce, gas',
  description:
    'eth_getTransactionByHash and eth_getTransactionReceipt, asked together. No receipt yet → status "pending" with block_number, gas_used, ' +
    'the gas price and log_count null. An unknown hash is a 404. Cached briefly (CACHE_TTL_CHAIN_HEAD_S) while pending or in a block above the ' +
    'newest finalized block, longer (CACHE_TTL_CHAIN_FINAL_S) once its block is finalized.',
  tag: 'On-chain',
  access: 'paid',
  query,
  data,
  example: { hash: '0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b', chain: 'ethereum' },
  handler: async (req, { sources }) => {
    const chain = parseChain(req.query.chain);
    const rpc = rpcOf(sources, chain);
    const got = await rpc.transaction(req.query.hash);
    return envelope(txData(chain, rpc.name, req.query.hash, got.data, await loadViem()), mergeSourceMetas(got.metas));
  },
});
