// Our five chain definitions (src/sources/evm-chains.ts, defined here so start-up does not load every
// chain viem knows) carry viem's own values for what our clients use.
import { arbitrum, base, mainnet, optimism, polygon } from 'viem/chains';
import { describe, expect, it } from 'vitest';
import { EVM_CHAINS } from '../src/sources/evm-rpc.ts';

const VIEM = { ethereum: mainnet, base, arbitrum, optimism, polygon } as const;

describe('EVM chain definitions', () => {
  it.each(EVM_CHAINS.map((c) => [c.name, c] as const))('%s matches viem: id, name, currency, Multicall3, ENS resolver', (name, chain) => {
    const viem = VIEM[name];
    expect(chain.viem.id).toBe(viem.id);
    expect(chain.id).toBe(viem.id);
    expect(chain.viem.name).toBe(viem.name);
    expect(chain.viem.nativeCurrency).toEqual(viem.nativeCurrency);
    expect(chain.symbol).toBe(viem.nativeCurrency.symbol);
    expect(chain.viem.contracts?.multicall3).toEqual(viem.contracts?.multicall3);
    expect(chain.viem.contracts?.ensUniversalResolver).toEqual((viem.contracts as { ensUniversalResolver?: unknown }).ensUniversalResolver);
  });
});
