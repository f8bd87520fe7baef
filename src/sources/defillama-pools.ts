// DefiLlama's yields document (GET https://yields.llama.fi/pools, ~11.5 MB, ~16.8k pools) turned into the
// compact table /v1/defi-tvl?view=yields serves from. Pure: run by the parsing worker
// (defillama-pools-worker.ts) and, should a worker not start, on the main thread.
//
// Why a table of columns rather than an array of row objects: the worker's answer is copied to the main
// thread, and copying 16.8k objects there costs about as much event-loop time as parsing the JSON
// (bench/yields-parse.ts measures both). Columns are a few typed arrays (moved, not copied), two short
// lists of names and one string; a request then builds row objects for the ≤ 200 rows it serves.
//
// Only the fields served are validated: a change in a field nobody is served must not break the endpoint.
// Each pool is validated on its own: one the route cannot serve (tvlUsd null, an APY that is not a number)
// is skipped and counted, and the others are served; only a document with no sound pool (its format
// changed) is a failure.
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

/** Every pool, largest TVL first, by columns. */
export interface PoolTable {
  count: number;
  /** Pools of the document left out because a served field was missing or malformed. */
  skipped: number;
  /** Distinct chain names and project slugs; `chainOf[i]` / `projectOf[i]` index them. */
  chainNames: string[];
  projectNames: string[];
  chainOf: Uint32Array;
  projectOf: Uint32Array;
  /** Four per row: tvl_usd, apy, apy_base, apy_reward (NaN = not given; JSON has no NaN). */
  numbers: Float64Array;
  /** Two per row: stablecoin, il_risk (1 true, 0 false, -1 not given). */
  flags: Int8Array;
  /** Each row's pool id then symbol, concatenated: row i's id is text[bounds[2i], bounds[2i+1]), its symbol text[bounds[2i+1], bounds[2i+2]). */
  text: string;
  bounds: Uint32Array;
}

const NUMBERS = 4;
const FLAGS = 2;

const percent = z.number().nullable().optional();

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

const documentSchema = z.object({ status: z.literal('success'), data: z.array(z.unknown()) });

type Pool = z.output<typeof poolSchema>;

/** What parsing the document gave: the table, or why the body is not the documented one. */
export type PoolsOutcome = { ok: true; table: PoolTable } | { ok: false; failure: 'malformed' | 'schema'; message: string };

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
  if (!checked.success) return unexpectedShape(checked.error.issues[0]?.path ?? []);
  const listed = checked.data.data;
  const pools: Pool[] = [];
  let firstBad: PropertyKey[] | null = null;
  for (let i = 0; i < listed.length; i++) {
    const pool = poolSchema.safeParse(listed[i]);
    if (pool.success) pools.push(pool.data);
    else firstBad ??= ['data', i, ...(pool.error.issues[0]?.path ?? [])];
  }
  if (pools.length === 0 && firstBad) return unexpectedShape(firstBad);
  return { ok: true, table: toTable(pools, listed.length - pools.length) };
}

function unexpectedShape(path: readonly PropertyKey[]): PoolsOutcome {
  const where = path.length ? ` at ${path.map(String).join('.')}` : '';
  return { ok: false, failure: 'schema', message: `returned an unexpected response shape${where}` };
}

/** The buffers of a table, to move (not copy) it to another thread. */
export function transferables(t: PoolTable): ArrayBuffer[] {
  return [t.chainOf.buffer, t.projectOf.buffer, t.numbers.buffer, t.flags.buffer, t.bounds.buffer] as ArrayBuffer[];
}

const flag = (v: boolean | null | undefined) => (v === true ? 1 : v === false ? 0 : -1);
const fromFlag = (v: number) => (v === 1 ? true : v === 0 ? false : null);
const fromNumber = (v: number) => (Number.isNaN(v) ? null : v);

