// npm run bench: cached marketgate endpoints against bare Fastify baselines, in the same run, each
// server in its own process, load from this process over loopback. marketgate runs as `npm start`
// runs it (compiled JavaScript, `node dist/server.js`), not under a development runner. Prints req/s,
// latency percentiles, the ratio to its baseline, and how many upstream calls each cached burst caused.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startRecordedWorld } from '../test/fakes/recorded-world.ts';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'warn';
const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startServer(args: string[], env: Record<string, string>): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url + '/')).status > 0) return { url, proc };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill();
  throw new Error(`${args.join(' ')} did not start`);
}

/** CPU time (user + system) a process has used so far, µs; from /proc (Linux), null elsewhere. */
function cpuMicros(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return null;
  }
}

interface Result {
  name: string;
  /** Server CPU per request, µs (less sensitive than req/s to what else the machine runs). */
  cpuPerRequest: number | null;
  baseline: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  bytes: number;
}

async function load(name: string, baseline: string, server: { url: string; proc: ChildProcess }, path: string, headers: Record<string, string> = {}): Promise<Result> {
  const origin = server.url;
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let bytes = 0;
  const run = async (until: number, record: boolean) => {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const t0 = performance.now();
          const res = await pool.request({ method: 'GET', path, headers });
          const body = await res.body.arrayBuffer();
          bytes = body.byteLength;
          if (res.statusCode !== 200) errors++;
          if (record) latencies.push(performance.now() - t0);
        }
      }),
    );
  };
  await run(performance.now() + 1000, false); // warm-up
  const cpuBefore = cpuMicros(server.proc.pid);
  const start = performance.now();
  await run(start + DURATION_MS, true);
  const elapsed = performance.now() - start;
  const cpuAfter = cpuMicros(server.proc.pid);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  const cpuPerRequest = cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / latencies.length;
  return { name, baseline, cpuPerRequest, rps: latencies.length / (elapsed / 1000), p50: pct(50), p99: pct(99), errors, bytes };
}

console.log('building (npm run build) ...');
execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });

const world = await startRecordedWorld();
const app = await startServer(['dist/server.js'], {
  ...world.env,
  LOG_LEVEL,
  RISK_RATE_LIMIT: '1000000',
  FREE_RATE_LIMIT: '1000000',
  KEY_RATE_LIMIT: '1000000',
  API_KEYS: 'bench-key',
  CACHE_TTL_TOKEN_RISK_S: '3600',
  CACHE_TTL_PRICE_S: '3600',
  CACHE_TTL_SENTIMENT_S: '3600',
});

// The reference route sends exactly the bytes of a cached token-risk answer.
const tokenRiskPath = `/risk/v1/token-risk?chain=base&address=${EVM}`;
const sample = Buffer.from(await (await fetch(app.url + tokenRiskPath)).arrayBuffer());
const sameBytesFile = join(mkdtempSync(join(tmpdir(), 'mg-bench-')), 'token-risk.json');
writeFileSync(sameBytesFile, sample);
const hello = await startServer(['bench/hello.mjs'], { BENCH_SAME_BYTES_FILE: sameBytesFile });
const stop = () => {
  hello.proc.kill();
  app.proc.kill();
};
process.on('exit', stop);

const HELLO = 'bare Fastify hello world';
const SAME = 'bare Fastify, same bytes';
const FLOOR = 'bare Fastify + required headers + zod';
const results: Result[] = [];
try {
  results.push(await load(HELLO, HELLO, hello, '/'));
  results.push(await load(SAME, HELLO, hello, '/same-bytes'));
  results.push(await load(FLOOR, HELLO, hello, '/floor?symbol=BTC'));
  results.push(await load('GET /health (free, no upstream)', HELLO, app, '/health'));
  results.push(await load('GET /v1/sentiment (cached, free)', HELLO, app, '/v1/sentiment'));
  results.push(await load('GET /v1/price (cached, API key)', HELLO, app, '/v1/price?symbol=BTC', { 'x-api-key': 'bench-key' }));
  results.push(await load('GET /risk/v1/token-risk (cached, free)', SAME, app, tokenRiskPath));
} finally {
  stop();
}

const rpsOf = (name: string) => results.find((r) => r.name === name)!.rps;
console.log(`\n${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}; ${CONNECTIONS} connections, ${DURATION_MS / 1000} s per target, log level ${LOG_LEVEL}\n`);
console.log('target'.padEnd(42) + 'req/s'.padStart(9) + '  ratio (to)'.padEnd(30) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'CPU µs/req'.padStart(12) + 'bytes'.padStart(8) + 'errors'.padStart(8));
for (const r of results) {
  const ratio = `${(r.rps / rpsOf(r.baseline)).toFixed(2)} (${r.baseline === HELLO ? 'hello world' : 'same bytes'})`;
  console.log(
    r.name.padEnd(42) + r.rps.toFixed(0).padStart(9) + `  ${ratio}`.padEnd(30) + r.p50.toFixed(2).padStart(9) + r.p99.toFixed(2).padStart(9) + (r.cpuPerRequest === null ? '-' : r.cpuPerRequest.toFixed(1)).padStart(12) + String(r.bytes).padStart(8) + String(r.errors).padStart(8),
  );
}
const calls = (provider: string, path: string) => world.fakes[provider]!.calls(path).length;
console.log(
  `\nupstream calls during the run: goplus ${calls('goplus', '/api/v1/token_security/8453')}, binance ${calls('binance', '/api/v3/ticker/24hr')}, alternative.me ${calls('alternative.me', '/fng/')} (one per cached burst is the target; the first token-risk call above made the goplus one)`,
);
await world.stop();
