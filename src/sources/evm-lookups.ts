// Block and transaction lookups of one chain, cached by how final they are:
//   - the head (`latest`, `safe`, `finalized`: tags whose block moves), a block above the newest
//     finalized block, a pending or unknown transaction: CACHE_TTL_CHAIN_HEAD_S (brief);
//   - a block at or below the newest finalized block, a transaction mined in one: CACHE_TTL_CHAIN_FINAL_S.
// Finality only grows, so the highest finalized block number seen on this chain (from any `finalized`
// answer) is a safe bound: data at or below it can no longer change. It is refreshed alongside any
// lookup that might be newer, through the same brief cache.
import type { z } from 'zod';
import type { SourceMeta } from '../upstream/envelope.ts';
import type { Sourced } from './define-source.ts';
import { rpcAnswer, wireBlock, wireReceipt, wireTransaction, type WireBlock, type WireReceipt, type WireTransaction } from './evm-wire.ts';

export type BlockTag = 'latest' | 'safe' | 'finalized';
export type BlockRef = BlockTag | number;

export interface LookupTtls {
  headTtlS: number;
  finalTtlS: number;
}

/** One JSON-RPC call whose answer is checked against `answer`, cached `ttlS` seconds. */
export type FetchResult = <S extends z.ZodType<{ result: unknown }>>(method: string, params: unknown[], answer: S, ttlS: number) => Promise<Sourced<z.output<S>['result']>>;

export interface TxLookup {
  /** null: the node does not know the hash. */
  transaction: WireTransaction | null;
  /** null: not in a block yet (or unknown). */
  receipt: WireReceipt | null;
}

const blockAnswer = rpcAnswer(wireBlock.nullable());
const txAnswer = rpcAnswer(wireTransaction.nullable());
const receiptAnswer = rpcAnswer(wireReceipt.nullable());

/** Transactions remembered with the block they were mined in (to pick their TTL before asking again). */
const MINED_IN_MAX = 10_000;

export function chainLookups(fetchResult: FetchResult, ttls: LookupTtls) {
  let finalized = -1;
  const minedIn = new Map<string, number>();
  const isFinal = (blockNumber: number | undefined) => blockNumber !== undefined && blockNumber <= finalized;
  const ttlFor = (blockNumber: number | undefined) => (isFinal(blockNumber) ? ttls.finalTtlS : ttls.headTtlS);

  const getBlock = async (ref: BlockRef, ttlS: number): Promise<Sourced<WireBlock | null>> => {
    const got = await fetchResult('eth_getBlockByNumber', [typeof ref === 'number' ? `0x${ref.toString(16)}` : ref, false], blockAnswer, ttlS);
    if (ref === 'finalized' && got.data) finalized = Math.max(finalized, got.data.number);
    return got;
  };

  /**
   * Learns the newest finalized block. Only a cache hint: when the node cannot say (an old node
   * without the tag, a failure), data is simply cached briefly; nothing served depends on it.
   */
  const refreshFinalized = () => getBlock('finalized', ttls.headTtlS).then(
    () => undefined,
    () => undefined,
  );

  return {
    /** The block at a tag or number; data null when the chain has no such block (beyond the head). */
    async block(ref: BlockRef): Promise<Sourced<WireBlock | null>> {
      if (typeof ref !== 'number') return getBlock(ref, ttls.headTtlS);
      if (isFinal(ref)) return getBlock(ref, ttls.finalTtlS);
      const [got] = await Promise.all([getBlock(ref, ttls.headTtlS), refreshFinalized()]);
      return got;
    },

    /** A transaction and its receipt, asked together. */
    async transaction(hash: `0x${string}`): Promise<{ data: TxLookup; metas: SourceMeta[] }> {
      const known = minedIn.get(hash);
      const ttlS = ttlFor(known);
      const [tx, receipt] = await Promise.all([
        fetchResult('eth_getTransactionByHash', [hash], txAnswer, ttlS),
        fetchResult('eth_getTransactionReceipt', [hash], receiptAnswer, ttlS),
        isFinal(known) ? undefined : refreshFinalized(),
      ]);
      if (receipt.data) remember(minedIn, hash, receipt.data.blockNumber);
      return { data: { transaction: tx.data, receipt: receipt.data }, metas: [tx.meta, receipt.meta] };
    },
  };
}

function remember(map: Map<string, number>, hash: string, blockNumber: number): void {
  map.delete(hash);
  map.set(hash, blockNumber);
  if (map.size > MINED_IN_MAX) map.delete(map.keys().next().value as string);
}

export type ChainLookups = ReturnType<typeof chainLookups>;
