// The real server process (`node --import tsx src/server.ts`), for the operator CLIs' and crash tests: on a free port
// with only the given environment, resolved once its database is open and its admin socket listens.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface RunningServer {
  url: string;
  /** Everything it has written so far (its JSON log lines). */
  output(): string;
  /** SIGTERM; resolves with its exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash: nothing is flushed or closed); resolves once the process is gone. */
  kill(): Promise<void>;
}

export interface ServerProcessOptions {
  /** The umask it starts with (the shell's `umask`), instead of this process's. */
  umask?: number;
}

/** `node --import tsx src/server.ts` on a free port with only `env`, under `options.umask` when given. */
export function spawnServer(env: Record<string, string>, options: ServerProcessOptions) {
  const node = 'exec node --import tsx src/server.ts';
  return spawn('sh', ['-c', options.umask === undefined ? node : `umask ${options.umask.toString(8).padStart(3, '0')} && ${node}`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A server process that should stop at start-up: its exit code and everything it wrote, or a failure if it still runs after `withinMs`. */
export async function serverExit(env: Record<string, string>, withinMs = 120_000, options: ServerProcessOptions = {}): Promise<{ code: number | null; output: string }> {
  const proc = spawnServer(env, options);
  let output = '';
  proc.stdout.on('data', (d) => (output += d));
  proc.stderr.on('data', (d) => (output += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), withinMs);
  const code = await new Promise<number | null>((resolve) => proc.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  if (code === null) throw new Error(`the server was still running after ${withinMs} ms: ${output}`);
  return { code, output };
}

export async function startServerProcess(env: Record<string, string>, options: ServerProcessOptions = {}): Promise<RunningServer> {
  const proc = spawnServer(env, options);
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 120_000;
  while (!/"msg":"database open"/.test(out) || !/admin channel listening/.test(out)) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
  return {
    url,
    output: () => out,
    async stop() {
      proc.kill('SIGTERM');
      return exited;
    },
    async kill() {
      proc.kill('SIGKILL');
      await exited;
    },
  };
}
