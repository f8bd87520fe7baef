// npm run bench:metrics: what Prometheus metrics cost on the cached path. Two servers
// as `npm start` runs them (compiled, node dist/server.js), metrics off and on (METRICS_TOKEN), every
// provider faked; short loads alternate between them (off, on, on, off, ...) so the machine's drifting
// speed falls on both alike, and the server's CPU time per request (from /proc) is compared round by
// round. Prints the medians and the median of the paired differences, per path. (Measured one after the
// other, as `npm run bench` measures its targets, the second of two identical servers often costs 20 %
// more or less than the first on a shared machine: far more than what is measured here.)
// BENCH_ROUNDS (10), BENCH_ROUND_MS (2000) and BENCH_CONNECTIONS (32) tune it.
import { cpuMicros, startServer } from './lib.ts';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { Pool } from 'undici';
import { startRecordedWorld } from '../test/fakes/recorded-world.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const KEY = { 'x-api-key': 'bench-key' };
const TARGETS: [string, Record<string, string>][] = [
  ['/v1/price?symbol=BTC', KEY],
  ['/v1/sentiment', {}],
];

interface Server {
  url: string;
  proc: ChildProcess;
}

/** Loads `path` for `ms`; the server's CPU µs per request and req/s. */
async function load(server: Server, path: string, headers: Record<string, string>, ms: number): Promise<{ cpu: number; rps: number }> {
  const pool = new Pool(server.url, { connections: CONNECTIONS, pipelining: 1 });
  let requests = 0;
  const cpuBefore = cpuMicros(server.proc.pid)!;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < start + ms) {
        const res = await pool.request({ method: 'GET', path, headers });
        await res.body.arrayBuffer();
        if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
        requests++;
      }
    }),
  );
  const elapsed = performance.now() - start;
  const cpu = cpuMicros(server.proc.pid)! - cpuBefore;
  await pool.close();
  return { cpu: cpu / requests, rps: requests / (elapsed / 1000) };
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;

console.log('building (npm run build) ...');
execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
const world = await startRecordedWorld();
const env = {
  ...world.env,
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  FREE_RATE_LIMIT: '1000000',
  KEY_RATE_LIMIT: '1000000',
  API_KEYS: 'bench-key',
  CACHE_TTL_PRICE_S: '3600',
  CACHE_TTL_SENTIMENT_S: '3600',
};
const started: Server[] = [];
process.on('exit', () => started.forEach((s) => s.proc.kill()));
const servers = { off: await startServer(['dist/server.js'], env), on: undefined as unknown as Server };
started.push(servers.off);
servers.on = await startServer(['dist/server.js'], { ...env, METRICS_TOKEN: 'bench-metrics-token-0123456789' });
started.push(servers.on);
try {
  for (const [path, headers] of TARGETS) {
    // Warm-up: until the JIT has settled, the first seconds cost several times more.
    for (const s of [servers.off, servers.on]) await load(s, path, headers, 3000);
    const rounds = { off: [] as { cpu: number; rps: number }[], on: [] as { cpu: number; rps: number }[] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const k of i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) rounds[k].push(await load(servers[k], path, headers, ROUND_MS));
    }
    const diffs = rounds.on.map((r, i) => r.cpu - rounds.off[i]!.cpu);
    const row = (k: 'off' | 'on') =>
      `metrics ${k.padEnd(3)}  CPU µs/req median ${median(rounds[k].map((r) => r.cpu)).toFixed(1).padStart(6)}  req/s median ${median(rounds[k].map((r) => r.rps)).toFixed(0).padStart(6)}   rounds: ${rounds[k].map((r) => r.cpu.toFixed(0)).join(' ')}`;
    console.log(`\n${path} (${ROUNDS} rounds of ${ROUND_MS / 1000} s each, ${CONNECTIONS} connections)\n  ${row('off')}\n  ${row('on')}`);
    console.log(`  on − off, paired by round: median ${median(diffs).toFixed(1)} µs/req (${diffs.map((d) => d.toFixed(1)).join(' ')})`);
  }
} finally {
  servers.off.proc.kill();
  servers.on.proc.kill();
  await world.stop();
}
