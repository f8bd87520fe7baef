// DATA_DIR is the operator's alone (src/db/data-dir.ts): whatever the umask the server starts with, its
// directories are 0700 and its files 0600 (the database's, the lock, the admin socket); a DATA_DIR other
// users could write, or could replace, stops start-up with a message naming the path; looser modes left
// from before are narrowed; a second instance on the same DATA_DIR stops at once, while a socket left by a
// crashed one is taken over.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminChannel } from '../../src/admin/channel.ts';
import { prepareDataDir, UnsafeDataDirError } from '../../src/db/data-dir.ts';
import { acquireLock, DirLockedError } from '../../src/db/dir-lock.ts';
import { pglitePaths } from '../../src/db/pglite.ts';
import { pgliteDataDir, removeTempDirs, tempDir } from '../db-helpers.ts';
import { serverExit, startServerProcess } from '../servers/marketgate.ts';

afterAll(() => removeTempDirs());

/** Every entry below `dir` (itself included) with its permission bits, as 'path mode'. */
function modes(dir: string): Map<string, { mode: number; type: string }> {
  const all = new Map<string, { mode: number; type: string }>();
  const walk = (path: string) => {
    const st = lstatSync(path);
    all.set(path, { mode: st.mode & 0o7777, type: st.isDirectory() ? 'dir' : st.isSocket() ? 'socket' : st.isSymbolicLink() ? 'link' : 'file' });
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return all;
}

/** Entries whose mode is not owner-only (0700 for a directory, 0600 for anything else). */
function notOwnerOnly(dir: string): string[] {
  return [...modes(dir)].filter(([, m]) => m.mode !== (m.type === 'dir' ? 0o700 : 0o600)).map(([path, m]) => `${path} ${m.type} 0${m.mode.toString(8)}`);
}

/** A socket file nobody listens on, as a server killed with SIGKILL leaves it. */
function staleSocket(path: string): void {
  const r = spawnSync('node', ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`]);
  expect(r.signal).toBe('SIGKILL');
  expect(lstatSync(path).isSocket()).toBe(true);
}

describe('the server under umask 000', () => {
  it('creates DATA_DIR 0700 with the database files 0600, their directories 0700 and the admin socket 0600', async () => {
    const dataDir = join(tempDir(), 'new', 'data'); // two directories to create
    const server = await startServerProcess({ DATA_DIR: dataDir }, { umask: 0o000 });
    try {
      expect(lstatSync(join(dataDir, 'admin.sock')).isSocket()).toBe(true);
      expect(modes(pglitePaths(dataDir).cluster).size).toBeGreaterThan(500); // a whole cluster, made by initdb under this umask
      expect(notOwnerOnly(join(dataDir, '..'))).toEqual([]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 240_000);
});

describe('DATA_DIR others may write: start-up stops, naming the path', () => {
  it('a world-writable DATA_DIR: exit 1 before listening, nothing created in it', async () => {
    const dataDir = tempDir();
    chmodSync(dataDir, 0o777);
    const { code, output } = await serverExit({ DATA_DIR: dataDir });
    expect(code).toBe(1);
    expect(output).toContain(`failed to start: DATA_DIR is not safe to use: ${dataDir} is writable by other users (mode 0777)`);
    expect(output).not.toContain('Server listening');
    expect(readdirSync(dataDir)).toEqual([]);
  }, 120_000);

  it('a DATA_DIR to create inside a world-writable directory without the sticky bit: exit 1, naming that directory', async () => {
    const parent = tempDir();
    chmodSync(parent, 0o777);
    const { code, output } = await serverExit({ DATA_DIR: join(parent, 'data') });
    expect(code).toBe(1);
    expect(output).toContain(`failed to start: DATA_DIR is not safe to use: ${parent} is writable by other users (mode 0777`);
    expect(readdirSync(parent)).toEqual([]);
  }, 120_000);
});

describe('prepareDataDir', () => {
  const refusal = (dir: string) => {
    try {
      prepareDataDir(dir);
    } catch (err) {
      expect(err).toBeInstanceOf(UnsafeDataDirError);
      return (err as Error).message;
    }
    throw new Error(`${dir} was accepted`);
  };

  it('creates what is missing 0700, whatever the umask', () => {
    const base = tempDir();
    const old = process.umask(0o000);
    try {
      expect(prepareDataDir(join(base, 'a', 'b'))).toEqual([]);
    } finally {
      process.umask(old);
    }
    expect(lstatSync(join(base, 'a')).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(base, 'a', 'b')).mode & 0o777).toBe(0o700);
  });

  it('in a sticky world-writable directory (as /tmp), a DATA_DIR of this user is accepted', () => {
    const sticky = tempDir();
    chmodSync(sticky, 0o1777);
    expect(prepareDataDir(join(sticky, 'data'))).toEqual([]);
    expect(prepareDataDir(join(sticky, 'data'))).toEqual([]); // and again, existing
  });

  it('refuses a group-writable DATA_DIR of a group not its own, and one inside a group-writable directory', () => {
    const other = (process.getgid?.() ?? 0) + 1;
    const dir = tempDir();
    chmodSync(dir, 0o770);
    if (process.getuid?.() === 0) {
      chownSync(dir, 0, other);
      expect(refusal(dir)).toBe(`DATA_DIR is not safe to use: ${dir} is writable by other users (mode 0770): what is in it may not be yours. Check its contents, then chmod 700 ${dir} (or use a new DATA_DIR)`);
      expect(refusal(join(dir, 'data'))).toMatch(new RegExp(`^DATA_DIR is not safe to use: ${dir} is writable by other users \\(mode 0770, owner uid 0, group gid ${other}\\)`));
    }
    // Group-writable by its own group only (a private group per user, umask 002): narrowed, not refused.
    chmodSync(dir, 0o775);
    if (process.getuid?.() === 0) chownSync(dir, 0, process.getgid!());
    expect(prepareDataDir(dir)).toEqual([dir]);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
  });

  it('narrows what group and others may read below an existing DATA_DIR', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'pglite', 'base'), { recursive: true });
    writeFileSync(join(dir, 'pglite', 'base', 'file'), 'x');
    chmodSync(join(dir, 'pglite', 'base', 'file'), 0o666); // as PGlite made every file before
    chmodSync(join(dir, 'pglite', 'base'), 0o755);
    chmodSync(dir, 0o755);
    expect(prepareDataDir(dir).sort()).toEqual([dir, join(dir, 'pglite'), join(dir, 'pglite', 'base'), join(dir, 'pglite', 'base', 'file')].sort());
    expect(notOwnerOnly(dir)).toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)('refuses a DATA_DIR that belongs to another user', () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    chownSync(dir, 65534, 65534);
    expect(refusal(dir)).toBe(`DATA_DIR is not safe to use: ${dir} belongs to uid 65534, not to the user running marketgate (uid 0): run it as that user, or use a DATA_DIR of this user's`);
  });
});

