// How GoPlus's fields are read: its strings → booleans and numbers (anything else counts as not given),
// and the details shown beside some signals. The table that uses them, and weighs each, is signals.ts.
import { roundTo } from '../analytics/numbers.ts';

export type FlagValue = boolean | number | null;
export type Raw = Record<string, unknown>;
export type Reader = (raw: Raw) => FlagValue;

/** "1"/"0" (or 1/0) → true/false. */
export const bit =
  (key: string): Reader =>
  (raw) => {
    const v = raw[key];
    if (v === '1' || v === 1 || v === true) return true;
    if (v === '0' || v === 0 || v === false) return false;
    return null;
  };

/** The first of `keys` that the provider sent, read as a bit (GoPlus spells some fields two ways). */
export const firstBit =
  (...keys: string[]): Reader =>
  (raw) => {
    const key = keys.find((k) => raw[k] !== undefined);
    return key === undefined ? null : bit(key)(raw);
  };

export const inverted =
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

export const num =
  (key: string): Reader =>
  (raw) =>
    decimal(raw[key]);

/** A whole number ≥ 0 (a count), else null. */
export function count(v: unknown): number | null {
  const n = decimal(v);
  return n !== null && Number.isInteger(n) && n >= 0 ? n : null;
}

export const isObject = (v: unknown): v is Raw => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Solana authority objects: `{ status: "0" | "1", authority: [...] }`. */
export const status =
  (key: string): Reader =>
  (raw) => {
    const v = raw[key];
    return v !== null && typeof v === 'object' ? bit('status')(v as Raw) : null;
  };

/** Solana `transfer_hook`: a list of hook programs; non-empty means transfers run foreign code. */
export const nonEmptyList =
  (key: string): Reader =>
  (raw) => {
    const v = raw[key];
    return Array.isArray(v) ? v.length > 0 : null;
  };

export const BURN_ADDRESSES = new Set([
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
export const top10HolderShare: Reader = (raw) => {
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
export const inDexEvm = bit('is_in_dex');
export const inDexSolana: Reader = (raw) => (Array.isArray(raw.dex) ? raw.dex.length > 0 : null);

/**
 * Share of LP tokens that is neither locked nor burned, i.e. can be pulled. null when the token is not
 * traded on a DEX (GoPlus then omits LP holders; there is no pool liquidity to pull) or no list was given.
 */
export const unlockedLpShare =
  (inDex: Reader): Reader =>
  (raw) => {
    if (inDex(raw) === false) return null;
    const list = holders(raw, 'lp_holders');
    if (list === null) return null;
    const share = list.filter((h) => !h.locked && !BURN_ADDRESSES.has(h.address)).reduce((sum, h) => sum + h.percent, 0);
    return Math.min(1, round6(share));
  };

/** `honeypot_with_same_creator`: "0"/"1" in GoPlus's docs, a count ("3") in some answers: any count above 0 is set. */
export const sameCreatorHoneypots: Reader = (raw) => {
  const n = count(raw.honeypot_with_same_creator);
  return n === null ? null : n > 0;
};

/**
 * Solana `default_account_state`: "2" (Frozen) means every new token account, a buyer's included, starts
 * frozen and cannot move the token until the freeze authority thaws it; "1" (Initialized) is the normal
 * state. "0" (Uninitialized) or anything else says nothing about freezing: no data.
 */
export const defaultAccountFrozen: Reader = (raw) => {
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
export const solanaTransferFee: Reader = (raw) => {
  const fee = transferFee(raw);
  const given = fee ? [fee.current, fee.scheduled].filter((v): v is number => v !== null) : [];
  return given.length ? Math.max(...given) : null;
};

export const transferFeeDetails = (raw: Raw): Record<string, FlagValue> => {
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
export const maliciousAuthority: Reader = (raw) => {
  const powersGiven = POWERS.some(([field]) => isObject(raw[field])) || Array.isArray(raw.transfer_hook);
  return powersGiven ? (maliciousAddresses(raw) ?? []).some((a) => a.live) : null;
};

// GoPlus's notes on simulated taxes (token security API): "When cannot_buy is 1, our sandbox might be
// blocked, causing buy_tax 1 and sell_tax 1"; "When trading_cooldown is 1, sell_tax may return 1".
const CANNOT_BUY_SIDE_EFFECT =
  'cannot_buy is "1" (scored): GoPlus notes that a tax of 1 is then a side effect of the failed simulated buy, not a measured tax';
const COOLDOWN_SIDE_EFFECT =
  'trading_cooldown is "1" (scored): GoPlus notes that the cooldown can make the simulated sell fail, which shows as a sell tax of 1';

export const buyTaxExplained = (v: number | boolean, raw: Raw) => (v === 1 && bit('cannot_buy')(raw) === true ? CANNOT_BUY_SIDE_EFFECT : undefined);
export const sellTaxExplained = (v: number | boolean, raw: Raw) => {
  if (v !== 1) return undefined;
  if (bit('cannot_buy')(raw) === true) return CANNOT_BUY_SIDE_EFFECT;
  if (bit('trading_cooldown')(raw) === true) return COOLDOWN_SIDE_EFFECT;
  return undefined;
};

const round6 = (n: number) => roundTo(n, 6);
const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
/** Linear ramp: 0 at `from`, 1 at `to`. */
export const ramp = (from: number, to: number) => (v: number | boolean) => clamp01(((v as number) - from) / (to - from));

