// The cached path against its real floor. marketgate runs as `npm start` runs it (compiled, `node
// dist/server.js`) against the recorded fake world; each target's answer (status, headers, bytes) is
// captured once and served by bench/floor.mjs, bare Fastify sending those same bytes with the same
// headers. Per round, each target and its floor get the same fixed number of requests over the same
// connections, in eight alternating slices (A B B A …: the two measured close together in time, so a
// machine that speeds up or slows down weighs on both alike), and the figure is the server's CPU per
// request from /proc: steadier on a shared machine than req/s. The ratio is floor CPU / marketgate CPU
// (1.00: marketgate costs nothing beyond sending the bytes), paired per round; the bench prints the median
// over the rounds and each round's. Each round starts both servers afresh (see there). p99 is the median
// of the slices' p99 latencies.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RECORDED_ROUTES, startRecordedWorld } from '../test/fakes/recorded-world.ts';
import { cpus } from 'node:os';
import { load, machine, median, pinToCpu, startServer, type LoadResult, type Spawned } from './lib.ts';

const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';
/** A cold burst: this many identical requests at once on a key nobody asked for yet. */
const BURST = 100;

export interface CachedPathOptions {
  requests: number;
  connections: number;
  rounds: number;
  logLevel: string;
  /** Each server on the last CPU and the load generator on the first (BENCH_PIN=0: no pinning). */
  pin: boolean;
}

export interface Target {
  name: string;
  path: string;
  headers?: Record<string, string>;
  /** The upstream request that answers it, to count calls per cold burst: [fake, path]. */
  upstream: [string, string];
  /** The floor ratio and p99 it must reach. */
  goal: number;
}

export const TARGETS: Target[] = [
  { name: 'GET /v1/sentiment (cached, free)', path: '/v1/sentiment', upstream: ['alternative.me', '/fng/'], goal: 0.8 },
  { name: 'GET /v1/price (cached, API key)', path: '/v1/price?symbol=BTC', headers: { 'x-api-key': 'bench-key' }, upstream: ['binance', '/api/v3/ticker/24hr'], goal: 0.8 },
  { name: 'GET /risk/v1/token-risk (cached, free)', path: `/risk/v1/token-risk?chain=base&address=${EVM}`, upstream: ['goplus', '/api/v1/token_security/8453'], goal: 0.8 },
  // The chain's RPC unreachable (RPC_URL_ETHEREUM a closed port, CHAIN_DOWN_ENV): onchain null, served again while its breaker is open (issue 34 §5).
  {
    name: 'GET /risk/v1/token-risk, chain RPC down (cached, free)',
    path: `/risk/v1/token-risk?chain=ethereum&address=${EVM}`,
    upstream: ['goplus', '/api/v1/token_security/1'],
    goal: 0.8,
  },
];

/** Ethereum's RPC at a port nothing listens on: the chain-down target's chain. */
export const CHAIN_DOWN_ENV = { RPC_URL_ETHEREUM: 'http://127.0.0.1:9' };

/** The recorded world, with GoPlus answering for Ethereum too (the recorded token under any address) for the chain-down target. */
export async function cachedPathWorld() {
  const world = await startRecordedWorld();
  world.fakes.goplus!.route('GET /api/v1/token_security/1', RECORDED_ROUTES.goplus!['GET /api/v1/token_security/8453']!);
  return world;
}
const P99_GOAL_MS = 5;
/** Slices per target and round (even: as many of each server). */
const CHUNKS = 8;
/** Unmeasured requests per target and server before the rounds. */
const WARMUP = 40_000;

/** One figure of several loads: requests summed, CPU and rate per request over all of them, p99 the worst slice's median. */
function combine(parts: LoadResult[]): LoadResult {
  const requests = parts.reduce((n, p) => n + p.requests, 0);
  const weighted = (of: (p: LoadResult) => number | null) =>
    parts.every((p) => of(p) !== null) ? parts.reduce((n, p) => n + of(p)! * p.requests, 0) / requests : null;
  const seconds = parts.reduce((n, p) => n + p.requests / p.rps, 0);
  return {
    requests,
    rps: requests / seconds,
    p50: median(parts.map((p) => p.p50)),
    p99: median(parts.map((p) => p.p99)),
    cpuPerRequest: weighted((p) => p.cpuPerRequest),
    mainCpuPerRequest: weighted((p) => p.mainCpuPerRequest),
    errors: parts.reduce((n, p) => n + p.errors, 0),
    bytes: parts[0]!.bytes,
  };
}

