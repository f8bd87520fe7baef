// A real PostgreSQL server for the tests, started from Debian's `postgresql` package binaries
// (/usr/lib/postgresql/<version>/bin): a fresh cluster in a temporary directory, listening on a free
// port on 127.0.0.1 only, stopped and deleted by `stop()`. PostgreSQL refuses to run as root: as root
// (CI, this machine) initdb and postgres run as the `postgres` system user the package creates, in a
// directory it owns. Missing binaries are an error that says how to install them, never a skip.
//
// As root the server is started as that user by spawn's own uid and gid, not through `runuser`: runuser
// stops itself when its child is stopped (job control), so pause() left a stopped runuser that nothing
// woke, and, once the server exited, a zombie postgres under it (three of each per run of the suite).
import { freePort } from './free-port.ts';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const PG_ROOT = '/usr/lib/postgresql';

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, local only). */
  readonly url: string;
  readonly port: number;
  /** A new, empty database on this server; its URL. */
  createDatabase(name: string): Promise<string>;
  /** SIGSTOP / SIGCONT every process of the server: it accepts connections but never answers (a hung server). */
  pause(): void;
  resume(): void;
  /** Stops the server (fast shutdown) and deletes its directory. */
  stop(): Promise<void>;
}

/** The newest installed server's bin directory, or an error saying how to install one. */
export function findPostgresBin(): string {
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT)
        .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')) && existsSync(join(PG_ROOT, v, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      `PostgreSQL server binaries not found in ${PG_ROOT}/*/bin (initdb, postgres). The database tests run against a real server: ` +
        'install Debian\'s package with `apt-get install -y postgresql` (.ci/run does this).',
    );
  }
  return join(PG_ROOT, versions[0]!, 'bin');
}

const isRoot = () => process.getuid?.() === 0;

/** Who a server binary runs as: the `postgres` user when we are root, else ourselves. */
function runAs(): { uid?: number; gid?: number } {
  if (!isRoot()) return {};
  return { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) };
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = findPostgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'mg-pg-'));
  const user = runAs();
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  const data = join(dir, 'data');
  // HOME and the working directory the postgres user can read (initdb looks at both).
  const env = { ...process.env, HOME: dir };
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'], { stdio: 'pipe', cwd: dir, env, ...user });

  const port = await freePort();
  const args = [
    '-D', data,
    '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1',
    '-c', `unix_socket_directories=${dir}`,
    '-c', 'fsync=off',
    '-c', 'synchronous_commit=off',
    '-c', 'full_page_writes=off',
    '-c', 'max_connections=50',
  ];
  const proc: ChildProcess = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir, env, ...user });
  let log = '';
  proc.stderr!.on('data', (d) => (log += d));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  await waitUntilReady(url, proc, () => log);
  // The postmaster: the process spawned, as its postmaster.pid says.
  const postmaster = Number(execFileSync('head', ['-1', join(data, 'postmaster.pid')]).toString().trim());
  if (postmaster !== proc.pid) throw new Error(`postmaster.pid names ${postmaster}, the process started is ${proc.pid}`);
  const processes = () => [postmaster, ...childrenOf(postmaster)];

  return {
    url,
    port,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    pause() {
      for (const pid of processes()) process.kill(pid, 'SIGSTOP');
    },
    resume() {
      for (const pid of processes()) process.kill(pid, 'SIGCONT');
    },
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((resolve) => proc.once('exit', resolve));
        for (const pid of processes()) process.kill(pid, 'SIGCONT');
        process.kill(postmaster, 'SIGINT'); // fast shutdown
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (proc.exitCode === null) process.kill(postmaster, 'SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilReady(url: string, proc: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`postgres exited (code ${proc.exitCode}): ${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s: ${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Child process ids of `pid` (the server's backends and workers). */
function childrenOf(pid: number): number[] {
  try {
    const text = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)]).toString();
    return text.split('\n').map((s) => Number(s.trim())).filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when there are none
  }
}
