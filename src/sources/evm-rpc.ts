// EVM JSON-RPC, one source per chain (`rpc:ethereum`, `rpc:base`, ...), each with its own URL variable,
// breaker and health figures. Two ways out, both through the guard:
//   - `request(method, params)`: a plain JSON-RPC call over the HTTP client, cached per `ttlS`
//     (the gas endpoint's eth_feeHistory);
//   - `client()`: a viem public client created once per chain on first use (viem loads then: see
//     viem.ts), whose transport's fetchFn is the guarded fetch (deadline, breaker, JSON-RPC error
//     classification), for contract reads and ENS;
//   - `live(call)`: a viem call whose answer is used as is (balances, nonces), with its source meta;
//   - `block(ref)` / `transaction(hash)`: lookups cached by finality (evm-lookups.ts).
// Errors arrive as HTTP 200 with `error: {code, message}` (src/http/json-rpc.ts classifies them).
import type { Address, Chain, PublicClient } from 'viem';
import { z } from 'zod';
import { env, type EnvVar } from '../env.ts';
import { sourceMeta } from '../http/envelope.ts';
import { stampNow } from '../http/cache.ts';
import { UpstreamError } from '../http/errors.ts';
import { JSON_RPC } from '../http/json-rpc.ts';
import { checkEvmAddress } from '../params/evm-address.ts';
import { defineSource, upstreamCause, type SourceContext, type Sourced } from './define-source.ts';
import { arbitrumChain, baseChain, ethereumChain, optimismChain, polygonChain } from './evm-chains.ts';
import { chainLookups, type ChainLookups, type FetchResult } from './evm-lookups.ts';
import { loadViem } from './viem.ts';

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
  { name: 'ethereum', id: 1, symbol: 'ETH', viem: ethereumChain, defaultRpc: 'https://ethereum-rpc.publicnode.com' },
  { name: 'base', id: 8453, symbol: 'ETH', viem: baseChain, defaultRpc: 'https://mainnet.base.org' },
  { name: 'arbitrum', id: 42161, symbol: 'ETH', viem: arbitrumChain, defaultRpc: 'https://arb1.arbitrum.io/rpc' },
  { name: 'optimism', id: 10, symbol: 'ETH', viem: optimismChain, defaultRpc: 'https://mainnet.optimism.io' },
  { name: 'polygon', id: 137, symbol: 'POL', viem: polygonChain, defaultRpc: 'https://polygon-rpc.com' },
];

const rpcResponse = z.object({ jsonrpc: z.literal('2.0'), result: z.unknown() });

export interface EvmRpcSettings {
  baseUrl: string;
  chain: EvmChain;
  headTtlS: number;
  finalTtlS: number;
  /** ENS Universal Resolver to use instead of viem's default for the chain (Ethereum only). */
  ensUniversalResolver: Address | undefined;
}

export interface EvmRpc extends ChainLookups {
  /** The source name, `rpc:<chain>`, as errors and meta.sources show it. */
  name: string;
  chain: EvmChain;
  /** One JSON-RPC call; `result` as the node sent it. Cached `ttlS` seconds (0 = live). */
  request(method: string, params: unknown[], ttlS?: number): Promise<Sourced<unknown>>;
  /** viem public client of this chain (created on first use); every call goes through the guard of `rpc:<chain>`. */
  client(): Promise<PublicClient>;
  /**
   * A live (uncached) viem call with its source meta. A failure of the node is our UpstreamError
   * (502/503 naming `rpc:<chain>`); a contract call that reverts or returns nothing stays viem's
   * ContractFunctionExecutionError for the caller to read; anything else viem could not read from
   * the node's answer is a 502 too.
   */
  live<T>(call: (client: PublicClient) => Promise<T>): Promise<Sourced<T>>;
  /** ENS_UNIVERSAL_RESOLVER when set (pass it to viem's ENS actions); undefined = viem's default. */
  ensUniversalResolver: Address | undefined;
}

/** Brief and long cache lifetimes of block and transaction lookups, shared by every chain. */
export const CHAIN_TTL_ENV = {
  CACHE_TTL_CHAIN_HEAD_S: env.ttl(2, 'blocks by tag (latest, safe, finalized), blocks above the finalized block, and pending or unknown transactions'),
  CACHE_TTL_CHAIN_FINAL_S: env.ttl(3600, 'finalized blocks and transactions mined in them'),
} as const;

