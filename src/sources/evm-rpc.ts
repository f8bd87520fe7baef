// EVM JSON-RPC, one source per chain (`rpc:ethereum`, `rpc:base`, ...), each with its own URL variable,
// breaker and health figures. Two ways out, both through the guard:
//   - `request(method, params)`: a plain JSON-RPC call over the HTTP client, cached per `ttlS`
//     (the gas endpoint's eth_feeHistory);
//   - `client()`: a viem public client created once per chain on first use (viem loads then: see
//     viem.ts), whose transport's fetchFn is the guarded fetch (deadline, breaker, JSON-RPC error
//     classification), for contract reads and ENS;
//   - `live(call)`: a viem call whose answer is used as is (balances, nonces), with its source meta;
//   - `block(ref)` / `transaction(hash)`: lookups cached by finality (evm-lookups.ts);
//   - `tokenEvidence(token, deadlineAt)`: what a token's contract says about itself, for the token risk
//     check (evm-token-evidence.ts), cached as one answer per token.
// Errors arrive as HTTP 200 with `error: {code, message}` (src/upstream/json-rpc.ts classifies them).
import type { Address, Chain, PublicClient } from 'viem';
import { z } from 'zod';
import { env, type EnvVar } from '../lib/env.ts';
import { sourceMeta } from '../upstream/envelope.ts';
import { stampNow } from '../upstream/cache.ts';
import { UpstreamError } from '../lib/errors.ts';
import { JSON_RPC, JSON_RPC_BATCH } from '../upstream/json-rpc.ts';
import { checkEvmAddress } from '../params/evm-address.ts';
import { defineSource, upstreamCause, type SourceContext, type Sourced } from './define-source.ts';
import { ALL_EVM_CHAINS, evmNetwork, type EvmChain, type EvmChainName, type EvmDex, type EvmNetworkName } from './evm-networks.ts';
import { chainLookups, type ChainLookups, type FetchResult } from './evm-lookups.ts';
import { readEvmTokenEvidence, type EvmTokenEvidence } from './evm-token-evidence.ts';
import { CANONICAL_TOKENS, wrapperToken } from './evm-canonical-tokens.ts';
import type { EvidenceExtrasSettings } from './evm-evidence-extras.ts';
import { LP_LOCKERS } from './evm-lp-lockers.ts';
import { TOKEN_EVIDENCE_ENV, untilDeadline } from './token-evidence-env.ts';
import { batchingRpc } from './rpc-batch.ts';
import { RESTRICTION_ENV, type RestrictionSettings } from './token-restrictions.ts';
import { loadViem } from './viem.ts';

export type { EvmChain, EvmChainName } from './evm-networks.ts';

const ROUTE_CHAINS: readonly EvmChainName[] = ['ethereum', 'base', 'arbitrum', 'optimism', 'polygon'];
/** The five chains the on-chain routes (/v1/chain-*) serve, in their order. */
export const EVM_CHAINS: readonly EvmChain[] = ROUTE_CHAINS.map((name) => evmNetwork(name) as EvmChain);

