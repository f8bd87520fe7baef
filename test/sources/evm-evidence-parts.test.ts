// The hand-written ABI parts of the token evidence against viem: every selector of evm-abi.ts and of the published
// power table (evm-capabilities.ts) is viem's toFunctionSelector of its signature; the PUSH4 scan finds a selector
// pushed by the dispatcher and not one inside another push's immediate; the impersonation rule.
import { toFunctionSelector } from 'viem';
import { describe, expect, it } from 'vitest';
import { SELECTORS, stringAt } from '../../src/sources/evm-abi.ts';
import { capabilitiesOf, POWER_SIGNATURES, pushedSelectors, selectorOf } from '../../src/sources/evm-capabilities.ts';
import { impersonationOf, CANONICAL_TOKENS } from '../../src/sources/evm-canonical-tokens.ts';

const SIGNATURES: Record<keyof typeof SELECTORS, string> = {
  factory: 'factory()',
  getPair: 'getPair(address,address)',
  getReserves: 'getReserves()',
  totalSupply: 'totalSupply()',
  balanceOf: 'balanceOf(address)',
  decimals: 'decimals()',
  name: 'name()',
  symbol: 'symbol()',
  getThreshold: 'getThreshold()',
  getOwners: 'getOwners()',
  getMinDelay: 'getMinDelay()',
};

describe('selectors', () => {
  it("evm-abi.ts's selectors are viem's", () => {
    for (const [k, sig] of Object.entries(SIGNATURES)) expect(SELECTORS[k as keyof typeof SELECTORS], sig).toBe(toFunctionSelector(sig));
  });
  it("the power table's selectors are viem's", () => {
    for (const p of POWER_SIGNATURES) expect(selectorOf(p.signature), p.signature).toBe(toFunctionSelector(p.signature));
  });
});

describe('the PUSH4 scan', () => {
  it('finds a dispatched selector, and not one hidden in a PUSH32 immediate', () => {
    const mint = toFunctionSelector('mint(address,uint256)').slice(2);
    const pause = toFunctionSelector('pause()').slice(2);
    // PUSH4 <mint> EQ ... PUSH32 <pause padded> : only mint is a pushed selector.
    const code = `0x63${mint}14` + `7f${pause}${'00'.repeat(28)}`;
    expect(pushedSelectors(code).has(`0x${mint}`)).toBe(true);
    expect(capabilitiesOf(code)).toEqual([{ power: 'mint', selector: `0x${mint}` }]);
  });
});

describe('impersonation and names', () => {
  const usdc = CANONICAL_TOKENS.ethereum[0]!;
  it('name or symbol, trimmed and case-insensitive, at another address; never the canonical token itself', () => {
    expect(impersonationOf('0x00000000000000000000000000000000000000aa', ' usd coin ', 'XYZ', CANONICAL_TOKENS.ethereum)).toEqual({ of: 'USDC', canonical_address: usdc.address.toLowerCase() });
    expect(impersonationOf(usdc.address.toLowerCase(), 'USD Coin', 'USDC', CANONICAL_TOKENS.ethereum)).toBeNull();
    expect(impersonationOf('0x00000000000000000000000000000000000000aa', 'USDC Rewards', 'USDCR', CANONICAL_TOKENS.ethereum)).toBeNull();
  });
  it('reads string and bytes32 name() answers', () => {
    const text = Buffer.from('Maker').toString('hex');
    expect(stringAt(`0x${'20'.padStart(64, '0')}${'5'.padStart(64, '0')}${text.padEnd(64, '0')}`)).toBe('Maker');
    expect(stringAt(`0x${text.padEnd(64, '0')}`)).toBe('Maker');
  });
});
