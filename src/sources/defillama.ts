// DefiLlama (no key), three hosts:
//   GET {DEFILLAMA_BASE_URL}/v2/chains                                   [{gecko_id, tvl, tokenSymbol, cmcId, name, chainId}]
//   GET {DEFILLAMA_STABLECOINS_BASE_URL}/stablecoins?includePrices=true  {peggedAssets: [{name, symbol, pegType, pegMechanism,
//                                                                          circulating: {<pegType>: amount}, price, ...}], chains}
//   GET {DEFILLAMA_YIELDS_BASE_URL}/pools                                {status: "success", data: [pool, ...]}  (~11.5 MB)
// Quirks: tvl is current USD TVL per chain; tokenSymbol and chainId are null for some chains; cmcId is a
// quoted string or absent. Stablecoin amounts are keyed by the peg (`circulating.peggedUSD` for
// USD-pegged assets, `peggedEUR` for euro ones, in units of that currency). The pools document is large:
// it has its own deadline and body bound, is parsed on a worker thread, and is cached as compact rows.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { UpstreamError } from '../lib/errors.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { parsePoolsText, type PoolsOutcome, type PoolTable } from './defillama-pools.ts';
import { runOffThread, workerModule } from '../lib/off-thread.ts';
import { optionalDecimal } from './wire.ts';

export const DEFILLAMA = 'defillama';
export type { PoolRow, PoolTable } from './defillama-pools.ts';

const POOLS_WORKER = workerModule('defillama-pools-worker', import.meta.url);

export interface ChainRow {
  name: string;
  /** Current TVL, USD; null when DefiLlama gives none. */
  tvl_usd: number | null;
  token_symbol: string | null;
  /** EVM chain id; null for chains without one. */
  chain_id: number | null;
}

export interface StablecoinRow {
  symbol: string;
  name: string;
  /** peggedUSD, peggedEUR, peggedVAR, ... */
  peg_type: string;
  /** fiat-backed, crypto-backed, algorithmic; null when not given. */
  peg_mechanism: string | null;
  /** `circulating.peggedUSD`: circulating amount of a USD-pegged asset, USD; null for other pegs. */
  circulating_usd: number | null;
  /** `circulating[pegType]`: circulating amount in units of the peg's currency. */
  circulating: number | null;
  /** DefiLlama's price, USD; null when it has none. */
  price: number | null;
}

const chainsSchema = z
  .array(
    z.object({
      name: z.string(),
      tvl: optionalDecimal,
      tokenSymbol: z.string().nullable().optional(),
      chainId: z.number().int().nullable().optional(),
    }),
  )
  .transform((rows) =>
    rows
      .map((c): ChainRow => ({ name: c.name, tvl_usd: c.tvl, token_symbol: c.tokenSymbol ?? null, chain_id: c.chainId ?? null }))
      .sort(byDescending((c) => c.tvl_usd)),
  );

const stablecoinsSchema = z
  .object({
    peggedAssets: z.array(
      z.object({
        name: z.string(),
        symbol: z.string(),
        pegType: z.string(),
        pegMechanism: z.string().nullable().optional(),
        circulating: z.record(z.string(), z.number().nullable()).nullable().optional(),
        price: optionalDecimal,
      }),
    ),
  })
  .transform((doc) =>
    doc.peggedAssets
      .map(
        (a): StablecoinRow => ({
          symbol: a.symbol,
          name: a.name,
          peg_type: a.pegType,
          peg_mechanism: a.pegMechanism ?? null,
          circulating_usd: a.circulating?.peggedUSD ?? null,
          circulating: a.circulating?.[a.pegType] ?? null,
          price: a.price,
        }),
      )
      .sort(byDescending((s) => s.circulating_usd)),
  );

/** The pools document arrives as text (not parsed on the event loop) and leaves as a compact table, which the cache keeps. */
const poolsSchema = z.string().transform(async (text) => {
  const outcome = await parsePools(text);
  if (!outcome.ok) throw new UpstreamError(DEFILLAMA, outcome.failure, `${DEFILLAMA} ${outcome.message}`);
  return outcome.table;
});

