// The risk signals: how each is read from the GoPlus object, how risky each value is, and how
// much it weighs. This table is the scoring model; README "Scoring model" explains it.
import type { ChainFamily } from './chains.ts';

export type Group = 'honeypot' | 'authority' | 'holder_concentration' | 'lp_concentration' | 'tax' | 'trust_list';
export const GROUPS: readonly Group[] = ['honeypot', 'authority', 'holder_concentration', 'lp_concentration', 'tax', 'trust_list'];

export type FlagValue = boolean | number | null;
type Raw = Record<string, unknown>;
type Reader = (raw: Raw) => FlagValue;

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
  /** When its risk is 1, the score is at least CRITICAL_FLOOR. */
  critical?: boolean;
}

/** A critical signal alone (a confirmed honeypot) puts the score at least here. */
export const CRITICAL_FLOOR = 80;

// --- readers: the provider's strings → booleans / numbers; anything else counts as not given ---

/** "1"/"0" (or 1/0) → true/false. */
const bit =
  (key: string): Reader =>
  (raw) => {
    const v = raw[key];
    if (v === '1' || v === 1 || v === true) return true;
    if (v === '0' || v === 0 || v === false) return false;
    return null;
  };

const inverted =
  (read: Reader): Reader =>
  (raw) => {
    const v = read(raw);
    return typeof v === 'boolean' ? !v : null;
  };

