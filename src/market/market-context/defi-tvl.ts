// /v1/defi-tvl: DefiLlama's TVL by chain, its stablecoins, or its yield pools (largest first).
import { z } from 'zod';
import { clean } from '../../analytics/numbers.ts';
import { boundedInt, oneOf } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { derived, envelope } from '../../upstream/envelope.ts';
import { BadRequestError, NotFoundError } from '../../lib/errors.ts';
import { DEFILLAMA, type ChainRow, type PoolTable, type StablecoinRow } from '../../sources/defillama.ts';
import { selectPools } from '../../sources/defillama-pools.ts';

const VIEWS = ['chains', 'stablecoins', 'yields'] as const;

const filter = (what: string) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .optional()
    .describe(`view=yields only: ${what}, case-insensitive exact match; one no pool has is a 404`);

const query = z.object({
  view: oneOf(VIEWS, 'chains', 'chains: TVL by chain; stablecoins: stablecoins by circulation; yields: yield pools by TVL.'),
  limit: boundedInt(1, 200, 20, 'Rows, 1-200, largest first.'),
  chain: filter("DefiLlama's chain name (Ethereum, Arbitrum, BSC)"),
  project: filter("DefiLlama's project slug (lido, aave-v3)"),
});

const usd = (what: string) => z.number().nullable().describe(`${what}, USD`);
const pct = (what: string) => z.number().nullable().describe(`${what}, percent a year`);

const chainsData = z.object({
  view: z.literal('chains'),
  total_tvl_usd: z.number().describe('Σ tvl over every chain DefiLlama lists (not only the rows shown), USD'),
  chains_total: z.number().int().describe('Chains DefiLlama lists'),
  chains: z
    .array(
      z.object({
        name: z.string().describe("DefiLlama's chain name"),
        tvl_usd: usd('Current total value locked in DeFi on the chain (DefiLlama `tvl`)'),
        token_symbol: z.string().nullable().describe('Native token symbol; null when DefiLlama gives none'),
        chain_id: z.number().int().nullable().describe('EVM chain id; null for chains without one'),
      }),
    )
    .describe('Largest tvl_usd first'),
});

const stablecoinsData = z.object({
  view: z.literal('stablecoins'),
  total_circulating_usd: z.number().describe('Σ circulating_usd over every USD-pegged stablecoin DefiLlama lists (other pegs are not converted), USD'),
  stablecoins_total: z.number().int().describe('Stablecoins DefiLlama lists'),
  stablecoins: z
    .array(
      z.object({
        symbol: z.string(),
        name: z.string(),
        peg_type: z.string().describe('What it is pegged to: peggedUSD, peggedEUR, peggedVAR (floating), ...'),
        peg_mechanism: z.string().nullable().describe('fiat-backed, crypto-backed or algorithmic'),
        circulating_usd: usd('Circulating amount of a USD-pegged stablecoin (DefiLlama `circulating.peggedUSD`); null for other pegs'),
        circulating: z.number().nullable().describe("Circulating amount in units of the peg's currency (`circulating[peg_type]`)"),
        price: usd("DefiLlama's current price; null when it has none"),
      }),
    )
    .describe('Largest circulating_usd first; stablecoins with another peg after them'),
});

const yieldsData = z.object({
  view: z.literal('yields'),
  chain: z.string().nullable().describe('The chain filter applied, as asked; null for none'),
  project: z.string().nullable().describe('The project filter applied, as asked; null for none'),
  pools_matched: z.number().int().describe('Pools that pass the filters (before limit)'),
  pools_skipped: z
    .number()
    .int()
    .describe("Pools of DefiLlama's document left out, whatever the filters, because a served field was missing or malformed (tvlUsd null, an APY that is not a number)"),
  pools: z
    .array(
      z.object({
        pool: z.string().describe("DefiLlama's pool id"),
        project: z.string().describe('Project slug'),
        chain: z.string(),
        symbol: z.string().describe('Token(s) of the pool, as DefiLlama writes them (USDC-WETH)'),
        tvl_usd: z.number().describe('Total value locked in the pool, USD'),
        apy: pct('Total APY = apy_base + apy_reward'),
        apy_base: pct('APY from fees/interest'),
        apy_reward: pct('APY from reward tokens'),
        stablecoin: z.boolean().nullable().describe('DefiLlama flags the pool as stablecoin-only'),
        il_risk: z.boolean().nullable().describe('DefiLlama ilRisk: true = exposed to impermanent loss ("yes"), false = not ("no"), null = not given'),
      }),
    )
    .describe('Largest tvl_usd first'),
});