describe('one DATA_DIR, one instance', () => {
  it('a socket left by a crashed server is taken over, and looser modes left from before are narrowed', async () => {
    const dataDir = await pgliteDataDir();
    staleSocket(join(dataDir, 'admin.sock'));
    chmodSync(dataDir, 0o755);
    spawnSync('chmod', ['-R', 'go+rwX', pglitePaths(dataDir).cluster]);
    expect(notOwnerOnly(pglitePaths(dataDir).cluster).length).toBeGreaterThan(500);
    const server = await startServerProcess({ DATA_DIR: dataDir });
    try {
      expect(notOwnerOnly(dataDir)).toEqual([]);
      expect(server.output()).toContain('DATA_DIR had files others could read: narrowed to their owner');

      // A second instance on the same DATA_DIR stops at once, whatever database it is given (here a
      // PostgreSQL server that is not even running: it never gets that far).
      const second = await serverExit({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none' });
      expect(second.code).toBe(1);
      expect(second.output).toContain(
        `failed to start: another marketgate instance is running on DATA_DIR ${dataDir} (its admin socket ${join(dataDir, 'admin.sock')} answers): give each instance its own DATA_DIR`,
      );
      expect(second.output).not.toContain('Server listening');
      // The first one's socket is still its own.
      expect(lstatSync(join(dataDir, 'admin.sock')).isSocket()).toBe(true);
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 240_000);
});

describe('locks and start-up races', () => {
  const log = { info() {}, warn() {}, error() {} };

  it("a lock holding this process's id that this process did not take (a container's process 1 after a crash) is taken over; one it holds is not", () => {
    const path = join(tempDir(), 'pglite.lock');
    writeFileSync(path, `${process.pid}\n`);
    const lock = acquireLock(path);
    expect(() => acquireLock(path)).toThrow(DirLockedError);
    lock.release();
    expect(() => acquireLock(path).release()).not.toThrow();
  });

  it('the admin socket is taken under a lock: while another running process holds it (starting on this DATA_DIR), start-up stops', async () => {
    const dataDir = tempDir();
    const socket = join(dataDir, 'admin.sock');
    writeFileSync(`${socket}.lock`, `${process.ppid}\n`); // a running process: our parent
    await expect(new AdminChannel(socket, log).listen()).rejects.toThrow(`another marketgate instance is running on DATA_DIR ${dataDir}`);
    writeFileSync(`${socket}.lock`, '999999999\n'); // left by a process that is gone: taken over
    const channel = new AdminChannel(socket, log);
    await channel.listen();
    expect(lstatSync(socket).isSocket()).toBe(true);
    expect(readdirSync(dataDir).sort()).toEqual(['admin.sock']); // the lock is released once the socket is bound
    await channel.close();
  });
});
