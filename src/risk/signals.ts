// The provider's risk signals: which GoPlus field each is read from (the readers are provider-readers.ts),
// how risky each value is, and how much it weighs. With the chain's own signals (onchain-signals.ts) this
// table is the scoring model; docs/using/token-risk.md, "Scoring model", explains it.
import type { ChainFamily } from './chains.ts';
import {
  bit,
  buyTaxExplained,
  count,
  defaultAccountFrozen,
  firstBit,
  inDexEvm,
  inDexSolana,
  inverted,
  maliciousAuthority,
  nonEmptyList,
  num,
  ramp,
  sameCreatorHoneypots,
  sellTaxExplained,
  solanaTransferFee,
  status,
  top10HolderShare,
  transferFeeDetails,
  unlockedLpShare,
  type FlagValue,
  type Raw,
  type Reader,
} from './provider-readers.ts';

export { decimal, maliciousAddresses, type FlagValue, type MaliciousAddress } from './provider-readers.ts';

export type Group = 'honeypot' | 'authority' | 'holder_concentration' | 'lp_concentration' | 'tax' | 'trust_list';
export const GROUPS: readonly Group[] = ['honeypot', 'authority', 'holder_concentration', 'lp_concentration', 'tax', 'trust_list'];

export interface SignalDef {
  name: string;
  group: Group;
  description: string;
  read: Partial<Record<ChainFamily, Reader>>;
  /** Relative weight in the score; 0 = shown as a flag, not scored. */
  weight: number;
  /** Risk of a value, 0 (none) to 1 (maximal). Default: true → 1, false → 0. */
  risk?: (v: number | boolean) => number;
  /** Only values for which this holds are scored (the trust list counts only when listed). */
  scoredWhen?: (v: number | boolean) => boolean;
  /** When it fires, the score is at least CRITICAL_FLOOR. */
  critical?: boolean;
  /** The values that fire a critical signal (default: risk 1). */
  criticalWhen?: (v: number | boolean) => boolean;
  /**
   * A documented cause, itself scored, that explains this value: the value is then shown but neither
   * scored again nor critical, and the breakdown says why (`not_scored`). Returns that reason.
   */
  explainedBy?: (v: number | boolean, raw: Raw) => string | undefined;
  /** Values shown beside the signal in its flag group; they are not signals (not scored, not in coverage). */
  details?: Partial<Record<ChainFamily, (raw: Raw) => Record<string, FlagValue>>>;
  /** A situation in which the provider documents no answer for this check (see BLIND_SPOTS). */
  blindWhen?: BlindSpot;
}

/** A critical signal alone (a confirmed honeypot, a token that cannot be sold) puts the score at least here. */
export const CRITICAL_FLOOR = 80;

/**
 * A contract whose source is not verified, and that is not on the provider's trust list, scores at
 * least this: GoPlus calls such contracts extremely risky, and most of its checks cannot be made on
 * them (they come back missing), so a weighted average of the few left would understate the risk.
 */
export const CLOSED_SOURCE_FLOOR = 50;

/** Situations in which GoPlus documents that some checks come back missing, and why. */
export type BlindSpot = 'closed_source' | 'not_in_dex';
export const BLIND_SPOTS: Record<BlindSpot, { signal: string; value: FlagValue; reason: string }> = {
  closed_source: {
    signal: 'closed_source',
    value: true,
    reason: 'The contract source is not verified (is_open_source "0"): GoPlus cannot make these checks on unverified code, so they are missing, not clean.',
  },
  not_in_dex: {
    signal: 'in_dex',
    value: false,
    reason: 'The token is not traded on a DEX (no pool with a main coin): GoPlus then gives no LP holders and cannot simulate a trade, so these are missing.',
  },
};

