// npm run bench: builds the server (as `npm start` runs it: compiled JavaScript) and measures
//   cached     the cached path against bare Fastify sending the same bytes and headers (cached-path.ts);
//   startup    spawn of the compiled server → its first /health answer (startup.ts);
//   paid       what an x402 `exact` payment adds to a call, from Base and from Solana (one facilitator, the same delays), with the
//              route's work started during verify and without (paid-path.ts);
//   repeat     a repeat buyer's calls in a row: keyed, batch-paid (vouchers) and exact-paid, latency, server CPU, exchanges,
//              facilitator calls and transactions (repeat.ts; BENCH_REPEAT_CALLS, BENCH_REPEAT_EXACT_CALLS);
//   scale-out  three instances on one Redis: upstream calls per key per TTL, and the cached path with L2 vs L1 alone (scale-out.ts);
//   client     what the typed client (marketgate/client) adds to a keyed call of a cached route beyond plain fetch (client.ts).
//   memory     what one client can make it hold: pipelined requests never read, distinct /v1/ohlcv variants (memory.ts);
//   edge       attackers on other loopback addresses (idle connections, pipelined floods) against a probe's fresh connections (edge.ts).
// BENCH_ONLY=cached,paid,... picks parts. Each part prints its figures and whether its target is met.
import { execFileSync } from 'node:child_process';
import { runCachedPath } from './cached-path.ts';
import { benchClient, printClient } from './client.ts';
import { runEdgeBench } from './edge.ts';
import { runMemoryBench } from './memory.ts';
import { benchPaidPath, printPaidPath } from './paid-path.ts';
import { benchRepeat, printRepeat, repeatOptions } from './repeat.ts';
import { runScaleOutBench } from './scale-out.ts';
import { benchStartup, printStartup } from './startup.ts';

const env = process.env;
const PARTS: Record<string, () => Promise<void>> = {
  cached: () =>
    runCachedPath({
      requests: Number(env.BENCH_REQUESTS ?? 60_000),
      connections: Number(env.BENCH_CONNECTIONS ?? 32),
      rounds: Number(env.BENCH_ROUNDS ?? 7),
      logLevel: env.BENCH_LOG_LEVEL ?? 'warn',
      pin: env.BENCH_PIN !== '0',
    }),
  startup: async () => printStartup(await benchStartup()),
  paid: async () => {
    const options = { calls: Number(env.BENCH_CALLS ?? 20), verifyMs: 150, settleMs: 1500, upstreamMs: 200 };
    printPaidPath(options, await benchPaidPath(options));
  },
  repeat: async () => {
    const options = repeatOptions(env);
    printRepeat(options, await benchRepeat(options));
  },
  'scale-out': async () => void (await runScaleOutBench({ build: false })),
  client: async () => printClient(await benchClient(Number(env.BENCH_CLIENT_CALLS ?? 5000))),
  memory: () => runMemoryBench(),
  edge: () =>
    runEdgeBench({
      seconds: Number(env.BENCH_EDGE_SECONDS ?? 60),
      idleRate: Number(env.BENCH_EDGE_IDLE_RATE ?? 20),
      hold: Number(env.BENCH_EDGE_HOLD ?? 5000),
      pipelined: Number(env.BENCH_EDGE_PIPELINED ?? 300),
      pressureMb: Number(env.BENCH_EDGE_PRESSURE_MB ?? 1000),
    }),
};

const only = env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean) ?? Object.keys(PARTS);
const unknown = only.filter((p) => !(p in PARTS));
if (unknown.length) {
  console.error(`BENCH_ONLY: unknown part(s) ${unknown.join(', ')}; the parts are ${Object.keys(PARTS).join(', ')}`);
  process.exit(2);
}

console.log('building (npm run build) ...');
execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
for (const part of only) {
  console.log(`\n=== ${part} ===`);
  await PARTS[part]!();
}
