// What the benchmarks share: free ports, spawning a server and waiting for it, the server's CPU time
// from /proc, and a closed-loop load of a fixed number of requests over a fixed number of connections.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { Pool } from 'undici';

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export interface Spawned {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns `node ARGS` on a free port and resolves once `readyPath` answers (any status). */
export async function startServer(args: string[], env: Record<string, string>, readyPath = '/'): Promise<Spawned> {
  const port = await freePort();
  const proc = spawn(process.execPath, args, { env: { ...process.env, ENV_FILE: '', ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (proc.exitCode === null) proc.kill('SIGKILL');
  };
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url + readyPath)).status > 0) return { url, proc, stop };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await stop();
  throw new Error(`${args.join(' ')} did not start`);
}

/** CPU time (user + system) a process has used so far, µs; from /proc (Linux), null elsewhere. */
export function cpuMicros(pid: number | undefined, mainThreadOnly = false): number | null {
  try {
    const fields = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return null;
  }
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU per request, µs (null off Linux). */
  cpuPerRequest: number | null;
  /**
   * Of it, the main thread's (the event loop); the rest is the other threads': V8's compiler and garbage
   * collector helpers, worker threads (marketgate's database).
   */
  mainCpuPerRequest: number | null;
  /** Answers other than the expected status. */
  errors: number;
  bytes: number;
}

/**
 * `requests` GETs of `path` over `connections` keep-alive connections, each sending its next request
 * when its answer is read (closed loop), after `warmup` unmeasured ones. The server's CPU is read
 * around the measured part only.
 */
export async function load(
  server: { url: string; proc: ChildProcess },
  path: string,
  options: { requests: number; connections: number; warmup?: number; headers?: Record<string, string>; status?: number },
): Promise<LoadResult> {
  const { requests, connections, headers = {}, status = 200 } = options;
  const pool = new Pool(server.url, { connections, pipelining: 1 });
  const latencies = new Float64Array(requests);
  let errors = 0;
  let bytes = 0;
  const run = async (count: number, record: boolean) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        for (let i = next++; i < count; i = next++) {
          const t0 = performance.now();
          const res = await pool.request({ method: 'GET', path, headers });
          const body = await res.body.arrayBuffer();
          if (record) {
            latencies[i] = performance.now() - t0;
            bytes = body.byteLength;
            if (res.statusCode !== status) errors++;
          }
        }
      }),
    );
  };
  await run(options.warmup ?? Math.min(2000, requests), false);
  const cpuBefore = cpuMicros(server.proc.pid);
  const mainBefore = cpuMicros(server.proc.pid, true);
  const start = performance.now();
  await run(requests, true);
  const elapsed = performance.now() - start;
  const cpuAfter = cpuMicros(server.proc.pid);
  const mainAfter = cpuMicros(server.proc.pid, true);
  await pool.close();
  latencies.sort();
  const pct = (p: number) => latencies[Math.min(requests - 1, Math.floor((p / 100) * requests))]!;
  const perRequest = (before: number | null, after: number | null) => (before === null || after === null ? null : (after - before) / requests);
  const cpuPerRequest = perRequest(cpuBefore, cpuAfter);
  const mainCpuPerRequest = perRequest(mainBefore, mainAfter);
  return { requests, rps: requests / (elapsed / 1000), p50: pct(50), p99: pct(99), cpuPerRequest, mainCpuPerRequest, errors, bytes };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export const machine = (): string => `${cpus().length} CPUs (${cpus()[0]?.model?.trim() ?? '?'}), node ${process.version}`;

/**
 * Pins a process's main thread (`allThreads`: every thread) to one CPU with taskset; false when it cannot
 * (no taskset, not Linux). On a small machine the load generator and the server otherwise share every core
 * and the scheduler's moves weigh on each measurement differently.
 */
export function pinToCpu(pid: number | undefined, cpu: number | string, allThreads = false): boolean {
  if (pid === undefined) return false;
  try {
    execFileSync('taskset', [...(allThreads ? ['-a'] : []), '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
