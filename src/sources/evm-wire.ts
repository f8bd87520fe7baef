// zod pieces for the Ethereum JSON-RPC wire format (execution-apis spec): quantities are hex strings
// ("0x1b4"), data and hashes are 0x-hex, an unknown block or transaction is `result: null`. Only the
// fields the endpoints use are read; the rest of each object is ignored.
import { z } from 'zod';
import { checksumEvmAddress } from '../params/evm-address.ts';

/** A hex quantity → bigint (wei, gas prices: may exceed 2^53). */
export const quantity = z
  .string()
  .regex(/^0x[0-9a-fA-F]{1,64}$/, 'expected a hex quantity')
  .transform((v) => BigInt(v));

/** A hex quantity that is a count (block number, timestamp, nonce, gas) → a safe JSON number. */
export const countQuantity = quantity.refine((v) => v <= BigInt(Number.MAX_SAFE_INTEGER), 'expected a quantity below 2^53').transform(Number);

/** A 20-byte address → its EIP-55 checksummed form (nodes send lower case). */
export const wireAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected an address')
  .transform((v) => checksumEvmAddress(v));

/** A 32-byte hash → lower case. */
export const hash32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte hash')
  .transform((v) => v.toLowerCase() as `0x${string}`);

/** eth_getBlockByNumber(…, false): transactions are hashes. */
export const wireBlock = z.object({
  number: countQuantity,
  hash: hash32,
  timestamp: countQuantity,
  miner: wireAddress,
  transactions: z.array(z.unknown()),
  gasUsed: countQuantity,
  gasLimit: countQuantity,
  /** Absent before London (EIP-1559). */
  baseFeePerGas: quantity.optional(),
});
export type WireBlock = z.output<typeof wireBlock>;

/** eth_getTransactionByHash: blockNumber null while pending. */
export const wireTransaction = z.object({
  hash: hash32,
  blockNumber: countQuantity.nullable(),
  from: wireAddress,
  /** null for a contract creation. */
  to: wireAddress.nullable(),
  value: quantity,
  nonce: countQuantity,
});
export type WireTransaction = z.output<typeof wireTransaction>;

/** eth_getTransactionReceipt: null until the transaction is in a block. */
export const wireReceipt = z.object({
  transactionHash: hash32,
  blockNumber: countQuantity,
  /** 1 success, 0 reverted; absent before Byzantium (those receipts carry a state root instead). */
  status: z.enum(['0x1', '0x0']).optional(),
  gasUsed: countQuantity,
  /** Price per gas actually paid (base fee + tip after London); absent on some older nodes. */
  effectiveGasPrice: quantity.optional(),
  logs: z.array(z.unknown()),
});
export type WireReceipt = z.output<typeof wireReceipt>;

/** A JSON-RPC success whose `result` has the given shape. Build at module level, once per shape. */
export function rpcAnswer<S extends z.ZodType>(result: S) {
  return z.object({ jsonrpc: z.literal('2.0'), result });
}