function toTable(pools: Pool[], skipped: number): PoolTable {
  // Largest TVL first, once per download: a request only filters and cuts.
  const order = pools.map((_, i) => i).sort((a, b) => pools[b]!.tvlUsd - pools[a]!.tvlUsd);
  const count = pools.length;
  const chainIds = new Map<string, number>();
  const projectIds = new Map<string, number>();
  const idOf = (ids: Map<string, number>, name: string) => ids.get(name) ?? (ids.set(name, ids.size), ids.size - 1);
  const t: PoolTable = {
    count,
    skipped,
    chainNames: [],
    projectNames: [],
    chainOf: new Uint32Array(count),
    projectOf: new Uint32Array(count),
    numbers: new Float64Array(count * NUMBERS),
    flags: new Int8Array(count * FLAGS),
    text: '',
    bounds: new Uint32Array(count * 2 + 1),
  };
  const pieces: string[] = [];
  let at = 0;
  order.forEach((source, row) => {
    const p = pools[source]!;
    t.chainOf[row] = idOf(chainIds, p.chain);
    t.projectOf[row] = idOf(projectIds, p.project);
    t.numbers.set([p.tvlUsd, p.apy ?? NaN, p.apyBase ?? NaN, p.apyReward ?? NaN], row * NUMBERS);
    t.flags.set([flag(p.stablecoin), p.ilRisk === 'yes' ? 1 : p.ilRisk === 'no' ? 0 : -1], row * FLAGS);
    t.bounds[row * 2] = at;
    at += p.pool.length;
    t.bounds[row * 2 + 1] = at;
    at += p.symbol.length;
    pieces.push(p.pool, p.symbol);
  });
  t.bounds[count * 2] = at;
  t.text = pieces.join('');
  t.chainNames = [...chainIds.keys()];
  t.projectNames = [...projectIds.keys()];
  return t;
}

/** Row `i` of the table as served. */
export function poolRow(t: PoolTable, i: number): PoolRow {
  const n = i * NUMBERS;
  const f = i * FLAGS;
  return {
    pool: t.text.slice(t.bounds[i * 2], t.bounds[i * 2 + 1]),
    project: t.projectNames[t.projectOf[i]!]!,
    chain: t.chainNames[t.chainOf[i]!]!,
    symbol: t.text.slice(t.bounds[i * 2 + 1], t.bounds[i * 2 + 2]),
    tvl_usd: t.numbers[n]!,
    apy: fromNumber(t.numbers[n + 1]!),
    apy_base: fromNumber(t.numbers[n + 2]!),
    apy_reward: fromNumber(t.numbers[n + 3]!),
    stablecoin: fromFlag(t.flags[f]!),
    il_risk: fromFlag(t.flags[f + 1]!),
  };
}

/** Indices of the names equal to `wanted`, case-insensitively (empty when none is). */
function namesLike(names: string[], wanted: string): Set<number> {
  const w = wanted.toLowerCase();
  const hits = new Set<number>();
  names.forEach((name, i) => name.toLowerCase() === w && hits.add(i));
  return hits;
}

export interface PoolSelection {
  /** False when a chain (project) filter was given and no pool has that chain (project). */
  chainKnown: boolean;
  projectKnown: boolean;
  /** Pools passing the filters. */
  matched: number;
  /** The first `limit` of them, largest TVL first. */
  rows: PoolRow[];
}

/** The pools on `chain` of `project` (each optional, case-insensitive), largest TVL first, the first `limit` as rows. */
export function selectPools(t: PoolTable, filter: { chain?: string; project?: string }, limit: number): PoolSelection {
  const chains = filter.chain === undefined ? null : namesLike(t.chainNames, filter.chain);
  const projects = filter.project === undefined ? null : namesLike(t.projectNames, filter.project);
  const rows: PoolRow[] = [];
  let matched = 0;
  for (let i = 0; i < t.count; i++) {
    if (chains && !chains.has(t.chainOf[i]!)) continue;
    if (projects && !projects.has(t.projectOf[i]!)) continue;
    if (matched++ < limit) rows.push(poolRow(t, i));
  }
  return { chainKnown: chains === null || chains.size > 0, projectKnown: projects === null || projects.size > 0, matched, rows };
}
