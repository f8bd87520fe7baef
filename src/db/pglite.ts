// The embedded database: PGlite (PostgreSQL compiled to WebAssembly) in DATA_DIR/pglite, owned by
// this process alone (DATA_DIR/pglite.lock). `npm start` needs nothing installed. PGlite is loaded
// only when the database is opened (a dynamic import: a server on DATABASE_URL never loads it).
//
// A new directory is created by initdb on a worker thread, into a temporary directory renamed into
// place when complete, so a process stopped halfway never leaves a half-made cluster behind.
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { startWorker, workerModule } from '../sources/off-thread.ts';
import type { Database, Queryable } from './database.ts';
import { acquireLock } from './dir-lock.ts';

/** Where PGlite keeps its cluster and its lock, below DATA_DIR. */
export const pglitePaths = (dataDir: string) => ({ cluster: join(dataDir, 'pglite'), lock: join(dataDir, 'pglite.lock') });

/** PostgreSQL's `date` type (OID 1082), kept as its 'YYYY-MM-DD' text (PGlite would make a Date at local midnight). */
const DATE_OID = 1082;

export interface PgliteOpenOptions {
  /** Aborts a first-start initdb (the worker is stopped) when the server shuts down meanwhile. */
  signal?: AbortSignal;
}

/** Opens (creating on first use) the PGlite cluster under `dataDir`. Throws DirLockedError when another process owns it. */
export async function openPglite(dataDir: string, options: PgliteOpenOptions = {}): Promise<Database> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const paths = pglitePaths(dataDir);
  const lock = acquireLock(paths.lock);
  try {
    if (!existsSync(join(paths.cluster, 'PG_VERSION'))) await initdbOffThread(paths.cluster, options.signal);
    options.signal?.throwIfAborted();
    const { PGlite } = await import('@electric-sql/pglite');
    const pg = await PGlite.create(paths.cluster, { parsers: { [DATE_OID]: (v: string) => v } });
    return new PgliteDatabase(pg, () => lock.release());
  } catch (err) {
    lock.release();
    throw err;
  }
}

class PgliteDatabase implements Database {
  readonly kind = 'pglite';
  private closed = false;

  constructor(
    private readonly pg: PGlite,
    private readonly onClose: () => void,
  ) {}

  async query<Row>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    this.assertOpen();
    return (await this.pg.query<Row>(sql, params as unknown[])).rows;
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.pg.transaction((tx) => fn({ query: async <Row>(sql: string, params: readonly unknown[] = []) => (await tx.query<Row>(sql, params as unknown[])).rows }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.pg.close();
    } finally {
      this.onClose();
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the PGlite database is closed');
  }
}

/** Runs initdb for `cluster` on a worker thread, in a temporary directory renamed into place when done. */
async function initdbOffThread(cluster: string, signal: AbortSignal | undefined): Promise<void> {
  const staging = `${cluster}.initdb-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const worker = startWorker(workerModule('pglite-initdb-worker', import.meta.url));
  const stop = () => void worker.terminate();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (m: { ok: boolean; error?: string }) => (m.ok ? resolve() : reject(new Error(`PGlite initdb failed: ${m.error}`))));
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(signal?.aborted ? 'PGlite initdb stopped: the server is shutting down' : `PGlite initdb worker exited (code ${code})`)));
      worker.postMessage({ dir: staging });
    });
    renameSync(staging, cluster);
  } finally {
    signal?.removeEventListener('abort', stop);
    await worker.terminate();
    rmSync(staging, { recursive: true, force: true });
  }
}