const ENS_ENV = {
  ENS_UNIVERSAL_RESOLVER: env.custom(
    z.string().transform((v, c) => {
      const check = checkEvmAddress(v);
      if (check.ok) return check.address;
      c.addIssue({ code: 'custom', message: check.reason === 'checksum' ? 'an address with a correct EIP-55 checksum' : 'a 0x address (40 hex digits)' });
      return z.NEVER;
    }),
    undefined,
    "ENS Universal Resolver on Ethereum used to resolve names and primary names; unset = viem's default for mainnet.",
    { example: '0xeEeEEEeE14D718C2B47D9923Deab1335E144EeEe' },
  ),
} as const;

function createEvmRpc(ctx: SourceContext<EvmRpcSettings>): EvmRpc {
  const { baseUrl, chain, headTtlS, finalTtlS, ensUniversalResolver } = ctx.settings;
  const fetchResult: FetchResult = async (method, params, answer, ttlS) => {
    const res = await ctx.fetch({
      url: baseUrl,
      method: 'POST',
      // The cache key includes the body, so the id is constant: identical calls coalesce.
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      idempotent: true,
      protocol: JSON_RPC,
      schema: answer,
      ttlS,
    });
    return { data: res.data.result, meta: res.meta };
  };
  // CCIP-Read (EIP-3668) is off: following it would call gateway URLs chosen by contracts, outside
  // this source's guard. A lookup that needs it fails visibly instead (see src/market/onchain/ens.ts).
  let client: Promise<PublicClient> | undefined;
  const viemClient = () =>
    (client ??= loadViem().then(
      ({ createPublicClient, http }) =>
        createPublicClient({ chain: chain.viem, ccipRead: false, transport: http(baseUrl, { fetchFn: ctx.fetchFn(JSON_RPC), retryCount: 0 }) }) as PublicClient,
    ));
  return {
    name: ctx.name,
    chain,
    request: (method, params, ttlS = 0) => fetchResult(method, params, rpcResponse, ttlS),
    client: viemClient,
    async live(call) {
      const [viem, c] = await Promise.all([loadViem(), viemClient()]);
      try {
        const data = await call(c);
        return { data, meta: sourceMeta(ctx.name, stampNow(), false) };
      } catch (err) {
        const upstream = upstreamCause(err);
        if (upstream) throw upstream;
        if (err instanceof viem.ContractFunctionExecutionError) throw err;
        throw new UpstreamError(ctx.name, 'schema', `${ctx.name} returned an answer that could not be read`, { cause: err });
      }
    },
    ...chainLookups(fetchResult, { headTtlS, finalTtlS }),
    ensUniversalResolver,
  };
}

/** The descriptor of one chain's RPC source; `extraEnv` for the chain's own settings (ENS on Ethereum). */
function rpcSource<const K extends string>(key: K, chain: EvmChain, extraEnv: Record<string, EnvVar> = {}) {
  const variable = `RPC_URL_${chain.name.toUpperCase()}`;
  return defineSource({
    key,
    name: `rpc:${chain.name}`,
    title: `${chain.viem.name} JSON-RPC`,
    docs: 'https://ethereum.org/en/developers/docs/apis/json-rpc/',
    notes: `Default ${chain.defaultRpc}: a keyless public endpoint with undocumented limits and no SLA; set ${variable} to your own node or provider for production.`,
    env: {
      [variable]: env.url(chain.defaultRpc, `JSON-RPC endpoint of ${chain.viem.name} (chain id ${chain.id}).`),
      ...CHAIN_TTL_ENV,
      ...extraEnv,
    } as Record<string, EnvVar>,
    settings: (e) => ({
      baseUrl: e[variable] as string,
      chain,
      headTtlS: e.CACHE_TTL_CHAIN_HEAD_S as number,
      finalTtlS: e.CACHE_TTL_CHAIN_FINAL_S as number,
      ensUniversalResolver: e.ENS_UNIVERSAL_RESOLVER as Address | undefined,
    }),
    create: createEvmRpc,
  });
}

const byName = (name: EvmChain['name']) => EVM_CHAINS.find((c) => c.name === name)!;

export const rpcEthereumSource = rpcSource('rpcEthereum', byName('ethereum'), ENS_ENV);
export const rpcBaseSource = rpcSource('rpcBase', byName('base'));
export const rpcArbitrumSource = rpcSource('rpcArbitrum', byName('arbitrum'));
export const rpcOptimismSource = rpcSource('rpcOptimism', byName('optimism'));
export const rpcPolygonSource = rpcSource('rpcPolygon', byName('polygon'));
