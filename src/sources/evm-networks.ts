// The eleven EVM chains marketgate reads, one declaration each: its public RPC default and the V2-style
// DEX the token risk check simulates trades through. Every default is cited to its owner's documentation
// (the chain's for the RPC, the DEX's for its router and wrapped native coin); each is a setting
// (RPC_URL_<CHAIN>, DEX_ROUTER_<CHAIN>, WRAPPED_NATIVE_<CHAIN>, declared in evm-rpc.ts). A chain where no
// documented V2-style router could be established has `dex.router` undefined: the simulation is then
// null with that reason unless DEX_ROUTER_<CHAIN> is set.
import type { Chain } from 'viem';
import {
  arbitrumChain,
  avalancheChain,
  baseChain,
  bscChain,
  ethereumChain,
  fantomChain,
  lineaChain,
  optimismChain,
  polygonChain,
  scrollChain,
  zksyncChain,
} from './evm-chains.ts';

/** The five chains the on-chain routes (/v1/chain-*) serve. */
export type EvmChainName = 'ethereum' | 'base' | 'arbitrum' | 'optimism' | 'polygon';
/** Every EVM chain with an RPC source: the five above and the six more the token risk check reads. */
export type EvmNetworkName = EvmChainName | 'bsc' | 'avalanche' | 'fantom' | 'zksync' | 'linea' | 'scroll';

/** The V2-style DEX of a chain: a router with Uniswap V2 Router02's interface, and the wrapped native coin. */
export interface EvmDex {
  /** The DEX's name, e.g. "Uniswap V2"; undefined when no documented V2-style router was established. */
  name: string | undefined;
  /** Its router (Router02 interface); undefined: none by default. */
  router: string | undefined;
  /** The wrapped native coin its pairs use (WETH, WBNB, ...). */
  wrappedNative: string;
  /** Where the router and the wrapped coin's addresses come from (or why there is no router). */
  source: string;
}

export interface EvmChain<Name extends string = EvmChainName> {
  /** Name used in parameters and in the source name `rpc:<name>`. */
  name: Name;
  id: number;
  /** Native currency symbol. */
  symbol: string;
  viem: Chain;
  /** Default public RPC (keyless, no SLA): set RPC_URL_<NAME> for production. */
  defaultRpc: string;
  /** Where the default RPC is documented (the chain's own docs); the five older defaults predate this field. */
  rpcSource?: string;
  dex: EvmDex;
}

const UNISWAP_V2_DEPLOYMENTS = 'docs.uniswap.org/contracts/v2/reference/smart-contracts/v2-deployments (V2Router02)';
const UNISWAP_WETH9 = 'Uniswap sdk-core WETH9 (github.com/Uniswap/sdks, sdks/sdk-core/src/entities/weth9.ts)';
const PANCAKE_V2_ADDRESSES = 'developer.pancakeswap.finance/contracts/v2/addresses (PancakeRouter)';
const PANCAKE_WNATIVE = 'PancakeSwap swap-sdk-evm WNATIVE (github.com/pancakeswap/pancake-frontend, packages/swap-sdk-evm/src/constants.ts)';
const uniswapV2 = (router: string, wrappedNative: string): EvmDex => ({ name: 'Uniswap V2', router, wrappedNative, source: `${UNISWAP_V2_DEPLOYMENTS}; ${UNISWAP_WETH9}` });
const pancakeV2 = (router: string, wrappedNative: string, wrappedSource = PANCAKE_WNATIVE): EvmDex => ({
  name: 'PancakeSwap V2',
  router,
  wrappedNative,
  source: `${PANCAKE_V2_ADDRESSES}; ${wrappedSource}`,
});

