// npm run bench:profile: where marketgate's CPU on the cached path goes beyond its floor. The compiled
// server and bench/floor.mjs (bare Fastify sending the same bytes and headers, see cached-path.ts) run
// with --perf-basic-prof, pinned to one CPU, warmed on every target; then each serves the same requests
// while Linux `perf record` samples it. Samples are grouped by where the code lives and printed per 1,000
// requests, marketgate beside its floor, then the symbols that differ most. This is what the cached-path
// figures cannot say: whether a gap is in marketgate's own code, in Fastify's or Node's, or in V8 itself
// (megamorphic property loads, runtime calls) — the last two are paid in shared code, for the shapes the
// whole process has sent through it.
//
// Needs `perf` (Debian: linux-perf) and permission to sample the servers (root, or a low
// kernel.perf_event_paranoid). One process of each is a single draw: a process's cost per request varies by
// a few µs for its whole life (see cached-path.ts), so compare runs, not one run's last digit.
//
// BENCH_PROFILE_REQUESTS (default 60000 per target), BENCH_PROFILE_TARGETS (indexes into cached-path's
// targets, e.g. 1 for price only; default all), BENCH_PROFILE_TOP (symbols listed, default 25).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedPathWorld, captureFloorFile, CHAIN_DOWN_ENV, startBenchApp, TARGETS } from './cached-path.ts';
import { load, pinToCpu, startServer, type Spawned } from './lib.ts';

const env = process.env;
const REQUESTS = Number(env.BENCH_PROFILE_REQUESTS ?? 60_000);
const TOP = Number(env.BENCH_PROFILE_TOP ?? 25);
const targets = env.BENCH_PROFILE_TARGETS ? env.BENCH_PROFILE_TARGETS.split(',').map((i) => TARGETS[Number(i)]!) : TARGETS;
const PERF_ARGS = ['--perf-basic-prof'];

