// Our eleven chain definitions (src/sources/evm-chains.ts, defined here so start-up does not load every
// chain viem knows) carry viem's own values for what our clients use.
import { arbitrum, avalanche, base, bsc, fantom, linea, mainnet, optimism, polygon, scroll, zksync } from 'viem/chains';
import { describe, expect, it } from 'vitest';
import { ALL_EVM_CHAINS } from '../../src/sources/evm-networks.ts';
import { EVM_CHAINS } from '../../src/sources/evm-rpc.ts';

const VIEM = { ethereum: mainnet, base, arbitrum, optimism, polygon, bsc, avalanche, fantom, zksync, linea, scroll } as const;

describe('EVM chain definitions', () => {
  it.each(ALL_EVM_CHAINS.map((c) => [c.name, c] as const))('%s matches viem: id, name, currency, Multicall3, ENS resolver', (name, chain) => {
    const viem = VIEM[name];
    expect(chain.viem.id).toBe(viem.id);
    expect(chain.id).toBe(viem.id);
    expect(chain.viem.name).toBe(viem.name);
    expect(chain.viem.nativeCurrency).toEqual(viem.nativeCurrency);
    expect(chain.symbol).toBe(viem.nativeCurrency.symbol);
    expect(chain.viem.contracts?.multicall3).toEqual(viem.contracts?.multicall3);
    // ENS is resolved on Ethereum only (viem also knows Linea's resolver, which nothing here uses).
    const ours = (chain.viem.contracts as { ensUniversalResolver?: unknown }).ensUniversalResolver;
    if (name === 'ethereum') expect(ours).toEqual((viem.contracts as { ensUniversalResolver?: unknown }).ensUniversalResolver);
    else expect(ours).toBeUndefined();
  });

  it('the on-chain routes serve the same five chains as before, in the same order', () => {
    expect(EVM_CHAINS.map((c) => [c.name, c.id, c.defaultRpc])).toEqual([
      ['ethereum', 1, 'https://ethereum-rpc.publicnode.com'],
      ['base', 8453, 'https://mainnet.base.org'],
      ['arbitrum', 42161, 'https://arb1.arbitrum.io/rpc'],
      ['optimism', 10, 'https://mainnet.optimism.io'],
      ['polygon', 137, 'https://polygon-rpc.com'],
    ]);
  });
});
