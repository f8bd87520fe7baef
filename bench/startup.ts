// npm run bench:startup: how long the compiled server takes from being spawned to its first answer.
// Each configuration is spawned RUNS times (BENCH_STARTUP_RUNS, default 5) on a free port with a fresh,
// empty DATA_DIR and no other environment (as `npm start` runs on a fresh clone); /health is asked every
// 10 ms from the moment of the spawn until it answers 200. Prints the median and the slowest run, and the
// CPU time of the server's main thread until then (from /proc: steadier than wall time when other work
// loads the machine; other threads, such as PGlite's worker opening the database after listening, are left
// out).
//
// Configurations: the default (x402 off), x402 on (X402_PAY_TO set, the facilitator a closed local port,
// for information: the payment SDK loads at start-up then), and `npm start` on an unchanged checkout (the
// staleness check, then the same server: a restart must not compile).
//
// `-- --cpu-prof`: one more, unmeasured start of each `node dist/server.js` configuration under the CPU
// profiler; the profiles are written to a temporary directory (open them in Chrome DevTools) and the
// main thread's busy time until the first answer is summed per package.
//
// BENCH_STARTUP_SERVER=<path of another build's server.js> times that build instead of dist/server.js
// (to compare with an older commit built elsewhere; the `npm start` row still starts this checkout).
//
// benchStartup() is exported for bench/run.ts; running this file prints its report.
import { freePort } from './lib.ts';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const POLL_MS = 10;
/** A start that has not answered by then is reported as a failure, not waited for. */
const GIVE_UP_MS = 60_000;

export interface StartupConfiguration {
  name: string;
  command: string[];
  env: Record<string, string>;
  /** The measured process is the server itself (its CPU time is read from /proc); false for `npm start`. */
  direct: boolean;
}

export interface StartupRow {
  name: string;
  /** Spawn → first 200 from /health, ms, one per run. */
  ms: number[];
  /** CPU time (user + system) of the server's main thread until then, ms, one per run; empty when not measured. */
  cpuMs: number[];
  median: number;
  max: number;
  cpuMedian: number | null;
}

export interface StartupReport {
  runs: number;
  rows: StartupRow[];
  /** Directory of the CPU profiles when asked for. */
  profiles?: string;
  /** CPU ms until the first answer per package, from the profiles, per configuration. */
  profileSummaries?: { name: string; total: number; top: [string, number][] }[];
}

/** One GET /health: its status, or 0 when nothing answered (not listening yet). */
function health(port: number): Promise<number> {
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: 2000 }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(0));
    req.end();
  });
}

/** CPU time (user + system) a process's main thread has used so far, ms; from /proc (Linux), null elsewhere. */
function mainThreadCpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return null;
  }
}

/** Spawns one start, waits for the first 200 from /health, stops it; the time and the main thread's CPU until then. */
async function startOnce(config: StartupConfiguration, nodeArgs: string[] = []): Promise<{ ms: number; cpu: number | null }> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'mg-startup-'));
  const [command, ...args] = config.command;
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: '', ...config.env, PORT: String(port), DATA_DIR: dataDir };
  const t0 = performance.now();
  const proc = spawn(command === 'node' ? process.execPath : command!, [...nodeArgs, ...args], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  try {
    for (;;) {
      if (gone) throw new Error(`${config.command.join(' ')} exited before answering: ${stderr.trim()}`);
      if ((await health(port)) === 200) {
        const ms = performance.now() - t0;
        return { ms, cpu: config.direct ? mainThreadCpuMs(proc.pid) : null };
      }
      if (performance.now() - t0 > GIVE_UP_MS) throw new Error(`${config.command.join(' ')} did not answer /health within ${GIVE_UP_MS} ms`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    proc.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export function startupConfigurations(facilitatorPort: number, server = process.env.BENCH_STARTUP_SERVER ?? 'dist/server.js'): StartupConfiguration[] {
  return [
    { name: `node ${server} (defaults: x402 off)`, command: ['node', server], env: {}, direct: true },
    {
      name: `node ${server}, x402 on`,
      command: ['node', server],
      // The facilitator is a closed local port: its supported kinds are fetched in the background and fail.
      env: { X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: `http://127.0.0.1:${facilitatorPort}`, X402_FACILITATOR_TIMEOUT_MS: '500' },
      direct: true,
    },
    { name: 'npm start (unchanged checkout)', command: ['npm', 'start', '--silent'], env: {}, direct: false },
  ];
}

/** The main thread's busy time until the first answer per package (or our code), from one profile: the heaviest first. */
function summariseProfile(file: string, untilMs: number): { total: number; top: [string, number][] } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: { id: number; callFrame: { url: string; functionName: string } }[];
    samples: number[];
    timeDeltas: number[];
  };
  // Functions without a script are V8's or Node's natives: (idle), (garbage collector), (program), file reads.
  const urlOf = new Map(profile.nodes.map((n) => [n.id, n.callFrame.url || n.callFrame.functionName]));
  const bucket = (url: string) => {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (pkg) return pkg;
    if (url.includes('/dist/')) return 'our code (dist/)';
    if (url.startsWith('node:')) return 'Node internals (mostly loading modules)';
    return url;
  };
  const byBucket = new Map<string, number>();
  let t = 0;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]! / 1000;
    if (t > untilMs) break;
    const b = bucket(urlOf.get(profile.samples[i]!) ?? '');
    if (b === '(idle)') continue;
    total += profile.timeDeltas[i]! / 1000;
    byBucket.set(b, (byBucket.get(b) ?? 0) + profile.timeDeltas[i]! / 1000);
  }
  return { total, top: [...byBucket].sort((a, b) => b[1] - a[1]).slice(0, 10) };
}

