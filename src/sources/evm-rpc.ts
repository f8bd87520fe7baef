// EVM JSON-RPC, one source per chain (`rpc:ethereum`, `rpc:base`, ...), each with its own URL variable,
// breaker and health figures. Two ways out, both through the guard:
//   - `request(method, params)`: a plain JSON-RPC call over the HTTP client, cached per `ttlS`
//     (the gas endpoint's eth_feeHistory);
//   - `client`: a viem public client created once per chain, whose transport's fetchFn is the guarded
//     fetch (deadline, breaker, JSON-RPC error classification), for contract reads and ENS.
// Errors arrive as HTTP 200 with `error: {code, message}` (src/http/json-rpc.ts classifies them).
import { createPublicClient, http, type Chain, type PublicClient } from 'viem';
import { arbitrum, base, mainnet, optimism, polygon } from 'viem/chains';
import { z } from 'zod';
import { env } from '../env.ts';
import { JSON_RPC } from '../http/json-rpc.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';

export interface EvmChain {
  /** Name used in parameters and in the source name `rpc:<name>`. */
  name: 'ethereum' | 'base' | 'arbitrum' | 'optimism' | 'polygon';
  id: number;
  /** Native currency symbol. */
  symbol: string;
  viem: Chain;
  /** Default public RPC (keyless, no SLA): set RPC_URL_<NAME> for production. */
  defaultRpc: string;
}

export const EVM_CHAINS: readonly EvmChain[] = [
  { name: 'ethereum', id: 1, symbol: 'ETH', viem: mainnet, defaultRpc: 'https://ethereum-rpc.publicnode.com' },
  { name: 'base', id: 8453, symbol: 'ETH', viem: base, defaultRpc: 'https://mainnet.base.org' },
  { name: 'arbitrum', id: 42161, symbol: 'ETH', viem: arbitrum, defaultRpc: 'https://arb1.arbitrum.io/rpc' },
  { name: 'optimism', id: 10, symbol: 'ETH', viem: optimism, defaultRpc: 'https://mainnet.optimism.io' },
  { name: 'polygon', id: 137, symbol: 'POL', viem: polygon, defaultRpc: 'https://polygon-rpc.com' },
];

const rpcResponse = z.object({ jsonrpc: z.literal('2.0'), result: z.unknown() });

export interface EvmRpcSettings {
  baseUrl: string;
  chain: EvmChain;
}

export interface EvmRpc {
  chain: EvmChain;
  /** One JSON-RPC call; `result` as the node sent it. Cached `ttlS` seconds (0 = live). */
  request(method: string, params: unknown[], ttlS?: number): Promise<Sourced<unknown>>;
  /** viem public client of this chain; every call goes through the guard of `rpc:<chain>`. */
  client: PublicClient;
}

function createEvmRpc(ctx: SourceContext<EvmRpcSettings>): EvmRpc {
  const { baseUrl, chain } = ctx.settings;
  return {
    chain,
    async request(method, params, ttlS = 0) {
      const res = await ctx.fetch({
        url: baseUrl,
        method: 'POST',
        // The cache key includes the body, so the id is constant: identical calls coalesce.
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        idempotent: true,
        protocol: JSON_RPC,
        schema: rpcResponse,
        ttlS,
      });
      return { data: res.data.result, meta: res.meta };
    },
    client: createPublicClient({ chain: chain.viem, transport: http(baseUrl, { fetchFn: ctx.fetchFn(JSON_RPC), retryCount: 0 }) }) as PublicClient,
  };
}

/** The descriptor of one chain's RPC source. */
function rpcSource<const K extends string>(key: K, chain: EvmChain) {
  const variable = `RPC_URL_${chain.name.toUpperCase()}`;
  return defineSource({
    key,
    name: `rpc:${chain.name}`,
    title: `${chain.viem.name} JSON-RPC`,
    docs: 'https://ethereum.org/en/developers/docs/apis/json-rpc/',
    notes: `Default ${chain.defaultRpc}: a keyless public endpoint with undocumented limits and no SLA; set ${variable} to your own node or provider for production.`,
    env: { [variable]: env.url(chain.defaultRpc, `JSON-RPC endpoint of ${chain.viem.name} (chain id ${chain.id}).`) } as Record<string, ReturnType<typeof env.url>>,
    settings: (e) => ({ baseUrl: e[variable]!, chain }),
    create: createEvmRpc,
  });
}

const byName = (name: EvmChain['name']) => EVM_CHAINS.find((c) => c.name === name)!;

export const rpcEthereumSource = rpcSource('rpcEthereum', byName('ethereum'));
export const rpcBaseSource = rpcSource('rpcBase', byName('base'));
export const rpcArbitrumSource = rpcSource('rpcArbitrum', byName('arbitrum'));
export const rpcOptimismSource = rpcSource('rpcOptimism', byName('optimism'));
export const rpcPolygonSource = rpcSource('rpcPolygon', byName('polygon'));
