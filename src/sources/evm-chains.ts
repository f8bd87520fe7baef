// The eleven EVM chains marketgate reads (the five the on-chain routes serve, and the six more the token
// risk check reads), each defined here as viem's `Chain`, with just what our viem clients use: id, name,
// native currency and the contracts viem reads through (Multicall3 on every chain, ENS's Universal
// Resolver on Ethereum). Importing them from `viem/chains` would load the definitions of
// every chain viem knows (hundreds of modules), and even viem's `defineChain` would load viem itself at
// start-up (~360 modules): plain objects of its type, which is all `defineChain` makes of them (plus
// an `extend` no client uses). The values are viem's own (test/sources/evm-chains.test.ts compares them). The
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

export const bscChain = defineChain({
  id: 56,
  name: 'BNB Smart Chain',
  nativeCurrency: { decimals: 18, name: 'BNB', symbol: 'BNB' },
  rpcUrls: { default: { http: ['https://bsc-dataseed.bnbchain.org'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 15_921_452 } },
});

export const avalancheChain = defineChain({
  id: 43_114,
  name: 'Avalanche',
  nativeCurrency: { decimals: 18, name: 'Avalanche', symbol: 'AVAX' },
  rpcUrls: { default: { http: ['https://api.avax.network/ext/bc/C/rpc'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 11_907_934 } },
});

export const fantomChain = defineChain({
  id: 250,
  name: 'Fantom',
  nativeCurrency: { decimals: 18, name: 'Fantom', symbol: 'FTM' },
  rpcUrls: { default: { http: ['https://rpcapi.fantom.network'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 33_001_987 } },
});

/** ZKsync Era runs EraVM: its Multicall3 lives at its own address. */
export const zksyncChain = defineChain({
  id: 324,
  name: 'ZKsync Era',
  nativeCurrency: ether,
  rpcUrls: { default: { http: ['https://mainnet.era.zksync.io'] } },
  contracts: { multicall3: { address: '0xF9cda624FBC7e059355ce98a31693d299FACd963', blockCreated: 3_908_235 } },
});

export const lineaChain = defineChain({
  id: 59_144,
  name: 'Linea Mainnet',
  nativeCurrency: { name: 'Linea Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['https://rpc.linea.build'] } },
  contracts: { multicall3: { address: '0xcA11bde05977b3631167028862bE2a173976CA11', blockCreated: 42 } },
});

export const scrollChain = defineChain({
  id: 534_352,
  name: 'Scroll',
  nativeCurrency: ether,
  rpcUrls: { default: { http: ['https://rpc.scroll.io'] } },
  contracts: { multicall3: { address: MULTICALL3, blockCreated: 14 } },
});
