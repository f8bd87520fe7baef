// Checks that count in the score although neither the provider nor the chain could make them. Whether the
// token can be sold at all is the first question of a risk check: when GoPlus gives no is_honeypot and the
// chain's simulation tried no sell, the answer must not look like a low risk because the check could not run.
// It then counts as unknown (half risk at the honeypot weight) and the score is at least UNKNOWN_SELL_FLOOR.
import type { ChainFamily } from './chains.ts';
import { isEvmOnchain, type Onchain } from './onchain.ts';
import { simulatedSellBlocked } from './onchain-signals.ts';
import type { FlagValue } from './provider-readers.ts';

/** A score with the sellability unknown is at least this (the closed-source floor's level: not low). */
export const UNKNOWN_SELL_FLOOR = 50;
/** The weight of an unknown sellability: the honeypot checks' own. */
export const UNKNOWN_SELL_WEIGHT = 10;

export interface UnknownCheck {
  signal: string;
  weight: number;
  /** 0.5: neither clean nor failed. */
  risk: number;
  reason: string;
}

/** The checks neither side made. EVM only: Solana has no sell to simulate (its non_transferable and frozen-account checks are read). */
export function unknownChecks(family: ChainFamily, provider: Map<string, FlagValue>, onchain: Onchain | null): UnknownCheck[] {
  if (family !== 'evm' || provider.get('is_honeypot') != null) return [];
  const chain = onchain !== null && isEvmOnchain(onchain) ? simulatedSellBlocked(onchain) : null;
  if (chain !== null) return [];
  return [
    {
      signal: 'sellable',
      weight: UNKNOWN_SELL_WEIGHT,
      risk: 0.5,
      reason: 'Whether the token can be sold is unknown: the provider gave no is_honeypot and the chain simulated no sell (see data_gaps)',
    },
  ];
}
