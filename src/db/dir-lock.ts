// PGlite is Postgres in this process's memory: two processes opening one data directory would each
// believe they own it and corrupt it. The owner holds a lock file with its process id; another
// process (a second server, the payments CLI) sees who owns the directory and stays out. A lock left
// by a process that no longer runs is taken over, and so is one holding this process's own id that this
// process did not take: in a container the server is always process 1, so after a crash (kill -9, out of
// memory) the next container's server found "1" in the lock, a running process, and was refused forever.
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The locks this process holds (by absolute path). */
const held = new Set<string>();

export class DirLockedError extends Error {
  override name = 'DirLockedError';
  constructor(
    readonly path: string,
    readonly pid: number,
  ) {
    super(`${path} is held by process ${pid}${pid === process.pid ? ' (this process)' : ''}`);
  }
}

export interface DirLock {
  readonly path: string;
  release(): void;
}

/** The running process that holds the lock at `path`, or null (no lock, or a stale one). */
export function lockOwner(path: string): number | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const pid = Number(text.trim());
  if (pid === process.pid && !held.has(resolve(path))) return null; // an earlier process with the same id
  return Number.isInteger(pid) && pid > 0 && isRunning(pid) ? pid : null;
}

/** Takes the lock at `path` (a file holding this process's id); throws DirLockedError when a running process holds it. */
export function acquireLock(path: string): DirLock {
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      held.add(resolve(path));
      return {
        path,
        release() {
          // Only our own lock: never remove one another process took over.
          if (lockOwner(path) === process.pid) unlinkSync(path);
          held.delete(resolve(path));
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
    }
    const owner = lockOwner(path);
    if (owner !== null) throw new DirLockedError(path, owner);
    unlinkSync(path); // stale: its process is gone
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