/** Where a sampled symbol's code lives. */
function placeOf(symbol: string, kernel: boolean): string {
  if (kernel) return 'kernel (TCP, syscalls)';
  if (symbol.startsWith('JS:')) {
    if (symbol.includes('/dist/') || symbol.includes('bench/floor.mjs')) return 'JS: marketgate (or the floor handler)';
    if (/node_modules\/(fastify|find-my-way|fast-querystring|avvio|light-my-request)\//.test(symbol)) return 'JS: Fastify and its router';
    if (symbol.includes('node_modules/')) return 'JS: other packages';
    if (symbol.includes(' node:')) return 'JS: Node (http, streams, events)';
    return 'JS: other';
  }
  if (symbol.startsWith('RegExp:')) return 'regular expressions';
  if (symbol.startsWith('Builtins_')) return 'V8 builtins (incl. megamorphic ICs)';
  if (symbol.includes('v8::internal::')) return 'V8 runtime (C++: slow paths, GC, compiler)';
  return 'native: Node C++, llhttp, libuv, libc';
}

/** Samples per symbol, from `perf report` of one recording. */
function samplesBySymbol(file: string): Map<string, { samples: number; kernel: boolean }> {
  const report = execFileSync('perf', ['report', '-i', file, '--no-children', '--sort', 'symbol', '--stdio', '-g', 'none', '-F', 'sample,symbol'], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const bySymbol = new Map<string, { samples: number; kernel: boolean }>();
  for (const line of report.split('\n')) {
    const m = /^\s*(\d+)\s+\[(.)\]\s+(.*?)(?:\s+-\s+-)?\s*$/.exec(line);
    if (!m) continue;
    // A JIT frame's tier marker (* optimised, ^ baseline, ~ interpreted) varies between processes: not part of the name.
    const symbol = m[3]!.replace(/^JS:[*^~]?/, 'JS:');
    const entry = bySymbol.get(symbol) ?? { samples: 0, kernel: m[2] === 'k' };
    entry.samples += Number(m[1]);
    bySymbol.set(symbol, entry);
  }
  return bySymbol;
}

/** Records `server` while it answers `REQUESTS` of each target; the samples by symbol. */
async function record(server: Spawned, dir: string, name: string) {
  const file = join(dir, `${name}.data`);
  const perf = spawn('perf', ['record', '-F', '999', '-o', file, '-p', String(server.proc.pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  for (const t of targets) await load(server, t.path, { requests: REQUESTS, connections: 32, headers: t.headers, warmup: 0 });
  perf.kill('SIGINT');
  await new Promise((r) => perf.once('exit', r));
  return samplesBySymbol(file);
}

try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('bench:profile needs Linux perf (Debian: apt-get install linux-perf)');
  process.exit(2);
}
execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
const world = await cachedPathWorld();
const dir = mkdtempSync(join(tmpdir(), 'mg-profile-'));
const dataDir = mkdtempSync(join(tmpdir(), 'mg-bench-data-'));
let app: Spawned | undefined;
let floor: Spawned | undefined;
const cpu = cpus().length - 1;
try {
  // A first process creates the database and answers each target once (cold), for the floor's bytes.
  app = await startBenchApp({ ...world.env, ...CHAIN_DOWN_ENV }, dataDir, 'warn');
  for (const t of targets) await (await fetch(app.url + t.path, { headers: t.headers })).arrayBuffer();
  const floorFile = await captureFloorFile(app, targets);
  await app.stop();
  app = await startBenchApp({ ...world.env, ...CHAIN_DOWN_ENV }, dataDir, 'warn', PERF_ARGS);
  floor = await startServer([...PERF_ARGS, 'bench/floor.mjs'], { BENCH_FLOOR_FILE: floorFile });
  const pinned = cpu > 0 && pinToCpu(process.pid, 0) && pinToCpu(app.proc.pid, cpu, true) && pinToCpu(floor.proc.pid, cpu, true);
  for (const t of targets) for (const server of [app, floor]) await load(server, t.path, { requests: 40_000, connections: 32, headers: t.headers, warmup: 0 });
  const ours = await record(app, dir, 'marketgate');
  const base = await record(floor, dir, 'floor');

  const requests = REQUESTS * targets.length;
  const per1k = (samples: number) => (samples * 1000) / requests;
  const byPlace = (samples: Map<string, { samples: number; kernel: boolean }>) => {
    const places = new Map<string, number>();
    for (const [symbol, { samples: n, kernel }] of samples) places.set(placeOf(symbol, kernel), (places.get(placeOf(symbol, kernel)) ?? 0) + n);
    return places;
  };
  const [oursByPlace, baseByPlace] = [byPlace(ours), byPlace(base)];
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  console.log(
    `\nCached path, profiled: ${targets.map((t) => t.name).join('; ')}; ${REQUESTS} requests each; perf at 999 Hz` +
      (pinned ? `; servers on CPU ${cpu}, the load on CPU 0` : '; not pinned'),
  );
  console.log('samples per 1,000 requests (1 sample ≈ 1 ms of CPU at 999 Hz, so per request: µs ≈ samples per 1,000)\n');
  console.log('where'.padEnd(46) + 'marketgate'.padStart(11) + 'floor'.padStart(8) + 'beyond'.padStart(8));
  const places = [...new Set([...oursByPlace.keys(), ...baseByPlace.keys()])].sort((a, b) => (oursByPlace.get(b) ?? 0) - (oursByPlace.get(a) ?? 0));
  for (const place of [...places, 'all']) {
    const [o, b] = place === 'all' ? [total(oursByPlace), total(baseByPlace)] : [oursByPlace.get(place) ?? 0, baseByPlace.get(place) ?? 0];
    console.log(place.padEnd(46) + per1k(o).toFixed(1).padStart(11) + per1k(b).toFixed(1).padStart(8) + per1k(o - b).toFixed(1).padStart(8));
  }
  console.log(`\nthe ${TOP} symbols marketgate spends most on beyond the floor (samples per 1,000 requests):`);
  console.log('beyond'.padStart(7) + 'mg'.padStart(8) + 'floor'.padStart(8) + '  symbol');
  const symbols = [...new Set([...ours.keys(), ...base.keys()])]
    .map((s) => ({ s, o: ours.get(s)?.samples ?? 0, b: base.get(s)?.samples ?? 0 }))
    .sort((x, y) => y.o - y.b - (x.o - x.b))
    .slice(0, TOP);
  for (const { s, o, b } of symbols) console.log(per1k(o - b).toFixed(2).padStart(7) + per1k(o).toFixed(2).padStart(8) + per1k(b).toFixed(2).padStart(8) + '  ' + s.slice(0, 110));
  console.log(`\nrecordings in ${dir} (perf report -i ${join(dir, 'marketgate.data')})`);
} finally {
  pinToCpu(process.pid, `0-${cpus().length - 1}`);
  await floor?.stop();
  await app?.stop();
  await world.stop();
}