/** Decimal string or number → number. */
export function decimal(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string' || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

const num =
  (key: string): Reader =>
  (raw) =>
    decimal(raw[key]);

/** Solana authority objects: `{ status: "0" | "1", authority: [...] }`. */
const status =
  (key: string): Reader =>
  (raw) => {
    const v = raw[key];
    return v !== null && typeof v === 'object' ? bit('status')(v as Raw) : null;
  };

/** Solana `transfer_hook`: a list of hook programs; non-empty means transfers run foreign code. */
const nonEmptyList =
  (key: string): Reader =>
  (raw) => {
    const v = raw[key];
    return Array.isArray(v) ? v.length > 0 : null;
  };

const BURN_ADDRESSES = new Set([
  '0x0000000000000000000000000000000000000000',
  '0x000000000000000000000000000000000000dead',
  '0xdead000000000000000042069420694206942069',
  '11111111111111111111111111111111',
]);

interface Holder {
  address: string;
  percent: number;
  locked: boolean;
}

/** Holder rows of either family (`address` on EVM, `account` on Solana). null when absent. */
function holders(raw: Raw, key: string): Holder[] | null {
  const list = raw[key];
  if (!Array.isArray(list)) return null;
  const out: Holder[] = [];
  for (const row of list) {
    if (row === null || typeof row !== 'object') continue;
    const r = row as Raw;
    const address = String(r.address ?? r.account ?? '').toLowerCase();
    const percent = decimal(r.percent);
    if (percent === null || percent < 0) continue;
    out.push({ address, percent, locked: r.is_locked === 1 || r.is_locked === '1' });
  }
  return out;
}

/** Liquidity pool addresses (EVM `dex[].pair`): tokens held by the pool are liquidity, not a holder. */
function poolAddresses(raw: Raw): Set<string> {
  const dex = Array.isArray(raw.dex) ? (raw.dex as Raw[]) : [];
  return new Set(dex.map((d) => String(d?.pair ?? '').toLowerCase()).filter(Boolean));
}

/** Share of supply held by the ten largest holders, leaving out pools and burn addresses. */
const top10HolderShare: Reader = (raw) => {
  const list = holders(raw, 'holders');
  if (list === null) return null;
  const pools = poolAddresses(raw);
  const share = list
    .filter((h) => !pools.has(h.address) && !BURN_ADDRESSES.has(h.address))
    .sort((a, b) => b.percent - a.percent)
    .slice(0, 10)
    .reduce((sum, h) => sum + h.percent, 0);
  return Math.min(1, round6(share));
};

/** Share of LP tokens that is neither locked nor burned, i.e. can be pulled. */
const unlockedLpShare: Reader = (raw) => {
  const list = holders(raw, 'lp_holders');
  if (list === null) return null;
  const share = list.filter((h) => !h.locked && !BURN_ADDRESSES.has(h.address)).reduce((sum, h) => sum + h.percent, 0);
  return Math.min(1, round6(share));
};

/** EVM `is_in_dex`; Solana: listed pools in `dex`. */
const inDexSolana: Reader = (raw) => (Array.isArray(raw.dex) ? raw.dex.length > 0 : null);

/** Solana Token-2022 transfer fee: `{}` = no fee; otherwise the current rate (basis points or fraction). */
const solanaTransferFee: Reader = (raw) => {
  const fee = raw.transfer_fee;
  if (fee === null || typeof fee !== 'object' || Array.isArray(fee)) return null;
  const f = fee as Raw;
  if (Object.keys(f).length === 0) return 0;
  const rate = decimal(f.current_fee_rate);
  return rate === null ? null : rate > 1 ? rate / 10_000 : rate;
};

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
/** Linear ramp: 0 at `from`, 1 at `to`. */
const ramp = (from: number, to: number) => (v: number | boolean) => clamp01(((v as number) - from) / (to - from));

export const SIGNALS: readonly SignalDef[] = [
  // honeypot: can a holder get out?
  { name: 'is_honeypot', group: 'honeypot', description: 'Provider detected that the token cannot be sold', read: { evm: bit('is_honeypot') }, weight: 10, critical: true },
  { name: 'cannot_sell_all', group: 'honeypot', description: 'A holder cannot sell the whole balance at once', read: { evm: bit('cannot_sell_all') }, weight: 5 },
  { name: 'cannot_buy', group: 'honeypot', description: 'The token cannot be bought', read: { evm: bit('cannot_buy') }, weight: 3 },
  { name: 'honeypot_with_same_creator', group: 'honeypot', description: 'The creator made honeypots before', read: { evm: bit('honeypot_with_same_creator') }, weight: 3 },
  { name: 'transfer_pausable', group: 'honeypot', description: 'Transfers can be paused', read: { evm: bit('transfer_pausable') }, weight: 4 },
  { name: 'trading_cooldown', group: 'honeypot', description: 'Trades are rate-limited per address', read: { evm: bit('trading_cooldown') }, weight: 2 },
  { name: 'non_transferable', group: 'honeypot', description: 'Solana: the token cannot be transferred', read: { solana: bit('non_transferable') }, weight: 10, critical: true },

  // authority: what can the owner / authorities still do?
  { name: 'mintable', group: 'authority', description: 'New supply can be minted', read: { evm: bit('is_mintable'), solana: status('mintable') }, weight: 4 },
  { name: 'owner_can_change_balance', group: 'authority', description: 'An authority can change holder balances', read: { evm: bit('owner_change_balance'), solana: status('balance_mutable_authority') }, weight: 6 },
  { name: 'hidden_owner', group: 'authority', description: 'The contract keeps an owner that is hidden', read: { evm: bit('hidden_owner') }, weight: 4 },
  { name: 'can_take_back_ownership', group: 'authority', description: 'Renounced ownership can be reclaimed', read: { evm: bit('can_take_back_ownership') }, weight: 4 },
  { name: 'selfdestruct', group: 'authority', description: 'The contract can self-destruct', read: { evm: bit('selfdestruct') }, weight: 4 },
  { name: 'closed_source', group: 'authority', description: 'The contract source is not verified', read: { evm: inverted(bit('is_open_source')) }, weight: 4 },
  { name: 'proxy', group: 'authority', description: 'The contract is an upgradeable proxy', read: { evm: bit('is_proxy') }, weight: 2 },
  { name: 'external_call', group: 'authority', description: 'The contract calls other contracts on transfer', read: { evm: bit('external_call') }, weight: 1 },
  { name: 'blacklist', group: 'authority', description: 'Addresses can be blacklisted', read: { evm: bit('is_blacklisted') }, weight: 2 },
  { name: 'whitelist', group: 'authority', description: 'Only whitelisted addresses can trade at times', read: { evm: bit('is_whitelisted') }, weight: 1 },
  { name: 'anti_whale_modifiable', group: 'authority', description: 'The max-transaction limit can be changed', read: { evm: bit('anti_whale_modifiable') }, weight: 1 },
  { name: 'freezable', group: 'authority', description: 'Solana: token accounts can be frozen', read: { solana: status('freezable') }, weight: 4 },
  { name: 'closable', group: 'authority', description: 'Solana: the mint can be closed', read: { solana: status('closable') }, weight: 3 },
  { name: 'metadata_mutable', group: 'authority', description: 'Solana: name/symbol metadata can be changed', read: { solana: status('metadata_mutable') }, weight: 1 },
  { name: 'default_account_state_upgradable', group: 'authority', description: 'Solana: new accounts can be made frozen by default', read: { solana: status('default_account_state_upgradable') }, weight: 1 },
  { name: 'transfer_hook', group: 'authority', description: 'Solana: transfers run a hook program', read: { solana: nonEmptyList('transfer_hook') }, weight: 3 },
  { name: 'transfer_hook_upgradable', group: 'authority', description: 'Solana: a transfer hook can be added or changed', read: { solana: status('transfer_hook_upgradable') }, weight: 2 },

  // holder_concentration
  { name: 'holder_count', group: 'holder_concentration', description: 'Number of holders', read: { evm: num('holder_count'), solana: num('holder_count') }, weight: 0 },
  { name: 'top10_holders_share', group: 'holder_concentration', description: 'Share of supply held by the 10 largest holders, pools and burn addresses left out (fraction)', read: { evm: top10HolderShare, solana: top10HolderShare }, weight: 5, risk: ramp(0.2, 0.8) },
  { name: 'creator_share', group: 'holder_concentration', description: 'Share of supply held by the creator (fraction)', read: { evm: num('creator_percent') }, weight: 2, risk: ramp(0.05, 0.3) },
  { name: 'owner_share', group: 'holder_concentration', description: 'Share of supply held by the owner (fraction)', read: { evm: num('owner_percent') }, weight: 2, risk: ramp(0.05, 0.3) },

  // lp_concentration
  { name: 'in_dex', group: 'lp_concentration', description: 'Traded in at least one DEX pool', read: { evm: bit('is_in_dex'), solana: inDexSolana }, weight: 0 },
  { name: 'lp_holder_count', group: 'lp_concentration', description: 'Number of LP token holders', read: { evm: num('lp_holder_count') }, weight: 0 },
  { name: 'lp_unlocked_share', group: 'lp_concentration', description: 'Share of LP tokens neither locked nor burned (fraction); liquidity that can be pulled', read: { evm: unlockedLpShare, solana: unlockedLpShare }, weight: 4, risk: ramp(0, 1) },

  // tax (fractions: 0.1 = 10 %)
  { name: 'buy_tax', group: 'tax', description: 'Tax on buys (fraction)', read: { evm: num('buy_tax') }, weight: 3, risk: ramp(0, 0.25) },
  { name: 'sell_tax', group: 'tax', description: 'Tax on sells (fraction)', read: { evm: num('sell_tax') }, weight: 4, risk: ramp(0, 0.25) },
  { name: 'tax_modifiable', group: 'tax', description: 'The owner can change the tax', read: { evm: bit('slippage_modifiable') }, weight: 3 },
  { name: 'personal_tax_modifiable', group: 'tax', description: 'The owner can set a tax for single addresses', read: { evm: bit('personal_slippage_modifiable') }, weight: 2 },
  { name: 'transfer_fee', group: 'tax', description: 'Solana: Token-2022 transfer fee (fraction)', read: { solana: solanaTransferFee }, weight: 4, risk: ramp(0, 0.25) },
  { name: 'transfer_fee_upgradable', group: 'tax', description: 'Solana: the transfer fee can be changed', read: { solana: status('transfer_fee_upgradable') }, weight: 2 },

  // trust_list: only a listing counts (risk 0); not being listed says nothing either way.
  { name: 'trusted', group: 'trust_list', description: "On the provider's trust list", read: { evm: bit('trust_list'), solana: bit('trusted_token') }, weight: 10, risk: () => 0, scoredWhen: (v) => v === true },
];
