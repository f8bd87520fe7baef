// npm run bench:scale-out — several instances as one service, for the response cache. Three instances of
// the compiled server (`node dist/server.js`, as `npm start` runs it) against the recorded fake world, a
// round-robin client in this process, and two setups: three on one redis-server (REDIS_URL: L1 in each
// process, L2 and single-flight in Redis), and three without Redis (L1 alone, each its own).
// Prints, for each setup:
//   - cold traffic: bursts of concurrent identical requests for keys never asked before (token-risk checks of
//     fresh addresses, GoPlus being the keyless provider limited to ~30 calls a minute), spread over the
//     three: upstream calls per key (target 1);
//   - hot keys across their expiries: the exchange answers after BENCH_UPSTREAM_MS (200 ms, as a real one may); a
//     steady round-robin load (BENCH_HOT_RPS requests a second, sent on time whatever the answers) on one key cached
//     BENCH_TTL_S seconds, for several TTLs, on /v1/price (served while
//     refreshed: PRICE_STALE_S) and on /v1/orderbook (ORDERBOOK_STALE_S=0: every expiry waits for the exchange):
//     upstream calls per expiry (target 1, across the instances with Redis), p99 and the answers over 50 ms
//     (target with staleness: p99 ≤ 5 ms, none over 50 ms);
//   - the cached path's cost: req/s, p50/p99 and server CPU µs per request (the three processes' utime +
//     stime from /proc/<pid>/stat) on an answer cached for an hour, measured in the order A B B A so that a
//     machine getting busier or quieter weighs on both alike. An L1 hit never asks Redis, so the two setups
//     should cost the same, and the shared rate limit counts in each instance (exchanging counts with Redis every
//     25 ms): the ratio of CPU per request with Redis to without (target ≤ 1.20);
//   - throughput per core: one instance alone, then two instances behind one Redis, each measured alone in
//     the order A B B A: requests per second per instance and CPU per request.
// Both setups run at once (six processes, each with its own DATA_DIR), each started only once its ledger
// database is open and, with Redis, its connection is up. BENCH_INSTANCES, BENCH_DURATION_MS,
// BENCH_CONNECTIONS, BENCH_TTL_S, BENCH_TTLS, BENCH_UPSTREAM_MS, BENCH_HOT_RPS, BENCH_COLD_KEYS, BENCH_COLD_BURST and BENCH_LOG_LEVEL tune it.
// `runScaleOutBench()` is exported so that `npm run bench` can run it too.
import { cpuMicros, freePort } from './lib.ts';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { FakeReply } from '../test/fakes/fake-upstream.ts';
import { RECORDED_ROUTES, startRecordedWorld, type RecordedWorld } from '../test/fakes/recorded-world.ts';
import { startRedis } from '../test/servers/redis.ts';

export interface ScaleOutOptions {
  /** Run `npm run build` first (default true). */
  build?: boolean;
  instances?: number;
  /** Length of each cached-path measurement, ms. */
  durationMs?: number;
  connections?: number;
  /** TTL of the cached-traffic run, s, and how many TTLs it lasts. */
  ttlS?: number;
  ttls?: number;
  /** How long the fake exchange takes to answer the hot keys, ms, and how many requests a second each hot key gets. */
  upstreamMs?: number;
  hotRps?: number;
  /** Cold keys per setup, and concurrent requests per key. */
  coldKeys?: number;
  coldBurst?: number;
  logLevel?: string;
  /** Where lines go (default console.log). */
  print?: (line: string) => void;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  /** CPU of all instances per request, µs; null where /proc is missing. */
  cpuPerRequest: number | null;
  errors: number;
  /** The runs a mean was made of. */
  runs?: LoadResult[];
}

/** One hot key requested continuously across its expiries. */
export interface HotKeyResult {
  path: string;
  /** Its route's staleness setting, as the setup set it. */
  staleness: string;
  seconds: number;
  calls: number;
  /** Distinct fetch times the answers showed: each a load, one per expiry. */
  loads: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  /** Answers that took over SLOW_MS: they waited for the exchange (or met a hiccup of the machine). */
  slow: number;
  errors: number;
}

export interface SetupResult {
  setup: 'redis' | 'l1-only';
  cold: { keys: number; burst: number; calls: number; callsPerKey: number; errors: number };
  hot: HotKeyResult[];
  cached: LoadResult;
}

