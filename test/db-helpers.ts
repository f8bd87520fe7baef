// What the database tests share: a logger that keeps its lines, temporary DATA_DIRs, a database
// service over given settings, and a Database wrapper that counts statements or fails on demand.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database, Queryable } from '../src/db/database.ts';
import { acquireLock, DirLockedError } from '../src/db/dir-lock.ts';
import { openDatabase, type DatabaseSettings } from '../src/db/open.ts';
import { openPglite, pglitePaths } from '../src/db/pglite.ts';
import { DatabaseService, type DbLog } from '../src/db/service.ts';

export interface MemoryLog extends DbLog {
  lines: { level: string; msg: string; obj: object }[];
  text(): string;
}

export function memoryLog(): MemoryLog {
  const lines: MemoryLog['lines'] = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, msg, obj });
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), text: () => lines.map((l) => `${l.level} ${l.msg} ${JSON.stringify(l.obj)}`).join('\n') };
}

const made: string[] = [];

/** A new, empty directory under the system's temp dir (deleted by `removeTempDirs`). */
export function tempDir(prefix = 'mg-data-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function serviceFor(settings: DatabaseSettings, log: DbLog = memoryLog()): DatabaseService {
  return new DatabaseService({ open: (signal) => openDatabase(settings, { signal }), timeoutMs: settings.timeoutMs, describe: 'test database', log, retryOpenMs: 0 });
}

/** A service over an already open database (the test keeps it open). */
export function serviceOver(db: Database, options: { timeoutMs?: number; log?: DbLog } = {}): DatabaseService {
  return new DatabaseService({ open: async () => db, timeoutMs: options.timeoutMs ?? 2000, describe: 'test database', log: options.log ?? memoryLog(), retryOpenMs: 0 });
}

/** Statements sent through a database, with a switch to make some of them fail like a lost connection. */
export interface Instrumented extends Database {
  statements: string[];
  /** While it returns true for a statement, that statement fails with ECONNRESET. */
  failWhen: ((sql: string) => boolean) | undefined;
}

export function instrument(db: Database): Instrumented {
  const wrapped: Instrumented = {
    kind: db.kind,
    statements: [],
    failWhen: undefined,
    query: (sql, params) => run(db, sql, params),
    transaction: (fn) => db.transaction((tx) => fn({ query: (sql, params) => run(tx, sql, params) })),
    close: () => db.close(),
  };
  async function run<Row>(q: Queryable, sql: string, params?: readonly unknown[]): Promise<Row[]> {
    wrapped.statements.push(sql.replace(/\s+/g, ' ').trim());
    if (wrapped.failWhen?.(sql)) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    return q.query<Row>(sql, params);
  }
  return wrapped;
}

/**
 * A new DATA_DIR holding a ready PGlite cluster, copied from a template made once per machine (and
 * PGlite version) in the temp dir: PGlite's initdb costs 10 to 40 s of CPU on a busy 2-core machine,
 * reopening a cluster a few. The server opens the copy exactly as it opens its own directory; the
 * first-start path (initdb on a worker thread) is tested on really fresh directories elsewhere.
 */
export async function pgliteDataDir(): Promise<string> {
  const template = await pgliteTemplate();
  const dir = tempDir();
  cpSync(template, pglitePaths(dir).cluster, { recursive: true });
  return dir;
}

async function pgliteTemplate(): Promise<string> {
  const version = JSON.parse(readFileSync(new URL('../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')).version;
  const root = join(tmpdir(), `marketgate-pglite-template-${version}`);
  const ready = join(root, 'cluster');
  mkdirSync(root, { recursive: true });
  const deadline = Date.now() + 300_000;
  while (!existsSync(join(ready, 'PG_VERSION'))) {
    let lock;
    try {
      lock = acquireLock(join(root, 'making.lock'));
    } catch (err) {
      if (!(err instanceof DirLockedError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250)); // another test file is making it
      continue;
    }
    try {
      if (existsSync(join(ready, 'PG_VERSION'))) break;
      const making = join(root, `making-${process.pid}`);
      rmSync(making, { recursive: true, force: true });
      await (await openPglite(making)).close();
      rmSync(join(making, 'pglite.lock'), { force: true });
      renameSync(pglitePaths(making).cluster, ready);
      rmSync(making, { recursive: true, force: true });
    } finally {
      lock.release();
    }
  }
  return ready;
}