const rpcResponse = z.object({ jsonrpc: z.literal('2.0'), result: z.unknown() });
/** A result or the node's error (a revert is an answer, not a failure: see json-rpc.ts). */
const rpcAnswer = z.union([
  z.object({ jsonrpc: z.literal('2.0'), error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
  z.object({ jsonrpc: z.literal('2.0'), result: z.unknown() }),
]);
/** A batch's answers, each with the id of its call. */
const rpcBatchAnswer = z.array(
  z.union([
    z.object({ jsonrpc: z.literal('2.0'), id: z.unknown(), error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
    z.object({ jsonrpc: z.literal('2.0'), id: z.unknown(), result: z.unknown() }),
  ]),
);

export interface EvmRpcSettings {
  baseUrl: string;
  chain: EvmChain<EvmNetworkName>;
  headTtlS: number;
  finalTtlS: number;
  /** The V2-style router and wrapped native coin the token simulation trades through. */
  dex: { router: string | undefined; wrappedNative: string; restrictions: RestrictionSettings };
  /** Seconds a token's evidence is reused. */
  evidenceTtlS: number;
  /** The liquidity's stablecoin and LP lockers, and the canonical tokens impostors copy. */
  extras: EvidenceExtrasSettings;
  /** ENS Universal Resolver to use instead of viem's default for the chain (Ethereum only). */
  ensUniversalResolver: Address | undefined;
}

export interface EvmRpc extends ChainLookups {
  /** The source name, `rpc:<chain>`, as errors and meta.sources show it. */
  name: string;
  chain: EvmChain<EvmNetworkName>;
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
  /**
   * What the token's contract says about itself (code, proxy, owner, simulated trade), its reads sharing the
   * deadline `deadlineAt` (epoch ms); cached as one answer per token for CACHE_TTL_TOKEN_ONCHAIN_S.
   */
  tokenEvidence(token: string, deadlineAt: number): Promise<Sourced<EvmTokenEvidence>>;
}

/** Brief and long cache lifetimes of block and transaction lookups, shared by every chain. */
export const CHAIN_TTL_ENV = {
  CACHE_TTL_CHAIN_HEAD_S: env.ttl(2, 'blocks by tag (latest, safe, finalized), blocks above the finalized block, and pending or unknown transactions'),
  CACHE_TTL_CHAIN_FINAL_S: env.ttl(3600, 'finalized blocks and transactions mined in them'),
} as const;

/** An address setting (EIP-55 checksum checked when mixed-case); `def` is the documented default, if any. */
function addressVar<D extends string | undefined>(def: D, doc: string, extra: Parameters<typeof env.custom>[3] = {}) {
  return env.custom(
    z.string().transform((v, c) => {
      const check = checkEvmAddress(v);
      if (check.ok) return check.address;
      c.addIssue({ code: 'custom', message: check.reason === 'checksum' ? 'an address with a correct EIP-55 checksum' : 'a 0x address (40 hex digits)' });
      return z.NEVER;
    }),
    def,
    doc,
    extra,
  );
}

const ENS_ENV = {
  ENS_UNIVERSAL_RESOLVER: addressVar(
    undefined,
    "ENS Universal Resolver on Ethereum used to resolve names and primary names; unset = viem's default for mainnet.",
    { example: '0xeEeEEEeE14D718C2B47D9923Deab1335E144EeEe' },
  ),
} as const;

function createEvmRpc(ctx: SourceContext<EvmRpcSettings>): EvmRpc {
  const { baseUrl, chain, headTtlS, finalTtlS, ensUniversalResolver, dex, evidenceTtlS, extras } = ctx.settings;
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
    async tokenEvidence(token, deadlineAt) {
      const remaining = untilDeadline(ctx.name, deadlineAt);
      // The reads of one round go out as one batch (rpc-batch.ts), each request within what is left of the deadline.
      const rpc = batchingRpc(ctx.name, async (batch) => {
        const res = await ctx.fetch({
          url: baseUrl,
          method: 'POST',
          body: JSON.stringify(batch),
          idempotent: true,
          protocol: JSON_RPC_BATCH,
          schema: rpcBatchAnswer,
          ttlS: 0,
          deadlineMs: remaining(),
        });
        return res.data;
      });
      const key = `evidence ${token.toLowerCase()} ${dex.router ?? '-'} ${dex.wrappedNative}`;
      return ctx.compute(key, evidenceTtlS, () => readEvmTokenEvidence(ctx.name, rpc, token, dex, extras), remaining());
    },
  };
}


/** DEX_ROUTER_<NAME> and WRAPPED_NATIVE_<NAME>: the token simulation's router and coin, defaults from the chain's declaration. */
function dexEnv(chain: EvmChain<EvmNetworkName>, dex: EvmDex): Record<string, EnvVar> {
  const upper = chain.name.toUpperCase();
  const router = dex.router
    ? `${dex.name} router on ${chain.viem.name}, used to simulate a buy and a sell of a token (default: ${dex.source.split(';')[0]}).`
    : `V2-style (Uniswap V2 Router02 interface) router on ${chain.viem.name} for the token risk simulation; none by default (${dex.source.split(';')[0]}), so the simulation is null until set.`;
  return {
    [`DEX_ROUTER_${upper}`]: addressVar(dex.router, router),
    [`WRAPPED_NATIVE_${upper}`]: addressVar(dex.wrappedNative, `Wrapped ${chain.symbol} on ${chain.viem.name}: the coin the token simulation buys with (its pairs on the router).`),
  };
}

/** A comma-separated list of addresses (EIP-55 checked when mixed-case); `def` the documented default. */
function addressListVar(def: string | undefined, doc: string) {
  return env.custom(
    z.string().transform((v, c) => {
      const out: string[] = [];
      for (const part of v.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
        const check = checkEvmAddress(part);
        if (check.ok) out.push(check.address);
        else c.addIssue({ code: 'custom', message: `comma-separated 0x addresses (${part} is not one${check.reason === 'checksum' ? ': wrong EIP-55 checksum' : ''})` });
      }
      return out;
    }),
    def,
    doc,
  );
}

/** STABLE_TOKEN_<NAME> and LP_LOCKERS_<NAME>: the liquidity read's USD price and known LP lockers. */
function liquidityEnv(chain: EvmChain<EvmNetworkName>): Record<string, EnvVar> {
  const upper = chain.name.toUpperCase();
  const usdc = CANONICAL_TOKENS[chain.name].find((t) => t.of === 'USDC');
  const lockers = LP_LOCKERS[chain.name];
  return {
    [`STABLE_TOKEN_${upper}`]: addressVar(
      usdc?.address,
      `Stablecoin (1 unit = $1) whose pair with the wrapped ${chain.symbol} on the simulation's router prices the token's liquidity in USD on ${chain.viem.name}` +
        (usdc ? ' (default: native USDC, developers.circle.com/stablecoins/usdc-contract-addresses).' : '; none by default (no native USDC cited), so reserve_usd is null until set.'),
    ),
    [`LP_LOCKERS_${upper}`]: addressListVar(
      lockers.addresses.length ? lockers.addresses.join(',') : undefined,
      `Comma-separated LP locker contracts on ${chain.viem.name}: LP tokens they hold count as locked` +
        (lockers.addresses.length ? ` (default: ${lockers.source}).` : '; none by default (none cited).'),
    ),
  };
}

/** The descriptor of one chain's RPC source; `extraEnv` for the chain's own settings (ENS on Ethereum). */
function rpcSource<const K extends string>(key: K, chain: EvmChain<EvmNetworkName>, extraEnv: Record<string, EnvVar> = {}) {
  const variable = `RPC_URL_${chain.name.toUpperCase()}`;
  const upper = chain.name.toUpperCase();
  return defineSource({
    key,
    name: `rpc:${chain.name}`,
    title: `${chain.viem.name} JSON-RPC`,
    docs: 'https://ethereum.org/en/developers/docs/apis/json-rpc/',
    notes:
      `Default ${chain.defaultRpc}${chain.rpcSource ? ` (${chain.rpcSource})` : ''}: a keyless public endpoint with no SLA; set ${variable} to your own node or provider for production. ` +
      (chain.dex.router ? `Token simulation through ${chain.dex.name} (${chain.dex.source}); it needs eth_call state overrides, and eth_simulateV1 or eth_call's block override for the later-block checks.` : `No default token simulation router: ${chain.dex.source}.`),
    env: {
      [variable]: env.url(chain.defaultRpc, `JSON-RPC endpoint of ${chain.viem.name} (chain id ${chain.id}).`),
      ...CHAIN_TTL_ENV,
      ...dexEnv(chain, chain.dex),
      ...liquidityEnv(chain),
      ...TOKEN_EVIDENCE_ENV,
      ...RESTRICTION_ENV,
      ...extraEnv,
    } as Record<string, EnvVar>,
    settings: (e) => ({
      baseUrl: e[variable] as string,
      chain,
      headTtlS: e.CACHE_TTL_CHAIN_HEAD_S as number,
      finalTtlS: e.CACHE_TTL_CHAIN_FINAL_S as number,
      ensUniversalResolver: e.ENS_UNIVERSAL_RESOLVER as Address | undefined,
      dex: {
        router: e[`DEX_ROUTER_${upper}`] as string | undefined,
        wrappedNative: e[`WRAPPED_NATIVE_${upper}`] as string,
        restrictions: { laterBlocks: e.RISK_SIM_LATER_BLOCKS as number, logBlocks: e.RISK_HOLDER_LOG_BLOCKS as number },
      },
      evidenceTtlS: e.CACHE_TTL_TOKEN_ONCHAIN_S as number,
      extras: {
        stable: e[`STABLE_TOKEN_${upper}`] as string | undefined,
        lockers: (e[`LP_LOCKERS_${upper}`] as string[] | undefined) ?? [],
        canonical: [...CANONICAL_TOKENS[chain.name], wrapperToken(chain, e[`WRAPPED_NATIVE_${upper}`] as string)],
      },
    }),
    create: createEvmRpc,
  });
}

export const rpcEthereumSource = rpcSource('rpcEthereum', evmNetwork('ethereum'), ENS_ENV);
export const rpcBaseSource = rpcSource('rpcBase', evmNetwork('base'));
export const rpcArbitrumSource = rpcSource('rpcArbitrum', evmNetwork('arbitrum'));
export const rpcOptimismSource = rpcSource('rpcOptimism', evmNetwork('optimism'));
export const rpcPolygonSource = rpcSource('rpcPolygon', evmNetwork('polygon'));
export const rpcBscSource = rpcSource('rpcBsc', evmNetwork('bsc'));
export const rpcAvalancheSource = rpcSource('rpcAvalanche', evmNetwork('avalanche'));
export const rpcFantomSource = rpcSource('rpcFantom', evmNetwork('fantom'));
export const rpcZksyncSource = rpcSource('rpcZksync', evmNetwork('zksync'));
export const rpcLineaSource = rpcSource('rpcLinea', evmNetwork('linea'));
export const rpcScrollSource = rpcSource('rpcScroll', evmNetwork('scroll'));

/** Every EVM chain's RPC source, by chain name (the token risk check reads all eleven). */
export const EVM_RPC_SOURCE_KEYS = {
  ethereum: 'rpcEthereum',
  base: 'rpcBase',
  arbitrum: 'rpcArbitrum',
  optimism: 'rpcOptimism',
  polygon: 'rpcPolygon',
  bsc: 'rpcBsc',
  avalanche: 'rpcAvalanche',
  fantom: 'rpcFantom',
  zksync: 'rpcZksync',
  linea: 'rpcLinea',
  scroll: 'rpcScroll',
} as const satisfies Record<EvmNetworkName, string>;

export { ALL_EVM_CHAINS };
