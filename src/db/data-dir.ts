// DATA_DIR is the operator's alone: it holds the embedded database (API key hashes, the payments
// ledger) and the admin socket, whose file permissions are the CLIs' only authentication. Whatever the
// process umask, what this process creates there is owner-only (directories 0700, files 0600, the
// socket inside an owner-only directory), and a DATA_DIR another user could have written is refused.
//
// The rules, checked before the database opens or the admin socket is created:
//   - A directory is "writable by others" when it is world-writable, or group-writable by a group other
//     than this process's own primary group (on systems with a private group per user, a checkout made
//     under umask 002 is group-writable only by its owner's own group).
//   - DATA_DIR itself must be a directory owned by this process's user and not writable by others
//     (refused otherwise: another user may already have put something in it). Any access group or
//     others have to DATA_DIR or anything below it is removed (0700 and 0600 as this process makes them).
//   - Every directory above it must not be writable by others, unless it has the sticky bit and belongs
//     to root or this user (as /tmp does) and the entry below it belongs to this user or root: anyone who
//     can rename DATA_DIR away could put a directory of their own in its place.
//   - Directories start-up creates on the way (DATA_DIR and missing parents) are made 0700.
// Symbolic links in the path are followed: the checks apply to the directories they lead to.
import { chmodSync, lstatSync, mkdirSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isMainThread } from 'node:worker_threads';

/** DATA_DIR (or a directory above it) is not the operator's alone: start-up stops with this message. */
export class UnsafeDataDirError extends Error {
  override name = 'UnsafeDataDirError';
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`DATA_DIR is not safe to use: ${path} ${problem}`);
  }
}

/**
 * Adds 077 to the process umask (never removes a bit), for good: every file and directory this process
 * creates from now on is owner-only. The umask is the process's, shared by its threads, and PGlite's
 * worker thread creates the database files (with modes of its own, 0666 and 0777, that only the umask
 * narrows) for as long as it runs; so it is never set back. A worker thread cannot change it (Node
 * refuses): there it is left to the main thread, which calls this before starting any.
 */
export function keepFilesOwnerOnly(): void {
  if (!isMainThread) return;
  const previous = process.umask(0o077);
  process.umask(previous | 0o077);
}

/**
 * Creates DATA_DIR (0700) when missing, checks it and the directories above it by the rules above, and
 * narrows anything below it that group or others could use. Returns the paths it narrowed (to log).
 * Throws UnsafeDataDirError naming the path when a rule is broken; an EACCES or EPERM from the file
 * system (a directory this user cannot create) is thrown as it is.
 */
export function prepareDataDir(dataDir: string): string[] {
  if (process.platform === 'win32') {
    // No POSIX modes to check (every file reads as 0666): the directory's ACL is the operator's to set.
    mkdirSync(dataDir, { recursive: true });
    return [];
  }
  const target = resolve(dataDir);
  const missing: string[] = [];
  let existing = target;
  while (!exists(existing)) {
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  // The existing part, as the directories it leads to; then what is missing below it, made owner-only.
  let path = realpathSync(existing);
  if (missing.length === 0) {
    if (dirname(path) !== path) checkAbove(dirname(path), path);
    return checkDataDir(path);
  }
  checkAbove(path, undefined);
  for (const name of missing) {
    path = join(path, name);
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (err) {
      // Made meanwhile by another process: checked from the start like any existing directory.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return prepareDataDir(dataDir);
      throw err;
    }
    chmodSync(path, 0o700); // exactly, whatever the umask took away
  }
  return checkDataDir(path);
}

/**
 * `dir` and every directory above it, by the rule for the directories above DATA_DIR; `below` is the
 * entry under `dir` on the way to DATA_DIR (undefined when start-up is about to create it).
 */
function checkAbove(dir: string, below: string | undefined): void {
  for (;;) {
    const st = statSync(dir);
    if (!st.isDirectory()) throw new UnsafeDataDirError(dir, 'is not a directory');
    if (othersMayWrite(st)) {
      // Sticky (as /tmp): only an entry's owner, the directory's owner or root may rename or remove it.
      const owner = below === undefined ? uid() : lstatSync(below).uid;
      if (!(st.mode & 0o1000) || (st.uid !== uid() && st.uid !== 0)) {
        throw new UnsafeDataDirError(
          dir,
          `is writable by other users (mode ${octal(st.mode)}, owner uid ${st.uid}, group gid ${st.gid}), who could put a directory of their own in DATA_DIR's place: make it writable by its owner only (chmod go-w ${dir}), or use another DATA_DIR`,
        );
      }
      if (owner !== uid() && owner !== 0) {
        throw new UnsafeDataDirError(below!, `belongs to uid ${owner}, in ${dir} which other users may write: use a DATA_DIR of this user's`);
      }
    }
    const up = dirname(dir);
    if (up === dir) return;
    below = dir;
    dir = up;
  }
}

/** DATA_DIR itself: ours, not writable by others; everything below it narrowed to its owner. */
function checkDataDir(dir: string): string[] {
  const st = statSync(dir);
  if (!st.isDirectory()) throw new UnsafeDataDirError(dir, 'is not a directory');
  if (st.uid !== uid()) {
    throw new UnsafeDataDirError(dir, `belongs to uid ${st.uid}, not to the user running marketgate (uid ${uid()}): run it as that user, or use a DATA_DIR of this user's`);
  }
  if (othersMayWrite(st)) {
    throw new UnsafeDataDirError(
      dir,
      `is writable by other users (mode ${octal(st.mode)}): what is in it may not be yours. Check its contents, then chmod 700 ${dir} (or use a new DATA_DIR)`,
    );
  }
  const narrowed: string[] = [];
  if (walked.has(dir)) {
    // Walked once in this process (1,000 entries for a cluster, tens of ms on a busy machine): what it made since is owner-only.
    if (st.mode & 0o077) narrow(dir, st, narrowed, false);
    return narrowed;
  }
  narrow(dir, st, narrowed, true);
  walked.add(dir);
  return narrowed;
}

/** The DATA_DIRs whose whole tree this process has narrowed (the server's admin channel, then its database). */
const walked = new Set<string>();

/**
 * Removes group and other bits from `path` and (`below`) everything below it (symbolic links are left alone).
 * Write bits included, without refusing: earlier versions left every database file 0666 (PGlite sets
 * that mode itself), in directories 0755 under the usual umask, so refusing those would stop every
 * upgrade; what start-up narrowed is logged.
 */
function narrow(path: string, st: Stats, narrowed: string[], below: boolean): void {
  if (st.isSymbolicLink()) return;
  if (st.mode & 0o077) {
    if (st.uid !== uid()) throw new UnsafeDataDirError(path, `belongs to uid ${st.uid} and others may use it (mode ${octal(st.mode)}): remove it, or give it to the user running marketgate (uid ${uid()})`);
    chmodSync(path, st.mode & 0o7700);
    narrowed.push(path);
  }
  if (!below || !st.isDirectory()) return;
  for (const name of readdirSync(path)) {
    const child = join(path, name);
    narrow(child, lstatSync(child), narrowed, true);
  }
}

/** Writable by anyone but its owner (its group counts when it is not this process's own primary group). */
const othersMayWrite = (st: Stats) => (st.mode & 0o002) !== 0 || ((st.mode & 0o020) !== 0 && st.gid !== gid());

const uid = () => process.getuid?.() ?? 0;
const gid = () => process.getgid?.() ?? 0;
const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