const data = z.discriminatedUnion('view', [chainsData, stablecoinsData, yieldsData]);
type Data = z.output<typeof data>;

/** Σ of the values given, float noise stripped. */
const total = (values: (number | null)[]) => clean(values.reduce<number>((sum, v) => sum + (v ?? 0), 0));

function chainsView(rows: ChainRow[], limit: number): Data {
  return derived(rows, `chains/${limit}`, () => ({
    view: 'chains' as const,
    total_tvl_usd: total(rows.map((r) => r.tvl_usd)),
    chains_total: rows.length,
    chains: rows.slice(0, limit),
  }));
}

function stablecoinsView(rows: StablecoinRow[], limit: number): Data {
  return derived(rows, `stablecoins/${limit}`, () => ({
    view: 'stablecoins' as const,
    total_circulating_usd: total(rows.map((r) => r.circulating_usd)),
    stablecoins_total: rows.length,
    stablecoins: rows.slice(0, limit),
  }));
}

function yieldsView(pools: PoolTable, limit: number, chain: string | undefined, project: string | undefined): Data {
  // The table is sorted by TVL once per download; a request scans its integer chain/project columns and
  // builds objects only for the rows it serves.
  const got = selectPools(pools, { chain, project }, limit);
  if (!got.chainKnown) throw new NotFoundError(`${DEFILLAMA} lists no yield pool on chain '${chain}'`, DEFILLAMA);
  if (!got.projectKnown) throw new NotFoundError(`${DEFILLAMA} lists no yield pool of project '${project}'`, DEFILLAMA);
  return { view: 'yields', chain: chain ?? null, project: project ?? null, pools_matched: got.matched, pools_skipped: pools.skipped, pools: got.rows };
}

export const defiTvl = defineRoute({
  path: '/v1/defi-tvl',
  summary: 'DeFi TVL by chain, stablecoins, and yield pools, from DefiLlama',
  description:
    'view=chains: every chain of DefiLlama /v2/chains by current TVL (USD), largest first, with total_tvl_usd = Σ tvl over all chains. ' +
    'view=stablecoins: DefiLlama /stablecoins by circulating_usd (circulating.peggedUSD, USD-pegged assets only), with ' +
    'total_circulating_usd = Σ of it and the price DefiLlama gives. view=yields: DefiLlama /pools by TVL, largest first, optionally ' +
    'filtered by chain and project (case-insensitive; a chain or project no pool has is a 404); apy = apy_base + apy_reward, percent a year; ' +
    'a pool whose served fields are missing or malformed (tvlUsd null) is left out and counted in pools_skipped, the others are served. ' +
    'chain and project apply to view=yields only.',
  tag: 'Market context',
  access: 'paid',
  maxStale: 'MARKET_CONTEXT_STALE_S',
  query,
  data,
  example: { view: 'chains', limit: '10' },
  handler: async (req, { sources }) => {
    const { view, limit, chain, project } = req.query;
    if (view !== 'yields' && (chain !== undefined || project !== undefined)) {
      throw new BadRequestError(`query parameters 'chain' and 'project' apply to view=yields only`);
    }
    if (view === 'chains') {
      const got = await sources.defillama.chains();
      return envelope(chainsView(got.data, limit), [got.meta]);
    }
    if (view === 'stablecoins') {
      const got = await sources.defillama.stablecoins();
      return envelope(stablecoinsView(got.data, limit), [got.meta]);
    }
    const got = await sources.defillama.pools();
    return envelope(yieldsView(got.data, limit, chain, project), [got.meta]);
  },
});
