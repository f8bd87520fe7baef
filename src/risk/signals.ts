// The risk signals: how each is read from the GoPlus object, how risky each value is, and how
// much it weighs. This table is the scoring model; docs/using/token-risk.md, "Scoring model", explains it.
import type { ChainFamily } from './chains.ts';
import { roundTo } from '../analytics/numbers.ts';

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

/** The first of `keys` that the provider sent, read as a bit (GoPlus spells some fields two ways). */
const firstBit =
  (...keys: string[]): Reader =>
  (raw) => {
    const key = keys.find((k) => raw[k] !== undefined);
    return key === undefined ? null : bit(key)(raw);
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

/** A whole number ≥ 0 (a count), else null. */
function count(v: unknown): number | null {
  const n = decimal(v);
  return n !== null && Number.isInteger(n) && n >= 0 ? n : null;
}

const isObject = (v: unknown): v is Raw => v !== null && typeof v === 'object' && !Array.isArray(v);

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

/**
 * Holder rows of either family (`address` on EVM, `account` on Solana). null when absent or empty: an
 * empty list is missing data (GoPlus had no holder list), not a spread with nobody holding anything.
 */
function holders(raw: Raw, key: string): Holder[] | null {
  const list = raw[key];
  if (!Array.isArray(list) || list.length === 0) return null;
  const out: Holder[] = [];
  for (const row of list) {
    if (row === null || typeof row !== 'object') continue;
    const r = row as Raw;
    const address = String(r.address ?? r.account ?? '').toLowerCase();
    const percent = decimal(r.percent);
    if (percent === null || percent < 0) continue;
    out.push({ address, percent, locked: r.is_locked === 1 || r.is_locked === '1' });
  }
  return out.length > 0 ? out : null;
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

/** EVM `is_in_dex`; Solana: listed pools in `dex`. */
const inDexEvm = bit('is_in_dex');
const inDexSolana: Reader = (raw) => (Array.isArray(raw.dex) ? raw.dex.length > 0 : null);

/**
 * Share of LP tokens that is neither locked nor burned, i.e. can be pulled. null when the token is not
 * traded on a DEX (GoPlus then omits LP holders; there is no pool liquidity to pull) or no list was given.
 */
const unlockedLpShare =
  (inDex: Reader): Reader =>
  (raw) => {
    if (inDex(raw) === false) return null;
    const list = holders(raw, 'lp_holders');
    if (list === null) return null;
    const share = list.filter((h) => !h.locked && !BURN_ADDRESSES.has(h.address)).reduce((sum, h) => sum + h.percent, 0);
    return Math.min(1, round6(share));
  };

/** `honeypot_with_same_creator`: "0"/"1" in GoPlus's docs, a count ("3") in some answers: any count above 0 is set. */
const sameCreatorHoneypots: Reader = (raw) => {
  const n = count(raw.honeypot_with_same_creator);
  return n === null ? null : n > 0;
};

/**
 * Solana `default_account_state`: "2" (Frozen) means every new token account, a buyer's included, starts
 * frozen and cannot move the token until the freeze authority thaws it; "1" (Initialized) is the normal
 * state. "0" (Uninitialized) or anything else says nothing about freezing: no data.
 */
const defaultAccountFrozen: Reader = (raw) => {
  const v = raw.default_account_state;
  return v === '2' || v === 2 ? true : v === '1' || v === 1 ? false : null;
};

/**
 * A Token-2022 fee rate as GoPlus sends it: a ratio ("0.02" = 2 %, per its SDK models). A value above 1
 * cannot be a ratio and is read as basis points, Token-2022's own unit (at most 10 000 = 100 %); a value
 * above that, negative, or not a number is no data.
 */
function feeRatio(v: unknown): number | null {
  const n = decimal(v);
  if (n === null || n < 0 || n > 10_000) return null;
  return n <= 1 ? n : round6(n / 10_000);
}

interface TransferFee {
  current: number | null;
  /** The highest scheduled rate (it takes effect at `epoch`). */
  scheduled: number | null;
  epoch: number | null;
}

/**
 * Solana Token-2022 `transfer_fee`: `{ current_fee_rate: { fee_rate, maximum_fee }, scheduled_fee_rate:
 * [{ epoch, fee_rate, maximum_fee }] }`; `{}` = the mint has no transfer fee. null when not sent.
 */
function transferFee(raw: Raw): TransferFee | null {
  const fee = raw.transfer_fee;
  if (!isObject(fee)) return null;
  if (Object.keys(fee).length === 0) return { current: 0, scheduled: null, epoch: null };
  const current = isObject(fee.current_fee_rate) ? feeRatio(fee.current_fee_rate.fee_rate) : null;
  const scheduled = (Array.isArray(fee.scheduled_fee_rate) ? fee.scheduled_fee_rate : [])
    .filter(isObject)
    .map((r) => ({ rate: feeRatio(r.fee_rate), epoch: count(r.epoch) }))
    .filter((r): r is { rate: number; epoch: number | null } => r.rate !== null)
    .sort((a, b) => b.rate - a.rate || (b.epoch ?? 0) - (a.epoch ?? 0))[0];
  return { current, scheduled: scheduled?.rate ?? null, epoch: scheduled?.epoch ?? null };
}

/** The fee a buyer will pay: the larger of the current and the scheduled rate (a scheduled rise is coming). */
const solanaTransferFee: Reader = (raw) => {
  const fee = transferFee(raw);
  const given = fee ? [fee.current, fee.scheduled].filter((v): v is number => v !== null) : [];
  return given.length ? Math.max(...given) : null;
};

const transferFeeDetails = (raw: Raw): Record<string, FlagValue> => {
  const fee = transferFee(raw);
  return { transfer_fee_current: fee?.current ?? null, transfer_fee_scheduled: fee?.scheduled ?? null, transfer_fee_scheduled_epoch: fee?.epoch ?? null };
};

export interface MaliciousAddress {
  address: string;
  /** The GoPlus field it was listed under: a power (`mintable`, `freezable`, …), `transfer_hook` or `creators`. */
  role: string;
  /** Whether that power is live (status "1"; a transfer hook while set); a creator holds no power. */
  live: boolean;
}

/** The Solana powers GoPlus reports as `{ status, <list>: [{ address, malicious_address }] }`. */
const POWERS: readonly [field: string, list: string][] = [
  ['mintable', 'authority'],
  ['freezable', 'authority'],
  ['balance_mutable_authority', 'authority'],
  ['closable', 'authority'],
  ['metadata_mutable', 'metadata_upgrade_authority'],
  ['default_account_state_upgradable', 'authority'],
  ['transfer_fee_upgradable', 'authority'],
  ['transfer_hook_upgradable', 'authority'],
];

const flaggedMalicious = (a: unknown): a is Raw => isObject(a) && (a.malicious_address === 1 || a.malicious_address === '1');
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * Every address GoPlus marks `malicious_address: 1` in a Solana answer, with the power it holds; null when
 * the answer has none of the fields that carry such marks (EVM answers never do).
 */
export function maliciousAddresses(raw: Raw): MaliciousAddress[] | null {
  let given = false;
  const out: MaliciousAddress[] = [];
  const add = (entries: unknown[], role: string, live: boolean) => {
    for (const a of entries) if (flaggedMalicious(a)) out.push({ address: String(a.address ?? ''), role, live });
  };
  for (const [field, list] of POWERS) {
    const power = raw[field];
    if (!isObject(power)) continue;
    given = true;
    add(listOf(power[list]), field, bit('status')(power) === true);
  }
  if (Array.isArray(raw.transfer_hook)) {
    given = true;
    add(raw.transfer_hook, 'transfer_hook', true);
  }
  if (Array.isArray(raw.creators)) {
    given = true;
    add(raw.creators, 'creators', false);
  }
  return given ? out : null;
}

/** Whether a known-malicious address holds a live power; null when no power or hook was reported. */
const maliciousAuthority: Reader = (raw) => {
  const powersGiven = POWERS.some(([field]) => isObject(raw[field])) || Array.isArray(raw.transfer_hook);
  return powersGiven ? (maliciousAddresses(raw) ?? []).some((a) => a.live) : null;
};

// GoPlus's notes on simulated taxes (token security API): "When cannot_buy is 1, our sandbox might be
// blocked, causing buy_tax 1 and sell_tax 1"; "When trading_cooldown is 1, sell_tax may return 1".
const CANNOT_BUY_SIDE_EFFECT =
  'cannot_buy is "1" (scored): GoPlus notes that a tax of 1 is then a side effect of the failed simulated buy, not a measured tax';
const COOLDOWN_SIDE_EFFECT =
  'trading_cooldown is "1" (scored): GoPlus notes that the cooldown can make the simulated sell fail, which shows as a sell tax of 1';

const buyTaxExplained = (v: number | boolean, raw: Raw) => (v === 1 && bit('cannot_buy')(raw) === true ? CANNOT_BUY_SIDE_EFFECT : undefined);
const sellTaxExplained = (v: number | boolean, raw: Raw) => {
  if (v !== 1) return undefined;
  if (bit('cannot_buy')(raw) === true) return CANNOT_BUY_SIDE_EFFECT;
  if (bit('trading_cooldown')(raw) === true) return COOLDOWN_SIDE_EFFECT;
  return undefined;
};

const round6 = (n: number) => roundTo(n, 6);
const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
/** Linear ramp: 0 at `from`, 1 at `to`. */
const ramp = (from: number, to: number) => (v: number | boolean) => clamp01(((v as number) - from) / (to - from));

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
