// A real Redis server for the tests, from Debian's `redis-server` package: on a free port on 127.0.0.1,
// no persistence (as docs/operating/several-instances.md says Redis needs none here), stopped by `stop()`. `pause`/`resume` freeze
// it (it accepts connections but never answers: a hung Redis); `kill` and `restart` stop it and bring it
// back on the same port (an outage and its recovery). A missing binary is an error that says how to
// install it, never a skip.
import { freePort } from './free-port.ts';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'];

export function findRedisServer(): string {
  const found = CANDIDATES.find((p) => existsSync(p)) ?? (spawnSync('which', ['redis-server'], { encoding: 'utf8' }).stdout.trim() || undefined);
  if (!found) {
    throw new Error('redis-server not found. The scale-out tests run against a real Redis: install Debian\'s package with `apt-get install -y redis-server` (.ci/run does this).');
  }
  return found;
}

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** SIGSTOP: connections are accepted but nothing is answered. */
  pause(): void;
  resume(): void;
  /** Stops the server (an outage); `restart` brings it back, empty, on the same port. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Resolves once the server answers PING on `port`. */
async function answers(port: number, deadlineMs = 10_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection(port, '127.0.0.1');
      socket.once('error', () => resolve(false));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(String(d).startsWith('+PONG'));
      });
      socket.once('connect', () => socket.write('PING\r\n'));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server did not answer on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedis(): Promise<TestRedis> {
  const bin = findRedisServer();
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const launch = async () => {
    proc = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--loglevel', 'warning'], {
      stdio: 'ignore',
    });
    await answers(port);
  };
  const halt = async () => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null) return;
    p.kill('SIGCONT');
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    p.kill('SIGKILL');
    await exited;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pause: () => void proc?.kill('SIGSTOP'),
    resume: () => void proc?.kill('SIGCONT'),
    kill: halt,
    restart: launch,
    stop: halt,
  };
}
