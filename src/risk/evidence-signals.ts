// The chain's signals from the liquidity, capability, owner-kind and impersonation reads (EVM) and the holder,
// metadata and pausable reads (Solana). A signal that `standsInFor` a provider signal is scored only when the
// provider did not give that one (GoPlus's word, when given, is not counted twice); the others always count.
// A power found in the code counts only while someone can use it: an owner that is not renounced (or no owner()
// at all, whose access control is then unknown). A timelock of at least a day between the owner and a power
// halves its risk: holders see the change coming and can leave.
import type { Power } from '../sources/evm-capabilities.ts';
import type { EvmOnchain, Onchain, SolanaOnchain } from './onchain.ts';
import { ramp, type FlagValue } from './provider-readers.ts';
import type { Group } from './signals.ts';

export interface EvidenceSignalDef {
  name: string;
  group: Group;
  family: 'evm' | 'solana';
  description: string;
  read: (o: Onchain) => FlagValue;
  weight: number;
  /** Risk of a value, 0 to 1 (default: true → 1, false → 0); it may look at the whole evidence. */
  risk?: (v: number | boolean, o: Onchain) => number;
  /** The provider signal this one stands in for: scored only when the provider's came back null. */
  standsInFor?: string;
}

/** A timelock's minimum delay from which it halves the risk of what it guards: one day. */
export const TIMELOCK_GUARD_S = 86_400;

const isEvm = (o: Onchain): o is EvmOnchain => 'has_code' in o;
const evm = (read: (o: EvmOnchain) => FlagValue) => (o: Onchain) => (isEvm(o) ? read(o) : null);
const solana = (read: (o: SolanaOnchain) => FlagValue) => (o: Onchain) => (isEvm(o) ? null : read(o));

/** The owner's guard on its powers: 0.5 behind a timelock of a day or more, else 1. */
export const ownerGuard = (o: Onchain) => {
  const owner = isEvm(o) ? o.owner : null;
  return owner?.kind === 'timelock' && (owner.min_delay_s ?? 0) >= TIMELOCK_GUARD_S ? 0.5 : 1;
};

/** Is `power` in the code with someone to use it? null when the code's powers could not be read. */
export const livePower = (power: Power) => (o: EvmOnchain) => {
  if (o.capabilities === null) return null;
  return o.capabilities.some((c) => c.power === power) && (o.owner === null || !o.owner.renounced);
};

/** The LP share neither burned nor locked (fraction): liquidity its holders can pull. */
export const pullableLp = (o: EvmOnchain) => {
  const l = o.liquidity;
  if (l === null || l.lp_burned_pct === null || l.lp_locked_pct === null) return null;
  return Math.max(0, Math.round(100 * (100 - l.lp_burned_pct - l.lp_locked_pct)) / 10_000);
};

const POWER_SIGNALS: [Power, Group, number, string, string][] = [
  ['mint', 'authority', 4, 'mintable', 'new supply can be minted'],
  ['blacklist', 'authority', 2, 'blacklist', 'addresses can be blocked'],
  ['pause', 'honeypot', 4, 'transfer_pausable', 'transfers can be paused'],
  ['set_fees', 'tax', 3, 'tax_modifiable', 'the fees can be changed'],
  ['set_limits', 'authority', 1, 'anti_whale_modifiable', 'transaction or wallet limits can be changed'],
  ['set_balance', 'authority', 6, 'owner_can_change_balance', 'balances can be rewritten'],
];

export const EVIDENCE_SIGNALS: readonly EvidenceSignalDef[] = [
  {
    name: 'chain_lp_pullable',
    group: 'lp_concentration',
    family: 'evm',
    description: "Share of the pair's LP tokens neither burned nor in a known locker (fraction, risk = the share): liquidity that can be pulled",
    read: evm(pullableLp),
    weight: 4,
    risk: ramp(0, 1),
    standsInFor: 'lp_unlocked_share',
  },
  {
    name: 'chain_thin_liquidity',
    group: 'lp_concentration',
    family: 'evm',
    description: 'Price impact of selling $1,000 worth into the pair (fraction): 0 risk at 2 % or less, 1 at 50 % or more',
    read: evm((o) => (o.liquidity?.impact_1k_pct == null ? null : o.liquidity.impact_1k_pct / 100)),
    weight: 2,
    risk: ramp(0.02, 0.5),
  },
  ...POWER_SIGNALS.map(
    ([power, group, weight, provider, what]): EvidenceSignalDef => ({
      name: `chain_power_${power}`,
      group,
      family: 'evm',
      description: `The code (the implementation's, for a proxy) has a ${power} function from the published table and an owner that is not renounced: ${what} (risk halved behind a timelock of a day or more)`,
      read: evm(livePower(power)),
      weight,
      risk: (v, o) => (v === true ? ownerGuard(o) : 0),
      standsInFor: provider,
    }),
  ),
  {
    name: 'chain_impersonation',
    group: 'trust_list',
    family: 'evm',
    description: "The token's name or symbol is a canonical token's of its chain (USDC, USDT, WBTC, the native wrapper) at another address",
    read: evm((o) => (o.impersonation_unavailable !== null ? null : o.impersonation !== null)),
    weight: 8,
  },
  {
    name: 'chain_top10_share',
    group: 'holder_concentration',
    family: 'solana',
    description: "Share of supply in the 10 largest token accounts (getTokenLargestAccounts; pools' vaults included), fraction: 0 risk at 20 %, 1 at 80 %",
    read: solana((o) => (o.top10_pct === null ? null : o.top10_pct / 100)),
    weight: 5,
    risk: ramp(0.2, 0.8),
    standsInFor: 'top10_holders_share',
  },
  {
    name: 'chain_metadata_mutable',
    group: 'authority',
    family: 'solana',
    description: "The token's Metaplex metadata is mutable with a live update authority: its name and symbol can be changed",
    read: solana((o) => o.metadata_mutable),
    weight: 1,
    standsInFor: 'metadata_mutable',
  },
  {
    name: 'chain_pausable',
    group: 'honeypot',
    family: 'solana',
    description: "Token-2022 pausable extension with an authority (or paused now): every transfer can be stopped",
    read: solana((o) => o.extensions.pausable),
    weight: 4,
  },
];