async function databaseOpen(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const status = (await (await fetch(`${url}/v1/status`)).json()) as { data?: { backends?: { database?: { status: string; since: string | null } } } };
    const db = status.data?.backends?.database;
    if (db?.status === 'ok' && db.since !== null) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the database did not open within 60 s');
}

/**
 * The compiled server (`node ARGS dist/server.js`, or `server`) on the recorded world's upstreams with the bench's settings
 * (limits out of the way, the bench key, hour-long TTLs), once its embedded database is open: initdb on a
 * first start takes seconds of CPU in the background, which must not count against the first target.
 */
export async function startBenchApp(worldEnv: Record<string, string>, dataDir: string, logLevel: string, nodeArgs: string[] = [], server = 'dist/server.js'): Promise<Spawned> {
  const app = await startServer(
    [...nodeArgs, server],
    {
      ...worldEnv,
      DATA_DIR: dataDir,
      LOG_LEVEL: logLevel,
      RISK_RATE_LIMIT: '1000000',
      FREE_RATE_LIMIT: '1000000',
      KEY_RATE_LIMIT: '1000000',
      API_KEYS: 'bench-key',
      CACHE_TTL_TOKEN_RISK_S: '3600',
      CACHE_TTL_TOKEN_ONCHAIN_S: '3600',
      CACHE_TTL_PRICE_S: '3600',
      CACHE_TTL_SENTIMENT_S: '3600',
    },
    '/health',
  );
  await databaseOpen(app.url).catch(async (err) => {
    await app.stop();
    throw err;
  });
  return app;
}

/** Each target's answer as the floor serves it: status, headers and body (base64), in a JSON file for bench/floor.mjs. */
export async function captureFloorFile(app: Spawned, targets: Target[]): Promise<string> {
  const captured = [];
  for (const t of targets) {
    const res = await fetch(app.url + t.path, { headers: t.headers });
    captured.push({ path: t.path, status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()).toString('base64') });
  }
  const file = join(mkdtempSync(join(tmpdir(), 'mg-bench-')), 'floor.json');
  writeFileSync(file, JSON.stringify(captured));
  return file;
}

