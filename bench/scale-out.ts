// npm run bench:scale-out — several instances as one service, for the response cache. Three instances of
// the compiled server (`node dist/server.js`, as `npm start` runs it) against the recorded fake world, a
// round-robin client in this process, and two setups: three on one redis-server (REDIS_URL: L1 in each
// process, L2 and single-flight in Redis), and three without Redis (L1 alone, each its own).
// Prints, for each setup:
//   - cold traffic: bursts of concurrent identical requests for keys never asked before (token-risk checks of
//     fresh addresses, GoPlus being the keyless provider limited to ~30 calls a minute), spread over the
//     three: upstream calls per key (target 1);
//   - cached traffic across TTLs: a steady round-robin load on one key cached BENCH_TTL_S seconds for
//     several TTLs: upstream calls per key per TTL (target 1);
//   - the cached path's cost: req/s, p50/p99 and server CPU µs per request (the three processes' utime +
//     stime from /proc/<pid>/stat) on an answer cached for an hour, measured in the order A B B A so that a
//     machine getting busier or quieter weighs on both alike. An L1 hit never asks Redis, so the two setups
//     should cost the same; this measures that they do.
// Both setups run at once (six processes, each with its own DATA_DIR), each started only once its ledger
// database is open and, with Redis, its connection is up. BENCH_INSTANCES, BENCH_DURATION_MS,
// BENCH_CONNECTIONS, BENCH_TTL_S, BENCH_TTLS, BENCH_COLD_KEYS, BENCH_COLD_BURST and BENCH_LOG_LEVEL tune it.
// `runScaleOutBench()` is exported so that `npm run bench` can run it too.
import { cpuMicros, freePort } from './lib.ts';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startRecordedWorld, type RecordedWorld } from '../test/fakes/recorded-world.ts';
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

export interface SetupResult {
  setup: 'redis' | 'l1-only';
  cold: { keys: number; burst: number; calls: number; callsPerKey: number; errors: number };
  ttl: { ttlS: number; seconds: number; calls: number; callsPerTtl: number; errors: number };
  cached: LoadResult;
}

const EVM_PREFIX = '0x4e7e15a6b83718ba79674cc4ce09f7d4a6';
const GOPLUS_PATH = '/api/v1/token_security/8453';
const TICKER_PATH = '/api/v3/ticker/24hr';

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

  async get(path: string, headers: Record<string, string> = {}): Promise<number> {
    const target = this.instances[this.next++ % this.instances.length]!;
    const res = await target.pool.request({ method: 'GET', path, headers });
    await res.body.arrayBuffer();
    return res.statusCode;
  }
}

/** `connections` loops sending `path` until `until` (performance.now() ms): latencies and errors. */
async function steady(client: RoundRobin, path: string, headers: Record<string, string>, connections: number, until: number): Promise<{ latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const status = await client.get(path, headers).catch(() => 0);
        if (status !== 200) errors++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, errors };
}

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

/** Cold keys, then one key across several TTLs: the upstream calls they cause. */
async function upstreamCalls(s: Setup, world: RecordedWorld, o: Settings, salt: number): Promise<Pick<SetupResult, 'cold' | 'ttl'>> {
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

  // Cached across TTLs: a steady load on one key for `ttls` TTLs.
  const tickerBefore = binance.calls(TICKER_PATH).length;
  const ttlStart = performance.now();
  const ttlRun = await steady(s.client, '/v1/price?symbol=BTC', { 'x-api-key': 'bench-key' }, Math.min(o.connections, 8), ttlStart + o.ttls * o.ttlS * 1000);
  const seconds = (performance.now() - ttlStart) / 1000;
  const ttlCalls = binance.calls(TICKER_PATH).length - tickerBefore;
  return {
    cold: { keys: o.coldKeys, burst: o.coldBurst, calls: coldCalls, callsPerKey: coldCalls / o.coldKeys, errors: coldErrors },
    ttl: { ttlS: o.ttlS, seconds, calls: ttlCalls, callsPerTtl: ttlCalls / (seconds / o.ttlS), errors: ttlRun.errors },
  };
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
    coldKeys: options.coldKeys ?? Number(process.env.BENCH_COLD_KEYS ?? 20),
    coldBurst: options.coldBurst ?? Number(process.env.BENCH_COLD_BURST ?? 30),
    logLevel: options.logLevel ?? process.env.BENCH_LOG_LEVEL ?? 'warn',
  };
  if (options.build ?? true) {
    print('building (npm run build) ...');
    execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  }
  const world = await startRecordedWorld();
  const redis = await startRedis();
  const setups: Setup[] = [];
  const results: SetupResult[] = [];
  try {
    setups.push(await startSetup('redis', world, redis.url, o));
    setups.push(await startSetup('l1-only', world, undefined, o));
    const calls = [await upstreamCalls(setups[0]!, world, o, 1), await upstreamCalls(setups[1]!, world, o, 2)];
    // The cached path in the order A B B A, so that a machine that gets busier or quieter during the run
    // weighs on both setups alike; each figure is the mean of its two runs.
    const runs: LoadResult[][] = [[], []];
    for (const which of [0, 1, 1, 0]) runs[which]!.push(await measureCached(setups[which]!.client, '/v1/sentiment', {}, o.connections, o.durationMs));
    for (const i of [0, 1]) results.push({ setup: setups[i]!.setup, ...calls[i]!, cached: mean(runs[i]!) });
  } finally {
    for (const s of setups) await stopSetup(s);
    await redis.stop();
    await world.stop();
  }

  print(`\n${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}; ${o.instances} instances per setup, round-robin client, ${o.connections} connections; load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  print(`\ncold traffic: ${o.coldKeys} keys never asked before (token-risk of a fresh address), each asked ${o.coldBurst} times at once over the instances`);
  print('setup'.padEnd(36) + 'upstream calls'.padStart(16) + 'per key'.padStart(10) + '  (target 1)' + 'errors'.padStart(8));
  for (const r of results) print(label(r).padEnd(36) + String(r.cold.calls).padStart(16) + r.cold.callsPerKey.toFixed(2).padStart(10) + ''.padEnd(12) + String(r.cold.errors).padStart(8));
  print(`\ncached traffic across TTLs: /v1/price?symbol=BTC cached ${o.ttlS} s, a steady round-robin load for ${o.ttls} TTLs`);
  print('setup'.padEnd(36) + 'upstream calls'.padStart(16) + 'per TTL'.padStart(10) + '  (target 1)' + 'errors'.padStart(8));
  for (const r of results) print(label(r).padEnd(36) + String(r.ttl.calls).padStart(16) + r.ttl.callsPerTtl.toFixed(2).padStart(10) + ''.padEnd(12) + String(r.ttl.errors).padStart(8));
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
    print(`\nRedis L2 vs L1 alone on the cached path: req/s ×${(withRedis.cached.rps / alone.cached.rps).toFixed(2)}, CPU per request ×${(withRedis.cached.cpuPerRequest / alone.cached.cpuPerRequest).toFixed(2)}`);
  }
  return results;
}

const label = (r: SetupResult) => (r.setup === 'redis' ? 'Redis (L1 + L2, single-flight)' : 'no Redis (L1 alone in each)');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runScaleOutBench();
}