export async function benchStartup(options: { runs?: number; cpuProf?: boolean; log?: (line: string) => void } = {}): Promise<StartupReport> {
  const runs = options.runs ?? Number(process.env.BENCH_STARTUP_RUNS ?? 5);
  const log = options.log ?? ((line: string) => console.error(line));
  // Compiles only when dist/ is not built from the current sources (as `npm start` does).
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-stale.mjs')], { stdio: 'inherit' });
  const configs = startupConfigurations(await freePort());
  const rows: StartupRow[] = configs.map((c) => ({ name: c.name, ms: [], cpuMs: [], median: 0, max: 0, cpuMedian: null }));
  // Interleaved (one start of each configuration per round), so a busy moment of the machine hits all alike.
  for (let round = 0; round < runs; round++) {
    for (const [i, config] of configs.entries()) {
      const got = await startOnce(config);
      rows[i]!.ms.push(got.ms);
      if (got.cpu !== null) rows[i]!.cpuMs.push(got.cpu);
      log(`  ${config.name}: ${got.ms.toFixed(0)} ms${got.cpu === null ? '' : `, ${got.cpu.toFixed(0)} ms CPU`}`);
    }
  }
  for (const row of rows) {
    row.median = median(row.ms);
    row.max = Math.max(...row.ms);
    row.cpuMedian = row.cpuMs.length ? median(row.cpuMs) : null;
  }
  const report: StartupReport = { runs, rows };
  if (options.cpuProf) {
    const dir = mkdtempSync(join(tmpdir(), 'mg-startup-prof-'));
    report.profiles = dir;
    report.profileSummaries = [];
    for (const config of configs.filter((c) => c.direct)) {
      const sub = mkdtempSync(join(dir, 'run-'));
      const got = await startOnce(config, ['--cpu-prof', `--cpu-prof-dir=${sub}`]);
      // The main thread's profile is the first written (a worker's, e.g. PGlite's, has a higher thread number).
      const file = readdirSync(sub).filter((f) => f.endsWith('.cpuprofile')).sort()[0];
      if (file) report.profileSummaries.push({ name: `${config.name} (profiled: ${got.ms.toFixed(0)} ms)`, ...summariseProfile(join(sub, file), got.ms) });
    }
  }
  return report;
}

export function printStartup(report: StartupReport): void {
  console.log(`\nstart-up: spawn → first 200 from GET /health (polled every ${POLL_MS} ms), ${report.runs} runs each, fresh DATA_DIR, no other environment`);
  console.log(`${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}\n`);
  console.log('configuration'.padEnd(44) + 'median ms'.padStart(11) + 'max ms'.padStart(9) + 'main-thread CPU ms'.padStart(20) + '   all runs, ms');
  for (const r of report.rows) {
    console.log(
      r.name.padEnd(44) + r.median.toFixed(0).padStart(11) + r.max.toFixed(0).padStart(9) + (r.cpuMedian === null ? '-' : r.cpuMedian.toFixed(0)).padStart(20) + `   ${r.ms.map((m) => m.toFixed(0)).join(' ')}`,
    );
  }
  if (report.profiles) {
    console.log(`\nCPU profiles (one unmeasured start each, main thread): ${report.profiles}`);
    for (const s of report.profileSummaries ?? []) {
      console.log(`  ${s.name}: main thread busy ${s.total.toFixed(0)} ms until the first answer; by package:`);
      for (const [name, ms] of s.top) console.log(`    ${ms.toFixed(0).padStart(6)} ms  ${name}`);
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  printStartup(await benchStartup({ cpuProf: process.argv.includes('--cpu-prof') }));
}
