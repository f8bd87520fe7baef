// The token's pool with the wrapped native coin on the chain's V2-style DEX: its reserves, their worth in USD
// (the wrapped native coin priced by its pair with a configured stablecoin on the same DEX), the price impact of
// selling $1,000 worth, and who holds the pool's LP tokens (burned, in a known locker, the owner's). Three
// rounds of reads: the router's factory (with the stablecoin's decimals), the two pairs, then their reserves and
// the LP balances. Every value that could not be read is null; the whole is null with its reason when there is
// no pool to read.
import { addressAt, callData, SELECTORS, uintAt, type RpcCall } from './evm-abi.ts';
import { BURN_ADDRESSES } from './evm-lp-lockers.ts';

export interface LiquidityEvidence {
  pair: string;
  /** The pair's wrapped native reserve, in coins (18 decimals on every chain covered). */
  reserve_native: number | null;
  /** That reserve's worth in USD (the pool's total is about twice it); null without a stable pair. */
  reserve_usd: number | null;
  /** Price impact of selling $1,000 worth of the token into the pair, percent (the DEX fee left out). */
  impact_1k_pct: number | null;
  /** Shares of the LP supply held by the zero and dead addresses, by known lockers, and by the owner. */
  lp_burned_pct: number | null;
  lp_locked_pct: number | null;
  lp_owner_pct: number | null;
}

export interface LiquiditySettings {
  router: string | undefined;
  wrappedNative: string;
  /** The stablecoin whose pair with the wrapped native coin prices it in USD (1 unit = $1). */
  stable: string | undefined;
  lockers: readonly string[];
}

export type LiquidityPart = { liquidity: LiquidityEvidence | null; liquidity_unavailable: string | null };

/** The owner as the liquidity read needs it: its address (null when unknown) and whether it is renounced. */
export interface OwnerForLiquidity {
  address: string | null;
  renounced: boolean;
}

const ZERO = /^0x0{40}$/;
const NATIVE_DECIMALS = 18;
const round = (v: number, places: number) => Math.round(v * 10 ** places) / 10 ** places;
const coins = (raw: bigint, decimals: number) => Number(raw) / 10 ** decimals;
const pct = (part: bigint | null, total: bigint | null) => (part === null || total === null || total === 0n ? null : round(Number((part * 1_000_000n) / total) / 10_000, 2));
const sum = (values: (bigint | null)[]) => (values.some((v) => v === null) ? null : values.reduce<bigint>((a, v) => a + v!, 0n));

/** The reserve of `side` in a V2 pair of `a` and `b` (token0 is the lower address: UniswapV2Factory sorts them). */
function reserveOf(reserves: string | null, side: string, other: string): bigint | null {
  const r0 = uintAt(reserves, 0);
  const r1 = uintAt(reserves, 1);
  if (r0 === null || r1 === null) return null;
  return side.toLowerCase() < other.toLowerCase() ? r0 : r1;
}

export async function readLiquidity(rpc: RpcCall, token: string, dex: LiquiditySettings, owner: Promise<OwnerForLiquidity>): Promise<LiquidityPart> {
  const unavailable = (reason: string): LiquidityPart => ({ liquidity: null, liquidity_unavailable: reason });
  if (dex.router === undefined) return unavailable('no V2-style DEX router is configured for this chain (see DEX_ROUTER_<CHAIN>)');
  const wrapped = dex.wrappedNative.toLowerCase();
  const stable = dex.stable?.toLowerCase();
  // Round 1: the factory, and the stablecoin's decimals.
  const [factoryData, stableDecimals] = await Promise.all([
    callData(rpc, dex.router, SELECTORS.factory),
    stable === undefined ? null : callData(rpc, stable, SELECTORS.decimals).then((d) => uintAt(d)),
  ]);
  const factory = addressAt(factoryData);
  if (factory === null) return unavailable(`the router ${dex.router.toLowerCase()} did not answer factory()`);
  // Round 2: the pairs (and the owner, read meanwhile by the caller).
  const [pairData, stablePairData, who] = await Promise.all([
    callData(rpc, factory, SELECTORS.getPair, token, wrapped),
    stable === undefined ? null : callData(rpc, factory, SELECTORS.getPair, wrapped, stable),
    owner,
  ]);
  const pair = addressAt(pairData);
  if (pair === null || ZERO.test(pair)) return unavailable(`the token has no pair with the wrapped native coin (${wrapped}) on the router's factory ${factory}`);
  const stablePair = addressAt(stablePairData);
  const ownerHolds = who.address !== null && !who.renounced;
  // Round 3: reserves, the LP supply and the balances of its holders we know of.
  const balance = (holder: string) => callData(rpc, pair, SELECTORS.balanceOf, holder).then((d) => uintAt(d));
  const [reserves, stableReserves, supply, burned, locked, ownerLp] = await Promise.all([
    callData(rpc, pair, SELECTORS.getReserves),
    stablePair === null || ZERO.test(stablePair) ? null : callData(rpc, stablePair, SELECTORS.getReserves),
    callData(rpc, pair, SELECTORS.totalSupply).then((d) => uintAt(d)),
    Promise.all(BURN_ADDRESSES.map(balance)),
    Promise.all(dex.lockers.map(balance)),
    ownerHolds ? balance(who.address!) : null,
  ]);

  const nativeRaw = reserveOf(reserves, wrapped, token);
  const reserveNative = nativeRaw === null ? null : coins(nativeRaw, NATIVE_DECIMALS);
  const usdPerNative = nativePrice(stableReserves, wrapped, stable, stableDecimals);
  const reserveUsd = reserveNative === null || usdPerNative === null ? null : reserveNative * usdPerNative;
  return {
    liquidity: {
      pair,
      reserve_native: reserveNative === null ? null : round(reserveNative, 6),
      reserve_usd: reserveUsd === null ? null : round(reserveUsd, 2),
      // Selling x tokens into reserves (T, N) receives N·x/(T+x) against the spot N·x/T: an impact of x/(T+x).
      // At the pair's own price the token side is worth what the native side is, so for x worth $1,000: 1000/(usd+1000).
      impact_1k_pct: reserveUsd === null ? null : round((100 * 1000) / (reserveUsd + 1000), 2),
      lp_burned_pct: pct(sum(burned), supply),
      lp_locked_pct: dex.lockers.length === 0 ? (supply === null || supply === 0n ? null : 0) : pct(sum(locked), supply),
      // A renounced owner holds nothing it can withdraw: 0 (LP at the zero or dead address is counted as burned).
      lp_owner_pct: who.address === null ? null : who.renounced ? (supply === null || supply === 0n ? null : 0) : pct(ownerLp, supply),
    },
    liquidity_unavailable: null,
  };
}

/** USD per wrapped native coin from the stable pair's reserves; null without a stable pair or with an empty one. */
function nativePrice(reserves: string | null, wrapped: string, stable: string | undefined, decimals: bigint | null): number | null {
  if (reserves === null || stable === undefined || decimals === null || decimals > 36n) return null;
  const nativeRaw = reserveOf(reserves, wrapped, stable);
  const stableRaw = reserveOf(reserves, stable, wrapped);
  if (nativeRaw === null || stableRaw === null || nativeRaw === 0n) return null;
  return coins(stableRaw, Number(decimals)) / coins(nativeRaw, NATIVE_DECIMALS);
}