export const SIGNALS: readonly SignalDef[] = [
  // honeypot: can a holder get out?
  { name: 'is_honeypot', group: 'honeypot', description: 'Provider detected that the token cannot be sold', read: { evm: bit('is_honeypot') }, weight: 10, critical: true, blindWhen: 'closed_source' },
  { name: 'cannot_sell_all', group: 'honeypot', description: 'A holder cannot sell the whole balance at once (a remainder must stay)', read: { evm: bit('cannot_sell_all') }, weight: 5, blindWhen: 'not_in_dex' },
  { name: 'cannot_buy', group: 'honeypot', description: 'The token cannot be bought', read: { evm: bit('cannot_buy') }, weight: 3 },
  {
    name: 'honeypot_with_same_creator',
    group: 'honeypot',
    description: 'The creator made honeypots before (a count above 0; the count is shown)',
    read: { evm: sameCreatorHoneypots },
    details: { evm: (raw) => ({ honeypot_with_same_creator_count: count(raw.honeypot_with_same_creator) }) },
    weight: 3,
  },
  { name: 'transfer_pausable', group: 'honeypot', description: 'Transfers can be paused', read: { evm: bit('transfer_pausable') }, weight: 4, blindWhen: 'closed_source' },
  { name: 'trading_cooldown', group: 'honeypot', description: 'Trades are rate-limited per address', read: { evm: bit('trading_cooldown') }, weight: 2, blindWhen: 'closed_source' },
  {
    name: 'non_transferable',
    group: 'honeypot',
    description: 'Solana: the token cannot be transferred (non_transferable, or none_transferable as the GoPlus SDK spells it)',
    read: { solana: firstBit('non_transferable', 'none_transferable') },
    weight: 10,
    critical: true,
  },
  {
    name: 'default_account_frozen',
    group: 'honeypot',
    description: 'Solana: new token accounts start frozen (default_account_state "2"): a buyer cannot move the token until the authority thaws it',
    read: { solana: defaultAccountFrozen },
    weight: 8,
  },

  // authority: what can the owner / authorities still do?
  { name: 'mintable', group: 'authority', description: 'New supply can be minted', read: { evm: bit('is_mintable'), solana: status('mintable') }, weight: 4, blindWhen: 'closed_source' },
  { name: 'owner_can_change_balance', group: 'authority', description: 'An authority can change holder balances', read: { evm: bit('owner_change_balance'), solana: status('balance_mutable_authority') }, weight: 6, blindWhen: 'closed_source' },
  { name: 'hidden_owner', group: 'authority', description: 'The contract keeps an owner that is hidden', read: { evm: bit('hidden_owner') }, weight: 4, blindWhen: 'closed_source' },
  { name: 'can_take_back_ownership', group: 'authority', description: 'Renounced ownership can be reclaimed', read: { evm: bit('can_take_back_ownership') }, weight: 4, blindWhen: 'closed_source' },
  { name: 'selfdestruct', group: 'authority', description: 'The contract can self-destruct', read: { evm: bit('selfdestruct') }, weight: 4, blindWhen: 'closed_source' },
  { name: 'closed_source', group: 'authority', description: 'The contract source is not verified (then most checks cannot be made; score at least 50 unless trusted)', read: { evm: inverted(bit('is_open_source')) }, weight: 4 },
  { name: 'proxy', group: 'authority', description: 'The contract is an upgradeable proxy', read: { evm: bit('is_proxy') }, weight: 2, blindWhen: 'closed_source' },
  { name: 'external_call', group: 'authority', description: 'The contract calls other contracts on transfer', read: { evm: bit('external_call') }, weight: 1, blindWhen: 'closed_source' },
  { name: 'blacklist', group: 'authority', description: 'Addresses can be blacklisted', read: { evm: bit('is_blacklisted') }, weight: 2, blindWhen: 'closed_source' },
  { name: 'whitelist', group: 'authority', description: 'Only whitelisted addresses can trade at times', read: { evm: bit('is_whitelisted') }, weight: 1, blindWhen: 'closed_source' },
  { name: 'anti_whale_modifiable', group: 'authority', description: 'The max-transaction limit can be changed', read: { evm: bit('anti_whale_modifiable') }, weight: 1, blindWhen: 'closed_source' },
  { name: 'freezable', group: 'authority', description: 'Solana: token accounts can be frozen', read: { solana: status('freezable') }, weight: 4 },
  { name: 'closable', group: 'authority', description: 'Solana: the mint can be closed', read: { solana: status('closable') }, weight: 3 },
  { name: 'metadata_mutable', group: 'authority', description: 'Solana: name/symbol metadata can be changed', read: { solana: status('metadata_mutable') }, weight: 1 },
  { name: 'default_account_state_upgradable', group: 'authority', description: 'Solana: new accounts can be made frozen by default', read: { solana: status('default_account_state_upgradable') }, weight: 1 },
  { name: 'transfer_hook', group: 'authority', description: 'Solana: transfers run a hook program', read: { solana: nonEmptyList('transfer_hook') }, weight: 3 },
  { name: 'transfer_hook_upgradable', group: 'authority', description: 'Solana: a transfer hook can be added or changed', read: { solana: status('transfer_hook_upgradable') }, weight: 2 },
  {
    name: 'malicious_authority',
    group: 'authority',
    description: 'Solana: an address GoPlus knows as malicious holds a live power (an authority whose status is "1", or a set transfer hook); the addresses are in malicious_addresses',
    read: { solana: maliciousAuthority },
    weight: 8,
    // Only a hit counts: not being on GoPlus's list of malicious addresses says little either way.
    scoredWhen: (v) => v === true,
  },

  // holder_concentration
  { name: 'holder_count', group: 'holder_concentration', description: 'Number of holders', read: { evm: num('holder_count'), solana: num('holder_count') }, weight: 0 },
  { name: 'top10_holders_share', group: 'holder_concentration', description: 'Share of supply held by the 10 largest holders, pools and burn addresses left out (fraction); null when no holder list was given', read: { evm: top10HolderShare, solana: top10HolderShare }, weight: 5, risk: ramp(0.2, 0.8) },
  { name: 'creator_share', group: 'holder_concentration', description: 'Share of supply held by the creator (fraction)', read: { evm: num('creator_percent') }, weight: 2, risk: ramp(0.05, 0.3) },
  { name: 'owner_share', group: 'holder_concentration', description: 'Share of supply held by the owner (fraction)', read: { evm: num('owner_percent') }, weight: 2, risk: ramp(0.05, 0.3), blindWhen: 'closed_source' },

  // lp_concentration
  { name: 'in_dex', group: 'lp_concentration', description: 'Traded in at least one DEX pool', read: { evm: inDexEvm, solana: inDexSolana }, weight: 0 },
  { name: 'lp_holder_count', group: 'lp_concentration', description: 'Number of LP token holders', read: { evm: num('lp_holder_count') }, weight: 0, blindWhen: 'not_in_dex' },
  {
    name: 'lp_unlocked_share',
    group: 'lp_concentration',
    description: 'Share of LP tokens neither locked nor burned (fraction); liquidity that can be pulled. null when not traded on a DEX or no LP holder list was given',
    read: { evm: unlockedLpShare(inDexEvm), solana: unlockedLpShare(inDexSolana) },
    weight: 4,
    risk: ramp(0, 1),
    blindWhen: 'not_in_dex',
  },

  // tax (fractions: 0.1 = 10 %)
  { name: 'buy_tax', group: 'tax', description: 'Tax on buys (fraction; 1 = 100 % or cannot buy)', read: { evm: num('buy_tax') }, weight: 3, risk: ramp(0, 0.25), explainedBy: buyTaxExplained, blindWhen: 'not_in_dex' },
  {
    name: 'sell_tax',
    group: 'tax',
    description: 'Tax on sells (fraction); 1 = 100 % or the token cannot be sold, which is critical',
    read: { evm: num('sell_tax') },
    weight: 4,
    risk: ramp(0, 0.25),
    critical: true,
    criticalWhen: (v) => (v as number) >= 1,
    explainedBy: sellTaxExplained,
    blindWhen: 'not_in_dex',
  },
  { name: 'tax_modifiable', group: 'tax', description: 'The owner can change the tax', read: { evm: bit('slippage_modifiable') }, weight: 3, blindWhen: 'closed_source' },
  { name: 'personal_tax_modifiable', group: 'tax', description: 'The owner can set a tax for single addresses', read: { evm: bit('personal_slippage_modifiable') }, weight: 2, blindWhen: 'closed_source' },
  {
    name: 'transfer_fee',
    group: 'tax',
    description: 'Solana: Token-2022 transfer fee a buyer will pay (fraction): the larger of the current and the scheduled rate, both shown',
    read: { solana: solanaTransferFee },
    details: { solana: transferFeeDetails },
    weight: 4,
    risk: ramp(0, 0.25),
  },
  { name: 'transfer_fee_upgradable', group: 'tax', description: 'Solana: the transfer fee can be changed', read: { solana: status('transfer_fee_upgradable') }, weight: 2 },

  // trust_list: only a listing counts (risk 0); not being listed says nothing either way.
  { name: 'trusted', group: 'trust_list', description: "On the provider's trust list", read: { evm: bit('trust_list'), solana: bit('trusted_token') }, weight: 10, risk: () => 0, scoredWhen: (v) => v === true },
];