/** On a worker thread; on this thread only if a worker cannot be started. */
async function parsePools(text: string): Promise<PoolsOutcome> {
  try {
    return await runOffThread<string, PoolsOutcome>(POOLS_WORKER, text);
  } catch {
    return parsePoolsText(text);
  }
}

/** Largest first; rows without a value last, in the provider's order. */
function byDescending<T>(value: (row: T) => number | null) {
  return (a: T, b: T) => {
    const x = value(a);
    const y = value(b);
    if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
    return y - x;
  };
}

export interface DefiLlamaSettings {
  baseUrl: string;
  stablecoinsBaseUrl: string;
  yieldsBaseUrl: string;
  ttlS: number;
  yields: { ttlS: number; deadlineMs: number; maxBodyBytes: number };
}

function createDefiLlama(ctx: SourceContext<DefiLlamaSettings>) {
  const s = ctx.settings;
  return {
    /** Every chain, largest TVL first. */
    async chains(): Promise<Sourced<ChainRow[]>> {
      return ctx.fetch({ url: `${s.baseUrl}/v2/chains`, schema: chainsSchema, ttlS: s.ttlS });
    },

    /** Every stablecoin, largest USD circulation first (non-USD pegs last). */
    async stablecoins(): Promise<Sourced<StablecoinRow[]>> {
      return ctx.fetch({ url: `${s.stablecoinsBaseUrl}/stablecoins?includePrices=true`, schema: stablecoinsSchema, ttlS: s.ttlS });
    },

    /** Every yield pool, largest TVL first. One ~11.5 MB download per TTL, shared by every request. */
    async pools(): Promise<Sourced<PoolTable>> {
      return ctx.fetch({
        url: `${s.yieldsBaseUrl}/pools`,
        format: 'text',
        schema: poolsSchema,
        ttlS: s.yields.ttlS,
        deadlineMs: s.yields.deadlineMs,
        maxBodyBytes: s.yields.maxBodyBytes,
      });
    },
  };
}

export type DefiLlama = ReturnType<typeof createDefiLlama>;

export const defillamaSource = defineSource({
  key: 'defillama',
  name: DEFILLAMA,
  title: 'DefiLlama (TVL, stablecoins, yields)',
  docs: 'https://api-docs.defillama.com/',
  notes: 'No key, no documented rate limit (Cloudflare-cached). The yields document (/pools) is about 11.5 MB: fetched once per CACHE_TTL_DEFILLAMA_YIELDS_S with its own deadline and body bound, parsed on a worker thread.',
  env: {
    DEFILLAMA_BASE_URL: env.url('https://api.llama.fi', 'DefiLlama TVL API (/v2/chains).'),
    DEFILLAMA_STABLECOINS_BASE_URL: env.url('https://stablecoins.llama.fi', 'DefiLlama stablecoins API (/stablecoins).'),
    DEFILLAMA_YIELDS_BASE_URL: env.url('https://yields.llama.fi', 'DefiLlama yields API (/pools).'),
    DEFILLAMA_YIELDS_DEADLINE_MS: env.int(1000, 300_000, 30_000, 'Total deadline of one download of the ~11.5 MB yields document, parsing included (ms).'),
    DEFILLAMA_YIELDS_MAX_BODY_BYTES: env.int(1024, 1024 * 1024 * 1024, 64 * 1024 * 1024, 'Largest yields document accepted (bytes); larger answers fail with 502.'),
    CACHE_TTL_DEFILLAMA_S: env.ttl(300, 'DefiLlama chain TVLs and stablecoins'),
    CACHE_TTL_DEFILLAMA_YIELDS_S: env.ttl(600, 'DefiLlama yield pools'),
  },
  settings: (e) => ({
    baseUrl: e.DEFILLAMA_BASE_URL,
    stablecoinsBaseUrl: e.DEFILLAMA_STABLECOINS_BASE_URL,
    yieldsBaseUrl: e.DEFILLAMA_YIELDS_BASE_URL,
    ttlS: e.CACHE_TTL_DEFILLAMA_S,
    yields: { ttlS: e.CACHE_TTL_DEFILLAMA_YIELDS_S, deadlineMs: e.DEFILLAMA_YIELDS_DEADLINE_MS, maxBodyBytes: e.DEFILLAMA_YIELDS_MAX_BODY_BYTES },
  }),
  create: createDefiLlama,
});
