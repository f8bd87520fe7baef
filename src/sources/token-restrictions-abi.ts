// The trading-restriction calls of the token simulator (token-simulator.sol: simulateLater, limits,
// holderSells, cooldownFirst, sellAll), encoded and decoded by hand like simulate() (token-simulator.ts), so
// that reading a token does not load viem; test/sources/token-restrictions-abi.test.ts checks them against viem.
import { decodeSimulation, SIMULATION_MAX_IN, SIMULATOR, type SimulationResult } from './token-simulator.ts';

const SELECTORS = {
  simulateLater: '0x78aa4f6e',
  limits: '0x1124959e',
  holderSells: '0x86e8b396',
  cooldownFirst: '0x7837ed50',
  sellAll: '0x248e4759',
} as const;

type Arg = string | bigint | readonly string[];
const word = (v: string | bigint) => (typeof v === 'bigint' ? v.toString(16) : v.replace(/^0x/, '').toLowerCase()).padStart(64, '0');

/** ABI encoding of a call whose arguments are addresses, uints and address arrays. */
export function encodeCall(selector: string, args: readonly Arg[]): string {
  const heads: string[] = [];
  const tails: string[] = [];
  let tailBytes = args.length * 32;
  for (const a of args) {
    if (typeof a === 'string' || typeof a === 'bigint') {
      heads.push(word(a));
      continue;
    }
    heads.push(word(BigInt(tailBytes)));
    const tail = word(BigInt(a.length)) + a.map((x) => word(x)).join('');
    tails.push(tail);
    tailBytes += tail.length / 2;
  }
  return selector + heads.join('') + tails.join('');
}

/** A call from the simulator's caller to one of its addresses. */
export interface SimCall {
  from: string;
  to: string;
  data: string;
}

const call = (to: string, data: string): SimCall => ({ from: SIMULATOR.caller, to, data });

export interface Market {
  router: string;
  wrappedNative: string;
  token: string;
}

/** simulate() again, with the block it ran in (to see that a block override applied). */
export const simulateLaterCall = (m: Market) =>
  call(SIMULATOR.buyer, encodeCall(SELECTORS.simulateLater, [m.router, m.wrappedNative, m.token, SIMULATOR.holder, SIMULATION_MAX_IN]));

/** The cooldown check's first block (a buy, and the holder sells half) and second block (the holder sells the rest). */
export const cooldownCalls = (m: Market): [SimCall, SimCall] => [
  call(SIMULATOR.buyer, encodeCall(SELECTORS.cooldownFirst, [m.router, m.wrappedNative, m.token, SIMULATOR.holder, SIMULATION_MAX_IN])),
  call(SIMULATOR.holder, encodeCall(SELECTORS.sellAll, [m.router, m.wrappedNative, m.token])),
];

export const limitsCall = (m: Market, candidates: readonly string[]) =>
  call(SIMULATOR.buyer, encodeCall(SELECTORS.limits, [m.router, m.wrappedNative, m.token, SIMULATOR.holder, candidates]));

export const holderSellsCall = (m: Market, candidates: readonly string[], exclude: string, amount: bigint) =>
  call(SIMULATOR.buyer, encodeCall(SELECTORS.holderSells, [m.router, m.wrappedNative, m.token, candidates, exclude, amount]));

/** The buyer's balance override for the restriction calls: enough for buys up to half any pair's reserve. */
export const RESTRICTIONS_FUNDS = 2n ** 120n;

/** The state override of a restriction call: the simulator at the buyer, the holder and each `extra` address. */
export function restrictionOverrides(code: string, extra: readonly string[] = []): Record<string, { code: string; balance?: string }> {
  const out: Record<string, { code: string; balance?: string }> = {};
  for (const a of extra) out[a.toLowerCase()] = { code };
  out[SIMULATOR.holder] = { code };
  out[SIMULATOR.buyer] = { code, balance: `0x${RESTRICTIONS_FUNDS.toString(16)}` };
  return out;
}

const words = (hex: string): bigint[] | null => {
  const data = hex.replace(/^0x/, '');
  if (data.length % 64 !== 0) return null;
  return (data.match(/.{64}/g) ?? []).map((w) => BigInt(`0x${w}`));
};
const address = (v: bigint) => `0x${v.toString(16).padStart(40, '0')}`;

/** simulateLater()'s answer: the simulation and the block it ran in. */
export function decodeSimulateLater(hex: string): { result: SimulationResult; number: bigint; time: bigint } | null {
  const w = words(hex);
  const result = decodeSimulation(hex);
  if (w === null || w.length < 3 || result === null) return null;
  return { result, number: w[1]!, time: w[2]! };
}

export interface Limits {
  depth: bigint;
  maxBuy: bigint;
  maxSell: bigint;
  sellCeiling: bigint;
  sellUnfunded: boolean;
  maxWallet: bigint;
  walletLimited: boolean;
  supply: bigint;
}

export function decodeLimits(hex: string): Limits | null {
  const w = words(hex);
  if (w === null || w.length !== 8) return null;
  const [depth, maxBuy, maxSell, sellCeiling, sellUnfunded, maxWallet, walletLimited, supply] = w as [bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint];
  return { depth, maxBuy, maxSell, sellCeiling, sellUnfunded: sellUnfunded === 1n, maxWallet, walletLimited: walletLimited === 1n, supply };
}

/** holderSells()'s answer: the holders tried, in order, and whether each one's sell went through. */
export function decodeHolderSells(hex: string): { holder: string; ok: boolean }[] | null {
  const w = words(hex);
  if (w === null || w.length !== 6) return null;
  return [0, 1, 2].flatMap((i) => (w[i] === 0n ? [] : [{ holder: address(w[i]!), ok: w[i + 3] === 1n }]));
}

/** A bool answer (cooldownFirst, sellAll); null when it is not one. */
export function decodeBool(hex: string): boolean | null {
  const w = words(hex);
  return w === null || w.length !== 1 || w[0]! > 1n ? null : w[0] === 1n;
}
