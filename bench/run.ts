// npm run bench: cached marketgate endpoints against a bare Fastify hello world, in the same run,
// each server in its own process, load from this process over loopback. Prints req/s, latency
// percentiles, the ratio to hello world, and how many upstream calls each burst caused.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Pool } from 'undici';
import { FakeUpstream } from '../test/fakes/fake-upstream.ts';
import { recorded } from '../test/fixtures.ts';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startServer(script: string, env: Record<string, string>): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url + '/')).status > 0) return { url, proc };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  proc.kill();
  throw new Error(`${script} did not start`);
}

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(name: string, origin: string, path: string, headers: Record<string, string> = {}): Promise<Result> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const run = async (until: number, record: boolean) => {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const t0 = performance.now();
          const res = await pool.request({ method: 'GET', path, headers });
          await res.body.dump();
          if (res.statusCode !== 200) errors++;
          if (record) latencies.push(performance.now() - t0);
        }
      }),
    );
  };
  await run(performance.now() + 1000, false); // warm-up
  const start = performance.now();
  await run(start + DURATION_MS, true);
  const elapsed = performance.now() - start;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return { name, rps: latencies.length / (elapsed / 1000), p50: pct(50), p99: pct(99), errors };
}

const fake = await new FakeUpstream().start();
fake.route('GET /api/v1/token_security/8453', { body: recorded('goplus__token_security_evm.json') });
fake.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });

const hello = await startServer('bench/hello.ts', {});
process.on('exit', () => hello.proc.kill());
const app = await startServer('src/server.ts', {
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  GOPLUS_BASE_URL: fake.url,
  BINANCE_SPOT_BASE_URL: fake.url,
  RISK_RATE_LIMIT: '1000000',
  KEY_RATE_LIMIT: '1000000',
  API_KEYS: 'bench-key',
  CACHE_TTL_TOKEN_RISK_S: '3600',
  CACHE_TTL_PRICE_S: '3600',
});

const results: Result[] = [];
try {
  results.push(await load('bare Fastify hello world', hello.url, '/'));
  results.push(await load('GET /risk/health', app.url, '/risk/health'));
  results.push(await load('GET /risk/v1/token-risk (cached, free)', app.url, `/risk/v1/token-risk?chain=base&address=${EVM}`));
  results.push(await load('GET /v1/price (cached, API key)', app.url, '/v1/price?symbol=BTC', { 'x-api-key': 'bench-key' }));
} finally {
  hello.proc.kill();
  app.proc.kill();
}

const base = results[0]!.rps;
console.log(`\n${CONNECTIONS} connections, ${DURATION_MS / 1000} s per target, log level ${process.env.BENCH_LOG_LEVEL ?? 'warn'}\n`);
console.log('target'.padEnd(42) + 'req/s'.padStart(9) + 'ratio'.padStart(8) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'errors'.padStart(8));
for (const r of results) {
  console.log(
    r.name.padEnd(42) + r.rps.toFixed(0).padStart(9) + (r.rps / base).toFixed(2).padStart(8) + r.p50.toFixed(2).padStart(9) + r.p99.toFixed(2).padStart(9) + String(r.errors).padStart(8),
  );
}
console.log(`\nupstream calls: goplus ${fake.calls('/api/v1/token_security/8453').length}, binance ${fake.calls('/api/v3/ticker/24hr').length} (one per cached burst is the target)`);
await fake.stop();
