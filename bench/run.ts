// npm run bench: builds the server (as `npm start` runs it: compiled JavaScript) and measures
//   cached   the cached path against bare Fastify sending the same bytes and headers (cached-path.ts);
// BENCH_ONLY=cached,... picks parts. Each part prints its figures and whether its target is met.
import { execFileSync } from 'node:child_process';
import { runCachedPath } from './cached-path.ts';

const env = process.env;
const PARTS: Record<string, () => Promise<void>> = {
  cached: () =>
    runCachedPath({
      requests: Number(env.BENCH_REQUESTS ?? 60_000),
      connections: Number(env.BENCH_CONNECTIONS ?? 32),
      rounds: Number(env.BENCH_ROUNDS ?? 3),
      logLevel: env.BENCH_LOG_LEVEL ?? 'warn',
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