export async function runCachedPath(opts: CachedPathOptions): Promise<void> {
  const world = await cachedPathWorld();
  const dataDir = mkdtempSync(join(tmpdir(), 'mg-bench-data-'));
  const startApp = () => startBenchApp({ ...world.env, ...CHAIN_DOWN_ENV }, dataDir, opts.logLevel);
  let app: Spawned | undefined;
  let floor: Spawned | undefined;
  try {
    app = await startApp();
    // One cold burst per target: identical requests at once, then the upstream calls they made.
    const bursts: string[] = [];
    for (const t of TARGETS) {
      const [fake, upstreamPath] = t.upstream;
      const before = world.fakes[fake]!.calls(upstreamPath).length;
      const answers = await Promise.all(Array.from({ length: BURST }, () => fetch(app!.url + t.path, { headers: t.headers })));
      const statuses = new Set(answers.map((r) => r.status));
      await Promise.all(answers.map((r) => r.arrayBuffer()));
      bursts.push(`${fake} ${world.fakes[fake]!.calls(upstreamPath).length - before} (statuses ${[...statuses].join(',')})`);
    }
    // What the floor sends: each target's answer as served from the cache.
    const floorFile = await captureFloorFile(app, TARGETS);
    // Not measured: this first process created the embedded database (initdb, migrations), whose worker
    // goes on working for a while after it opens, and served the cold bursts.
    await app.stop();
    app = undefined;

    // Pinned: the server (all its threads) on a CPU of its own, the load generator on another, so neither
    // waits for the other's core; the same for both servers. Its CPU time is read as before.
    const serverCpu = cpus().length - 1;
    const pinned = opts.pin && serverCpu > 0 && pinToCpu(process.pid, 0);
    const rounds: { target: Target; app: LoadResult; floor: LoadResult }[][] = [];
    for (let round = 0; round < opts.rounds; round++) {
      // Each round on new processes of both servers: a process's own layout in memory moves its cost per
      // request by a few µs for its whole life (the same build measured in two processes side by side
      // differs by that much), so rounds on the same two processes would repeat one draw of it.
      app ??= await startApp();
      floor = await startServer(['bench/floor.mjs'], { BENCH_FLOOR_FILE: floorFile });
      if (pinned) for (const server of [app, floor]) pinToCpu(server.proc.pid, serverCpu, true);
      // Both servers warmed on every target first: measured in steady state, after V8 has compiled the hot
      // code (its optimising compiler runs on threads of the process, whose CPU the bench reads).
      for (const t of TARGETS) for (const server of [app, floor]) await load(server, t.path, { requests: WARMUP, connections: opts.connections, headers: t.headers, warmup: 0 });
      const results = [];
      for (const t of TARGETS) {
        // The round's requests in CHUNKS slices, alternating A B B A … (floor first in even rounds), each
        // server's CPU summed over its slices: the two are measured close together in time, so a machine
        // that speeds up or slows down during the round weighs on both alike.
        const parts = { app: [] as LoadResult[], floor: [] as LoadResult[] };
        const order = Array.from({ length: CHUNKS }, (_, i) => ((i + (i >> 1) + round) % 2 === 0 ? 'floor' : 'app') as 'floor' | 'app');
        for (const which of order) {
          const server = which === 'app' ? app : floor;
          parts[which].push(await load(server, t.path, { requests: Math.ceil((2 * opts.requests) / CHUNKS), connections: opts.connections, headers: t.headers, warmup: 500 }));
        }
        results.push({ target: t, app: combine(parts.app), floor: combine(parts.floor) });
        process.stdout.write('.');
      }
      rounds.push(results);
      await floor.stop();
      await app.stop();
      floor = app = undefined;
    }
    process.stdout.write('\n');

    console.log(
      `\nCached path: ${machine()}; ${opts.requests} requests per target per round at ${opts.connections} connections, ${opts.rounds} rounds, log level ${opts.logLevel}; ` +
        (pinned ? `servers pinned to CPU ${serverCpu}, the load generator to CPU 0` : 'not pinned'),
    );
    console.log('ratio = floor CPU µs/req ÷ marketgate CPU µs/req, paired per round (1.00 = nothing beyond the floor)');
    console.log("off-loop = of marketgate's CPU µs/req, what its other threads spent (V8's compiler and GC helpers, the database worker): median and worst round\n");
    console.log(
      'target'.padEnd(40) +
        'CPU µs/req'.padStart(11) +
        'off-loop med/max'.padStart(17) +
        'floor µs'.padStart(10) +
        'ratio (median; rounds)'.padStart(30) +
        'req/s'.padStart(8) +
        'p99 ms'.padStart(8) +
        'floor p99'.padStart(10) +
        'bytes'.padStart(7) +
        'errors'.padStart(7) +
        '  goal',
    );
    for (let i = 0; i < TARGETS.length; i++) {
      const t = TARGETS[i]!;
      const per = rounds.map((r) => r[i]!);
      const ratios = per.map((p) => (p.floor.cpuPerRequest ?? NaN) / (p.app.cpuPerRequest ?? NaN));
      const ratio = median(ratios);
      const offLoop = per.map((p) => (p.app.cpuPerRequest ?? NaN) - (p.app.mainCpuPerRequest ?? NaN));
      const p99 = median(per.map((p) => p.app.p99));
      const met = ratio >= t.goal && p99 <= P99_GOAL_MS;
      console.log(
        t.name.padEnd(40) +
          median(per.map((p) => p.app.cpuPerRequest ?? NaN)).toFixed(1).padStart(11) +
          `${median(offLoop).toFixed(1)}/${Math.max(...offLoop).toFixed(1)}`.padStart(17) +
          median(per.map((p) => p.floor.cpuPerRequest ?? NaN)).toFixed(1).padStart(10) +
          `  ${ratio.toFixed(2)}; ${ratios.map((r) => r.toFixed(2)).join(' ')}`.padStart(30) +
          median(per.map((p) => p.app.rps)).toFixed(0).padStart(8) +
          p99.toFixed(2).padStart(8) +
          median(per.map((p) => p.floor.p99)).toFixed(2).padStart(10) +
          String(per[0]!.app.bytes).padStart(7) +
          String(per.reduce((n, p) => n + p.app.errors, 0)).padStart(7) +
          `  ≥ ${t.goal.toFixed(2)}, p99 ≤ ${P99_GOAL_MS} ms: ${met ? 'met' : 'NOT met'}`,
      );
    }
    console.log(`\nupstream calls per cold burst of ${BURST} identical requests (target 1 each): ${bursts.join('; ')}`);
  } finally {
    // The bench's other parts (and the servers they spawn, which inherit it) run on every CPU again.
    if (opts.pin) pinToCpu(process.pid, `0-${cpus().length - 1}`);
    await floor?.stop();
    await app?.stop();
    await world.stop();
  }
}
