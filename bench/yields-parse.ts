// node --import tsx bench/yields-parse.ts: what DefiLlama's ~11.5 MB yields document costs the event loop.
//
// The document is SYNTHETIC, for timing only: the recorded pool row (test/fixtures/upstream/
// defillama__yields_pools.json) repeated 16,800 times with varied ids, values, chains and projects, plus
// the nullable fields DefiLlama's OpenAPI example lists, to the size of the live answer (11.5 MB,
// 16,772 pools on 2026-09-14 per the recording's source note). It is never served as data.
//
// It prints, in ms (median of RUNS after a warm-up):
//   - JSON.parse alone, on this thread;
//   - parsePoolsText (JSON.parse + validation of the kept fields + compaction + sort), on this thread;
//   - JSON.parse + validation of every documented field, on this thread (what validating all would cost);
//   - the longest event-loop stall while the same work runs on a worker thread (runOffThread);
//   - the longest event-loop stall and the latency of one cold GET /v1/defi-tvl?view=yields through the
//     app against a DefiLlama stand-in on 127.0.0.1 serving the document from another process
//     (download, decode, hand-off, parse), and the latency of a cached request.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { parsePoolsText, type PoolsOutcome } from '../src/sources/defillama-pools.ts';
import { runOffThread, workerModule } from '../src/lib/off-thread.ts';
import { recorded } from '../test/fixtures.ts';

const POOLS = 16_800;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHAINS = ['Ethereum', 'Arbitrum', 'Base', 'Solana', 'BSC', 'Polygon', 'Optimism', 'Avalanche', 'Tron', 'Sui'];

function syntheticDocument(): string {
  const [row] = recorded('defillama__yields_pools.json').data;
  const data = Array.from({ length: POOLS }, (_, i) => ({
    ...row,
    pool: `${i.toString(16).padStart(8, '0')}-c668-4682-b9f9-296708a3dd90`,
    chain: CHAINS[i % CHAINS.length],
    project: `project-${i % 900}`,
    symbol: `TOKEN${i}-WETH`,
    tvlUsd: (i * 7919) % 1_000_000_000,
    apy: (i % 1000) / 37,
    apyBase: (i % 500) / 41,
    apyReward: i % 3 === 0 ? null : (i % 200) / 43,
    rewardTokens: i % 3 === 0 ? null : ['0x' + 'a'.repeat(40)],
    underlyingTokens: ['0x' + 'b'.repeat(40), '0x' + 'c'.repeat(40)],
    il7d: null,
    apyBase7d: null,
    volumeUsd1d: null,
    volumeUsd7d: null,
  }));
  return JSON.stringify({ status: 'success', data });
}

/** Every field of a pool as DefiLlama's OpenAPI documents it (for the comparison only). */
const n = z.number().nullable().optional();
const fullPool = z.object({
  chain: z.string(), project: z.string(), symbol: z.string(), tvlUsd: z.number(), apyBase: n, apyReward: n, apy: n,
  rewardTokens: z.array(z.string()).nullable().optional(), pool: z.string(), apyPct1D: n, apyPct7D: n, apyPct30D: n,
  stablecoin: z.boolean(), ilRisk: z.string(), exposure: z.string(),
  predictions: z.object({ predictedClass: z.string().nullable(), predictedProbability: n, binnedConfidence: n }).nullable().optional(),
  poolMeta: z.string().nullable(), mu: n, sigma: n, count: n, outlier: z.boolean(), underlyingTokens: z.array(z.string()).nullable().optional(),
  il7d: n, apyBase7d: n, apyMean30d: n, volumeUsd1d: n, volumeUsd7d: n, apyBaseInception: n,
});
const fullDocument = z.object({ status: z.literal('success'), data: z.array(fullPool) });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function timeSync(f: () => unknown): number {
  f(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** The longest gap between 1 ms ticks while `work` runs: how long the event loop could not serve anyone. */
async function longestStall(work: () => Promise<unknown>): Promise<{ stallMs: number; totalMs: number }> {
  let last = performance.now();
  let worst = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  await work();
  const totalMs = performance.now() - t0;
  clearInterval(ticker);
  return { stallMs: Math.max(worst, performance.now() - last), totalMs };
}

async function stallRuns(work: () => Promise<unknown>) {
  await work(); // warm-up
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await longestStall(work));
  return { stallMs: median(runs.map((r) => r.stallMs)), totalMs: median(runs.map((r) => r.totalMs)) };
}

const text = syntheticDocument();
const check = parsePoolsText(text);
if (!check.ok || check.table.count !== POOLS) throw new Error('the synthetic document does not parse');
console.log(`synthetic yields document: ${(text.length / 1e6).toFixed(1)} MB, ${POOLS} pools; median of ${RUNS} runs, ms`);

const rows: [string, string][] = [];
rows.push(['JSON.parse, this thread (blocks the event loop)', timeSync(() => JSON.parse(text)).toFixed(1)]);
rows.push(['parsePoolsText (parse + kept fields + sort), this thread', timeSync(() => parsePoolsText(text)).toFixed(1)]);
rows.push(['JSON.parse + every documented field, this thread', timeSync(() => fullDocument.parse(JSON.parse(text))).toFixed(1)]);

const worker = workerModule('defillama-pools-worker', new URL('../src/sources/', import.meta.url).href);
const off = await stallRuns(() => runOffThread<string, PoolsOutcome>(worker, text));
rows.push(['worker thread: longest event-loop stall', off.stallMs.toFixed(1)]);
rows.push(['worker thread: time to the answer (worker start included)', off.totalMs.toFixed(1)]);

// The stand-in runs in its own process, so that serving 12 MB does not count against this event loop.
const dir = mkdtempSync(join(tmpdir(), 'yields-bench-'));
writeFileSync(join(dir, 'pools.json'), text);
const server = spawn(
  process.execPath,
  ['-e', `const b=require('fs').readFileSync(process.argv[1]);require('http').createServer((q,r)=>{r.writeHead(200,{'content-type':'application/json'});r.end(b)}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`, join(dir, 'pools.json')],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const port = await new Promise<string>((resolve) => server.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
const app = await buildApp(loadConfig({ LOG_LEVEL: 'warn', DEFILLAMA_YIELDS_BASE_URL: `http://127.0.0.1:${port}`, API_KEYS: 'bench', KEY_RATE_LIMIT: '100000' }), {
  logStream: { write: () => true } as never,
});
await app.ready();
const viaApp = await stallRuns(async () => {
  app.services.cache.clear();
  const res = await app.inject({ url: '/v1/defi-tvl?view=yields&limit=5', headers: { 'x-api-key': 'bench' } });
  if (res.statusCode !== 200) throw new Error(`GET /v1/defi-tvl answered ${res.statusCode}: ${res.body}`);
});
rows.push(['app, cold GET /v1/defi-tvl?view=yields: longest event-loop stall', viaApp.stallMs.toFixed(1)]);
rows.push(['app, cold GET /v1/defi-tvl?view=yields: latency', viaApp.totalMs.toFixed(1)]);
const cached = await stallRuns(() => app.inject({ url: '/v1/defi-tvl?view=yields&limit=200&chain=Arbitrum', headers: { 'x-api-key': 'bench' } }));
rows.push(['app, cached GET ...&limit=200&chain=Arbitrum: latency', cached.totalMs.toFixed(1)]);
await app.close();
server.kill();
rmSync(dir, { recursive: true, force: true });

const width = Math.max(...rows.map(([k]) => k.length));
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v.padStart(8)}`);
