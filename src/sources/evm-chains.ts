// The five chains the on-chain routes serve, each defined here as viem's `Chain`, with just what our viem
// clients use: id, name, native currency and the contracts viem reads through (Multicall3 on every chain,
// ENS's Universal Resolver on Ethereum). Importing them from `viem/chains` would load the definitions of
// every chain viem knows (hundreds of modules), and even viem's `defineChain` would load viem itself at
// start-up (~360 modules): plain objects of its type, which is all `defineChain` makes of them (plus
// an `extend` no client uses). The values are viem's own (test/evm-chains.test.ts compares them). The
// OP-stack formatters of Base and OP Mainnet are not needed: the clients make contract reads, balance,
// nonce and ENS calls only, and blocks and transactions are read over plain JSON-RPC by our own parsers
// (evm-wire.ts).
import type { Chain } from 'viem';

const defineChain = <const C extends Chain>(chain: C): C => chain;

const MULTICALL3 = '0xca11bde05977b3631167028862be2a173976ca11';
const ether = { name: 'Ether', symbol: 'ETH', decimals: 18 } as const;

export const ethereumChain = defineChain({
  id: 1,
  name: 'Ethereum',
  nativeCurrency: ether,
  rpcUrls: { default: { http: ['https://ethereum-rpc.publicnode.com'] } },
  contracts: {
    ensUniversalResolver: { address: '0xeeeeeeee14d718c2b47d9923deab1335e144eeee', blockCreated: 23_085_558 },
    multicall3: { address: MULTICALL3, blockCreated: 14_353_601 },
  },
});

export const baseChain = defineChain({
  id: 8453,
  name: 'Base',
  nativeCurrency: ether,
  rpcUrls: { default: { http: ['https://mainnet.base.org'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 5022 } },
});

export const arbitrumChain = defineChain({
  id: 42_161,
  name: 'Arbitrum One',
  nativeCurrency: ether,
  rpcUrls: { default: { http: ['https://arb1.arbitrum.io/rpc'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 7_654_707 } },
});

export const optimismChain = defineChain({
  id: 10,
  name: 'OP Mainnet',
  nativeCurrency: ether,
  rpcUrls: { default: { http: ['https://mainnet.optimism.io'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 4_286_263 } },
});

export const polygonChain = defineChain({
  id: 137,
  name: 'Polygon',
  nativeCurrency: { name: 'POL', symbol: 'POL', decimals: 18 },
  rpcUrls: { default: { http: ['https://polygon-rpc.com'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 25_770_160 } },
});
