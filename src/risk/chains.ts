// The chains interface A covers, with the ids GoPlus uses for them.

export type ChainFamily = 'evm' | 'solana';

export interface Chain {
  name: string;
  /** EVM chain id; null for Solana, which has none. */
  id: number | null;
  family: ChainFamily;
}

export const CHAINS: readonly Chain[] = [
  { name: 'ethereum', id: 1, family: 'evm' },
  { name: 'bsc', id: 56, family: 'evm' },
  { name: 'base', id: 8453, family: 'evm' },
  { name: 'polygon', id: 137, family: 'evm' },
  { name: 'arbitrum', id: 42161, family: 'evm' },
  { name: 'optimism', id: 10, family: 'evm' },
  { name: 'avalanche', id: 43114, family: 'evm' },
  { name: 'fantom', id: 250, family: 'evm' },
  { name: 'zksync', id: 324, family: 'evm' },
  { name: 'linea', id: 59144, family: 'evm' },
  { name: 'scroll', id: 534352, family: 'evm' },
  { name: 'solana', id: null, family: 'solana' },
];

/** What `chain` accepts, for error messages and docs. */
export const ACCEPTED_CHAINS = `one of ${CHAINS.map((c) => c.name).join(', ')} (case-insensitive) or an EVM chain id (${CHAINS.filter((c) => c.id !== null)
  .map((c) => c.id)
  .join(', ')})`;

export function findChain(input: string): Chain | undefined {
  const v = input.trim().toLowerCase();
  return CHAINS.find((c) => c.name === v || (c.id !== null && String(c.id) === v));
}

/** "11 EVM chains", counted from the table, for every text that describes the coverage. */
export const EVM_CHAINS_TEXT = `${CHAINS.filter((c) => c.family === 'evm').length} EVM chains`;
