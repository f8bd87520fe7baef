// The canonical tokens of each chain that impostors copy (USDC, USDT, WBTC, and the chain's native wrapper):
// a token whose name or symbol equals one of theirs at another address is an impersonation. Addresses, by source:
//   USDC: Circle's list of native USDC contracts (developers.circle.com/stablecoins/usdc-contract-addresses);
//   USDT: Tether's supported protocols (tether.to/en/supported-protocols), the same addresses as the verified
//         list of ethskills (skills.sh/austintgriffith/ethskills/addresses, checked on chain by eth_getCode + symbol());
//   WBTC: wbtc.network (Ethereum; the address every major integration pins);
//   the native wrapper: the chain's WRAPPED_NATIVE_<CHAIN> setting (evm-networks.ts cites each default).
// A chain where an issuer has no native deployment we could cite has no entry for that token.
import type { EvmNetworkName } from './evm-networks.ts';

export interface CanonicalToken {
  /** What it is known as (its symbol). */
  of: string;
  address: string;
  /** Symbols and names that are this token's, compared trimmed and case-insensitively. */
  symbols: readonly string[];
  names: readonly string[];
}

const usdc = (address: string): CanonicalToken => ({ of: 'USDC', address, symbols: ['USDC'], names: ['USD Coin'] });
const usdt = (address: string): CanonicalToken => ({ of: 'USDT', address, symbols: ['USDT'], names: ['Tether USD'] });
const wbtc = (address: string): CanonicalToken => ({ of: 'WBTC', address, symbols: ['WBTC'], names: ['Wrapped BTC'] });

export const CANONICAL_TOKENS: Record<EvmNetworkName, readonly CanonicalToken[]> = {
  ethereum: [usdc('0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'), usdt('0xdAC17F958D2ee523a2206206994597C13D831ec7'), wbtc('0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599')],
  base: [usdc('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'), usdt('0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2')],
  arbitrum: [usdc('0xaf88d065e77c8cC2239327C5EDb3A432268e5831'), usdt('0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9')],
  optimism: [usdc('0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85'), usdt('0x94b008aA00579c1307B0EF2c499aD98a8ce58e58')],
  polygon: [usdc('0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359')],
  avalanche: [usdc('0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E')],
  zksync: [usdc('0x1d17CBcF0D6D143135aE902365D2E5e2A16538D4')],
  bsc: [],
  fantom: [],
  linea: [],
  scroll: [],
};

/** The chain's native wrapper as a canonical token: W + the native symbol (Polygon's also under its old name WMATIC). */
export function wrapperToken(chain: { name: string; symbol: string }, address: string): CanonicalToken {
  const symbols = chain.name === 'polygon' ? [`W${chain.symbol}`, 'WMATIC'] : [`W${chain.symbol}`];
  return { of: `W${chain.symbol}`, address, symbols, names: [] };
}

export interface Impersonation {
  of: string;
  canonical_address: string;
}

const same = (a: string | null, b: string) => a !== null && a.trim().toLowerCase() === b.toLowerCase();

/** The canonical token whose name or symbol this token carries at another address, or null. */
export function impersonationOf(token: string, name: string | null, symbol: string | null, canon: readonly CanonicalToken[]): Impersonation | null {
  const at = token.toLowerCase();
  for (const c of canon) {
    if (c.address.toLowerCase() === at) return null; // the canonical token itself
    if (c.symbols.some((s) => same(symbol, s)) || c.names.some((n) => same(name, n))) return { of: c.of, canonical_address: c.address.toLowerCase() };
  }
  return null;
}