export const ALL_EVM_CHAINS = [
  {
    name: 'ethereum',
    id: 1,
    symbol: 'ETH',
    viem: ethereumChain,
    defaultRpc: 'https://ethereum-rpc.publicnode.com',
    dex: uniswapV2('0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D', '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2'),
  },
  {
    name: 'base',
    id: 8453,
    symbol: 'ETH',
    viem: baseChain,
    defaultRpc: 'https://mainnet.base.org',
    dex: uniswapV2('0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24', '0x4200000000000000000000000000000000000006'),
  },
  {
    name: 'arbitrum',
    id: 42161,
    symbol: 'ETH',
    viem: arbitrumChain,
    defaultRpc: 'https://arb1.arbitrum.io/rpc',
    dex: uniswapV2('0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24', '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1'),
  },
  {
    name: 'optimism',
    id: 10,
    symbol: 'ETH',
    viem: optimismChain,
    defaultRpc: 'https://mainnet.optimism.io',
    dex: uniswapV2('0x4A7b5Da61326A6379179b40d00F57E5bbDC962c2', '0x4200000000000000000000000000000000000006'),
  },
  {
    name: 'polygon',
    id: 137,
    symbol: 'POL',
    viem: polygonChain,
    defaultRpc: 'https://polygon-rpc.com',
    dex: uniswapV2('0xedf6066a2b290C185783862C7F4776A2C8077AD1', '0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270'),
  },
  {
    name: 'bsc',
    id: 56,
    symbol: 'BNB',
    viem: bscChain,
    defaultRpc: 'https://bsc-dataseed.bnbchain.org',
    rpcSource: 'docs.bnbchain.org/bnb-smart-chain/developers/json_rpc/json-rpc-endpoint (BSC Mainnet; 10K requests per 5 min)',
    // PancakeSwap's router docs name WBNB as what WETH() returns (developer.pancakeswap.finance/contracts/v2/router-v2).
    dex: pancakeV2('0x10ED43C718714eb63d5aA57B78B54704E256024E', '0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c', 'developer.pancakeswap.finance/contracts/v2/router-v2 (WETH() = WBNB)'),
  },
  {
    name: 'avalanche',
    id: 43114,
    symbol: 'AVAX',
    viem: avalancheChain,
    defaultRpc: 'https://api.avax.network/ext/bc/C/rpc',
    rpcSource: 'build.avax.network/docs/rpcs (C-Chain public API node, /ext/bc/C/rpc)',
    dex: uniswapV2('0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24', '0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7'),
  },
  {
    name: 'fantom',
    id: 250,
    symbol: 'FTM',
    viem: fantomChain,
    defaultRpc: 'https://rpcapi.fantom.network',
    rpcSource: "docs.fantom.foundation (the Fantom Foundation's public Opera endpoint; Opera's successor chain is Sonic since December 2024)",
    dex: {
      name: undefined,
      router: undefined,
      wrappedNative: '0x21be370D5312f44cB42ce377BC9b8a0cEF1A4C83',
      source:
        "no default router: Uniswap V2 is not deployed on Fantom, and SpookySwap's documentation (docs.spooky.fi) lists its V3 contracts but no V2 router address; " +
        'wFTM from docs.spooky.fi/resources/token-addresses/fantom-opera',
    },
  },
  {
    name: 'zksync',
    id: 324,
    symbol: 'ETH',
    viem: zksyncChain,
    defaultRpc: 'https://mainnet.era.zksync.io',
    rpcSource: 'docs.zksync.io/zksync-network/environment/zksync-era (ZKsync Era Mainnet)',
    dex: pancakeV2('0x5aEaF2883FBf30f3D62471154eDa3C0c1b05942d', '0x5AEa5775959fBC2557Cc8789bC1bf90A239D9a91'),
  },
  {
    name: 'linea',
    id: 59144,
    symbol: 'ETH',
    viem: lineaChain,
    defaultRpc: 'https://rpc.linea.build',
    rpcSource: 'docs.linea.build/network/build/network-info (Linea mainnet; public endpoints are rate limited)',
    dex: pancakeV2('0x8cFe327CEc66d1C090Dd72bd0FF11d690C33a2Eb', '0xe5D7C2a44FfDDf6b295A15c148167daaAf5Cf34f'),
  },
  {
    name: 'scroll',
    id: 534352,
    symbol: 'ETH',
    viem: scrollChain,
    defaultRpc: 'https://rpc.scroll.io',
    rpcSource: 'docs.scroll.io/en/developers/scroll-contracts (network info)',
    dex: {
      name: undefined,
      router: undefined,
      wrappedNative: '0x5300000000000000000000000000000000000004',
      source:
        "no default router: Uniswap V2 and PancakeSwap V2 are not deployed on Scroll, and Scroll's own contract list names Uniswap v3 only; " +
        'WETH from docs.scroll.io/en/developers/scroll-contracts (L2 predeploy)',
    },
  },
] as const satisfies readonly EvmChain<EvmNetworkName>[];

export const evmNetwork = (name: EvmNetworkName): EvmChain<EvmNetworkName> => ALL_EVM_CHAINS.find((c) => c.name === name)!;