const EVM_PREFIX = '0x4e7e15a6b83718ba79674cc4ce09f7d4a6';
const GOPLUS_PATH = '/api/v1/token_security/8453';
const TICKER_PATH = '/api/v3/ticker/24hr';
const DEPTH_PATH = '/api/v3/depth';
/** The hot keys: one route served while refreshed, one that waits at every expiry; the exchange path that answers each. */
const HOT_KEYS = [
  { path: '/v1/price?symbol=BTC', upstream: TICKER_PATH, staleness: 'PRICE_STALE_S=10' },
  { path: '/v1/orderbook?symbol=BTC', upstream: DEPTH_PATH, staleness: 'ORDERBOOK_STALE_S=0' },
];

interface Instance {
  url: string;
  proc: ChildProcess;
  pool: Pool;
}

async function startInstance(env: Record<string, string>, connections: number): Promise<Instance> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['dist/server.js'], { env: { ...process.env, ENV_FILE: '', ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  // Ready once its ledger database is open (PGlite's start-up takes seconds of CPU: not measured as requests')
  // and, with REDIS_URL, Redis is connected (before that a lookup goes on without it, as it should).
  for (let i = 0; i < 600; i++) {
    try {
      const { backends } = ((await (await fetch(url + '/v1/status')).json()) as { data: { backends: Record<string, { since: string | null } | null> } }).data;
      if (backends.database?.since && (!env.REDIS_URL || backends.redis?.since)) return { url, proc, pool: new Pool(url, { connections, pipelining: 1 }) };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill();
  throw new Error('dist/server.js did not start');
}


const totalCpu = (instances: Instance[]): number | null => {
  const each = instances.map((i) => cpuMicros(i.proc.pid));
  return each.some((c) => c === null) ? null : (each as number[]).reduce((a, b) => a + b, 0);
};

/** A client that sends each request to the next instance in turn, as a round-robin load balancer would. */
class RoundRobin {
  private next = 0;
  constructor(readonly instances: Instance[]) {}

  /** The status; `onBody` is given the answer's text (read anyway). */
  async get(path: string, headers: Record<string, string> = {}, onBody?: (text: string) => void): Promise<number> {
    const target = this.instances[this.next++ % this.instances.length]!;
    const res = await target.pool.request({ method: 'GET', path, headers });
    if (onBody) onBody(await res.body.text());
    else await res.body.arrayBuffer();
    return res.statusCode;
  }
}

/** `connections` loops sending `path` until `until` (performance.now() ms): latencies and errors. */
async function steady(
  client: RoundRobin,
  path: string,
  headers: Record<string, string>,
  connections: number,
  until: number,
  onBody?: (text: string) => void,
): Promise<{ latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const status = await client.get(path, headers, onBody).catch(() => 0);
        if (status !== 200) errors++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, errors };
}

/**
 * Requests of `path` sent at `rps` per second until `until` (performance.now() ms), each sent on time whether or not
 * the ones before have been answered (an open loop, as independent clients send): latencies and errors. Unlike
 * `steady`, a slow answer does not hold back the next request, so every request arriving during a wait meets it.
 */
async function paced(
  client: RoundRobin,
  path: string,
  headers: Record<string, string>,
  rps: number,
  until: number,
  onBody?: (text: string) => void,
): Promise<{ latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const sent: Promise<void>[] = [];
  let due = performance.now();
  while (due < until) {
    const t0 = performance.now();
    sent.push(
      client.get(path, headers, onBody).then(
        (status) => {
          latencies.push(performance.now() - t0);
          if (status !== 200) errors++;
        },
        () => void errors++,
      ),
    );
    due += 1000 / rps;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(sent);
  return { latencies, errors };
}

/** An answer slower than this (ten times the p99 target) waited for the exchange, or for a hiccup of the machine. */
const SLOW_MS = 50;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function measureCached(client: RoundRobin, path: string, headers: Record<string, string>, connections: number, durationMs: number): Promise<LoadResult> {
  await client.get(path, headers); // loaded once
  await steady(client, path, headers, connections, performance.now() + 1000); // warm-up
  const cpuBefore = totalCpu(client.instances);
  const start = performance.now();
  const { latencies, errors } = await steady(client, path, headers, connections, start + durationMs);
  const elapsed = performance.now() - start;
  const cpuAfter = totalCpu(client.instances);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return {
    rps: latencies.length / (elapsed / 1000),
    p50: pct(50),
    p99: pct(99),
    cpuPerRequest: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / latencies.length,
    errors,
  };
}

interface Setup {
  setup: SetupResult['setup'];
  instances: Instance[];
  client: RoundRobin;
}

type Settings = Required<Omit<ScaleOutOptions, 'print' | 'build'>>;

async function startSetup(setup: Setup['setup'], world: RecordedWorld, redisUrl: string | undefined, o: Settings): Promise<Setup> {
  const base = {
    ...world.env,
    LOG_LEVEL: o.logLevel,
    RISK_RATE_LIMIT: '1000000',
    FREE_RATE_LIMIT: '1000000',
    KEY_RATE_LIMIT: '1000000',
    API_KEYS: 'bench-key',
    CACHE_TTL_TOKEN_RISK_S: '3600',
    CACHE_TTL_PRICE_S: String(o.ttlS),
    CACHE_TTL_ORDERBOOK_S: String(o.ttlS),
    PRICE_STALE_S: '10',
    ORDERBOOK_STALE_S: '0',
    CACHE_TTL_SENTIMENT_S: '3600',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  };
  const instances: Instance[] = [];
  for (let i = 0; i < o.instances; i++) instances.push(await startInstance({ ...base, DATA_DIR: mkdtempSync(join(tmpdir(), 'mg-scale-out-')) }, o.connections));
  return { setup, instances, client: new RoundRobin(instances) };
}

async function stopSetup(s: Setup): Promise<void> {
  for (const i of s.instances) {
    await i.pool.close().catch(() => {});
    i.proc.kill();
  }
}

/** Cold keys, then hot keys across several TTLs: the upstream calls they cause, and how long the hot keys' answers took. */
async function upstreamCalls(s: Setup, world: RecordedWorld, o: Settings, salt: number): Promise<Pick<SetupResult, 'cold' | 'hot'>> {
  const goplus = world.fakes.goplus!;
  const binance = world.fakes.binance!;

  // Cold: each key asked `coldBurst` times at once, spread over the instances; never asked before.
  const goplusBefore = goplus.calls(GOPLUS_PATH).length;
  let coldErrors = 0;
  for (let k = 0; k < o.coldKeys; k++) {
    const address = `${EVM_PREFIX}${(salt * 100_000 + k).toString(16).padStart(6, '0')}`;
    const statuses = await Promise.all(Array.from({ length: o.coldBurst }, () => s.client.get(`/risk/v1/token-risk?chain=base&address=${address}`).catch(() => 0)));
    coldErrors += statuses.filter((st) => st !== 200).length;
  }
  const coldCalls = goplus.calls(GOPLUS_PATH).length - goplusBefore;

  // Hot keys: each loaded once, then a steady load for `ttls` TTLs; the upstream calls, and the loads the answers show.
  const hot: HotKeyResult[] = [];
  for (const key of HOT_KEYS) {
    const headers = { 'x-api-key': 'bench-key' };
    const fetched = new Set<string>();
    const onBody = (text: string) => {
      const at = (JSON.parse(text) as { meta?: { sources?: { fetched_at: string }[] } }).meta?.sources?.[0]?.fetched_at;
      if (at) fetched.add(at);
    };
    // Loaded on every instance first (the fetch times it shows are not loads of the run).
    for (let i = 0; i < s.instances.length; i++) await s.client.get(key.path, headers, onBody);
    const loadedBefore = new Set(fetched);
    const before = binance.calls(key.upstream).length;
    const start = performance.now();
    const run = await paced(s.client, key.path, headers, o.hotRps, start + o.ttls * o.ttlS * 1000, onBody);
    const seconds = (performance.now() - start) / 1000;
    const sorted = run.latencies.sort((a, b) => a - b);
    hot.push({
      path: key.path,
      staleness: key.staleness,
      seconds,
      calls: binance.calls(key.upstream).length - before,
      loads: [...fetched].filter((at) => !loadedBefore.has(at)).length,
      requests: sorted.length,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? NaN,
      slow: sorted.filter((ms) => ms > SLOW_MS).length,
      errors: run.errors,
    });
  }
  return { cold: { keys: o.coldKeys, burst: o.coldBurst, calls: coldCalls, callsPerKey: coldCalls / o.coldKeys, errors: coldErrors }, hot };
}

const mean = (runs: LoadResult[]): LoadResult => {
  const avg = (f: (r: LoadResult) => number) => runs.reduce((sum, r) => sum + f(r), 0) / runs.length;
  return {
    rps: avg((r) => r.rps),
    p50: avg((r) => r.p50),
    p99: avg((r) => r.p99),
    cpuPerRequest: runs.some((r) => r.cpuPerRequest === null) ? null : avg((r) => r.cpuPerRequest!),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    runs,
  };
};

export async function runScaleOutBench(options: ScaleOutOptions = {}): Promise<SetupResult[]> {
  const print = options.print ?? ((line: string) => console.log(line));
  const o: Settings = {
    instances: options.instances ?? Number(process.env.BENCH_INSTANCES ?? 3),
    durationMs: options.durationMs ?? Number(process.env.BENCH_DURATION_MS ?? 4000),
    connections: options.connections ?? Number(process.env.BENCH_CONNECTIONS ?? 32),
    ttlS: options.ttlS ?? Number(process.env.BENCH_TTL_S ?? 2),
    ttls: options.ttls ?? Number(process.env.BENCH_TTLS ?? 4),
    upstreamMs: options.upstreamMs ?? Number(process.env.BENCH_UPSTREAM_MS ?? 200),
    hotRps: options.hotRps ?? Number(process.env.BENCH_HOT_RPS ?? 200),
    coldKeys: options.coldKeys ?? Number(process.env.BENCH_COLD_KEYS ?? 20),
    coldBurst: options.coldBurst ?? Number(process.env.BENCH_COLD_BURST ?? 30),
    logLevel: options.logLevel ?? process.env.BENCH_LOG_LEVEL ?? 'warn',
  };
  if (options.build ?? true) {
    print('building (npm run build) ...');
    execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  }
  const world = await startRecordedWorld();
  // The hot keys' exchange answers after BENCH_UPSTREAM_MS, as a real one may: what a caller waits for when it waits.
  const delayed = (path: string) => world.fakes.binance!.route(`GET ${path}`, { ...(RECORDED_ROUTES.binance![`GET ${path}`] as FakeReply), delayMs: o.upstreamMs });
  delayed(TICKER_PATH);
  delayed(DEPTH_PATH);
  const redis = await startRedis();
  const setups: Setup[] = [];
  const results: SetupResult[] = [];
  let perCoreResult: { single: LoadResult; pair: LoadResult } | undefined;
  try {
    setups.push(await startSetup('redis', world, redis.url, o));
    setups.push(await startSetup('l1-only', world, undefined, o));
    const calls = [await upstreamCalls(setups[0]!, world, o, 1), await upstreamCalls(setups[1]!, world, o, 2)];
    // The cached path in the order A B B A, so that a machine that gets busier or quieter during the run
    // weighs on both setups alike; each figure is the mean of its two runs.
    const runs: LoadResult[][] = [[], []];
    for (const which of [0, 1, 1, 0]) runs[which]!.push(await measureCached(setups[which]!.client, '/v1/sentiment', {}, o.connections, o.durationMs));
    for (const i of [0, 1]) results.push({ setup: setups[i]!.setup, ...calls[i]!, cached: mean(runs[i]!) });
    // Throughput per core: one instance alone (no Redis) and two behind one Redis, A B B A.
    const single = new RoundRobin(setups[1]!.instances.slice(0, 1));
    const pair = new RoundRobin(setups[0]!.instances.slice(0, 2));
    const perCore: LoadResult[][] = [[], []];
    for (const which of [0, 1, 1, 0]) perCore[which]!.push(await measureCached(which === 0 ? single : pair, '/v1/sentiment', {}, o.connections, o.durationMs));
    perCoreResult = { single: mean(perCore[0]!), pair: mean(perCore[1]!) };
  } finally {
    for (const s of setups) await stopSetup(s);
    await redis.stop();
    await world.stop();
  }

  print(`\n${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}; ${o.instances} instances per setup, round-robin client, ${o.connections} connections; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  print(`\ncold traffic: ${o.coldKeys} keys never asked before (token-risk of a fresh address), each asked ${o.coldBurst} times at once over the instances`);
  print('setup'.padEnd(36) + 'upstream calls'.padStart(16) + 'per key'.padStart(10) + '  (target 1)' + 'errors'.padStart(8));
  for (const r of results) print(label(r).padEnd(36) + String(r.cold.calls).padStart(16) + r.cold.callsPerKey.toFixed(2).padStart(10) + ''.padEnd(12) + String(r.cold.errors).padStart(8));
  print(
    `\nhot keys across their expiries: cached ${o.ttlS} s, the exchange answering after ${o.upstreamMs} ms, ${o.hotRps} requests a second round-robin (open loop) ` +
      `for ${o.ttls} TTLs; loads = fetch times the answers showed (one per expiry, per instance without Redis); slow = answers over ${SLOW_MS} ms`,
  );
  print('setup'.padEnd(36) + 'key (staleness)'.padEnd(46) + 'calls'.padStart(6) + 'loads'.padStart(6) + 'calls/load'.padStart(11) + 'req'.padStart(7) + 'p50 ms'.padStart(8) + 'p99 ms'.padStart(8) + 'max ms'.padStart(8) + 'slow'.padStart(6) + 'errors'.padStart(7));
  for (const r of results) {
    for (const h of r.hot) {
      const target = h.staleness.endsWith('=0')
        ? '  (no staleness: each expiry waits)'
        : `  target 1 call per load${r.setup === 'redis' ? ' across the instances' : ''}, p99 ≤ 5 ms, none slow: ${h.calls === h.loads && h.p99 <= 5 && h.slow === 0 ? 'met' : 'NOT met'}`;
      print(
        label(r).padEnd(36) +
          `${h.path} (${h.staleness})`.padEnd(46) +
          String(h.calls).padStart(6) +
          String(h.loads).padStart(6) +
          (h.calls / Math.max(1, h.loads)).toFixed(2).padStart(11) +
          String(h.requests).padStart(7) +
          h.p50.toFixed(2).padStart(8) +
          h.p99.toFixed(2).padStart(8) +
          h.max.toFixed(1).padStart(8) +
          String(h.slow).padStart(6) +
          String(h.errors).padStart(7) +
          target,
      );
    }
  }
  print(`\nthe cached path (L1 hits): GET /v1/sentiment, 2 × ${o.durationMs / 1000} s per setup (order A B B A, means); CPU: the servers' together, per request`);
  print('setup'.padEnd(36) + 'req/s'.padStart(10) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'CPU µs/req'.padStart(12) + 'errors'.padStart(8) + '   each run: req/s, CPU µs/req');
  const cpu = (c: LoadResult) => (c.cpuPerRequest === null ? '-' : c.cpuPerRequest.toFixed(1));
  for (const r of results) {
    const c = r.cached;
    const each = (c.runs ?? []).map((run) => `${run.rps.toFixed(0)}, ${cpu(run)}`).join(' | ');
    print(label(r).padEnd(36) + c.rps.toFixed(0).padStart(10) + c.p50.toFixed(2).padStart(9) + c.p99.toFixed(2).padStart(9) + cpu(c).padStart(12) + String(c.errors).padStart(8) + `   ${each}`);
  }
  const [withRedis, alone] = results;
  if (withRedis?.cached.cpuPerRequest && alone?.cached.cpuPerRequest) {
    const ratio = withRedis.cached.cpuPerRequest / alone.cached.cpuPerRequest;
    print(
      `\nwith Redis vs without on the cached path: req/s ×${(withRedis.cached.rps / alone.cached.rps).toFixed(2)}, ` +
        `CPU per request ×${ratio.toFixed(2)} (target ≤ 1.20: ${ratio <= 1.2 ? 'met' : 'NOT met'}; per run: ${(withRedis.cached.runs ?? []).map((r, i) => (r.cpuPerRequest! / alone.cached.runs![i]!.cpuPerRequest!).toFixed(2)).join(', ')})`,
    );
  }
  if (perCoreResult) {
    const { single, pair } = perCoreResult;
    print(`\nthroughput per core: GET /v1/sentiment, 2 × ${o.durationMs / 1000} s each (order A B B A, means); the load generator shares the machine's ${cpus().length} CPUs`);
    print('setup'.padEnd(36) + 'req/s'.padStart(10) + 'req/s per instance'.padStart(20) + 'CPU µs/req'.padStart(12) + 'p99 ms'.padStart(9) + 'errors'.padStart(8));
    const row = (name: string, r: LoadResult, n: number) =>
      print(name.padEnd(36) + r.rps.toFixed(0).padStart(10) + (r.rps / n).toFixed(0).padStart(20) + cpu(r).padStart(12) + r.p99.toFixed(2).padStart(9) + String(r.errors).padStart(8));
    row('one instance (no Redis)', single, 1);
    row('two instances, one Redis', pair, 2);
    if (single.cpuPerRequest && pair.cpuPerRequest) print(`two instances on Redis vs one alone: CPU per request ×${(pair.cpuPerRequest / single.cpuPerRequest).toFixed(2)}`);
  }
  return results;
}

const label = (r: SetupResult) => (r.setup === 'redis' ? 'Redis (L1 + L2, single-flight)' : 'no Redis (L1 alone in each)');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runScaleOutBench();
}
