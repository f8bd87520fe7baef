// DefiLlama's yields document (GET https://yields.llama.fi/pools, ~11.5 MB, ~16.8k pools) turned into the
// compact rows /v1/defi-tvl?view=yields serves. Pure: used by the parsing worker
// (defillama-pools-worker.ts) and, should a worker not start, on the main thread.
//
// Only the fields kept are validated: checking every field of 16.8k pools doubles the cost for data
// nobody is served (measured in bench/yields-parse.ts).
import { z } from 'zod';

/** One pool as /v1/defi-tvl serves it. */
export interface PoolRow {
  /** DefiLlama's pool id (a UUID). */
  pool: string;
  /** DefiLlama project slug (lido, aave-v3). */
  project: string;
  /** DefiLlama chain name (Ethereum, Arbitrum). */
  chain: string;
  symbol: string;
  tvl_usd: number;
  /** Percent a year: apy_base + apy_reward. */
  apy: number | null;
  apy_base: number | null;
  apy_reward: number | null;
  stablecoin: boolean | null;
  /** DefiLlama's ilRisk "yes" → true, "no" → false, anything else → null. */
  il_risk: boolean | null;
}

const percent = z.number().nullable().optional().transform((v) => v ?? null);

const poolSchema = z.object({
  pool: z.string(),
  project: z.string(),
  chain: z.string(),
  symbol: z.string(),
  tvlUsd: z.number(),
  apy: percent,
  apyBase: percent,
  apyReward: percent,
  stablecoin: z.boolean().nullable().optional(),
  ilRisk: z.string().nullable().optional(),
});

const documentSchema = z.object({ status: z.literal('success'), data: z.array(poolSchema) });

/** What parsing the document gave: the rows, largest TVL first, or why the body is not the documented one. */
export type PoolsOutcome = { ok: true; pools: PoolRow[] } | { ok: false; failure: 'malformed' | 'schema'; message: string };

/** Parses and validates the raw body; never throws. */
export function parsePoolsText(text: string): PoolsOutcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const html = /^\s*</.test(text.slice(0, 64));
    return { ok: false, failure: 'malformed', message: html ? 'returned HTML instead of JSON' : `returned a body that is not valid JSON${text.length === 0 ? ' (empty)' : ''}` };
  }
  const checked = documentSchema.safeParse(body);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue && issue.path.length ? ` at ${issue.path.join('.')}` : '';
    return { ok: false, failure: 'schema', message: `returned an unexpected response shape${where}` };
  }
  const pools = checked.data.data.map(
    (p): PoolRow => ({
      pool: p.pool,
      project: p.project,
      chain: p.chain,
      symbol: p.symbol,
      tvl_usd: p.tvlUsd,
      apy: p.apy,
      apy_base: p.apyBase,
      apy_reward: p.apyReward,
      stablecoin: p.stablecoin ?? null,
      il_risk: p.ilRisk === 'yes' ? true : p.ilRisk === 'no' ? false : null,
    }),
  );
  // Sorted once here, so a request only filters and cuts.
  pools.sort((a, b) => b.tvl_usd - a.tvl_usd);
  return { ok: true, pools };
}
