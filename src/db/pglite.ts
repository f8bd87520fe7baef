// The embedded database: PGlite (PostgreSQL compiled to WebAssembly) in DATA_DIR/pglite, owned by
// this process alone (DATA_DIR/pglite.lock), so `npm start` needs nothing installed. PGlite runs on a
// worker thread (pglite-worker.ts), never on the event loop that serves requests; this is the main
// thread's side, a Database whose calls are messages to that worker. A server on DATABASE_URL never
// starts the worker nor loads PGlite.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import { startWorker, workerModule } from '../lib/off-thread.ts';
import { DATABASE_GONE, type Database, type Queryable } from './database.ts';
import { keepFilesOwnerOnly, prepareDataDir } from './data-dir.ts';
import { acquireLock } from './dir-lock.ts';

/**
 * V8's budget for moving a WebAssembly function from its baseline code (Liftoff) to optimised code
 * (TurboFan), at the most it can be (2^31 − 1, about 1,200 times the default of 1.8 million, "roughly bytes
 * executed"): PGlite's functions stay on baseline code while the database is lightly used, as here. Under
 * the default, PostgreSQL's functions were recompiled as soon as one had run enough: opening the database
 * took 0.4 to 0.6 s more CPU (a first start, initdb included, 2 s more), then one function was recompiled
 * every few seconds as the usage counter flushed (up to 190 ms of CPU at once, on the cores that serve
 * requests), for as long as we watched. That bought nothing measurable: 48,000 statements (inserts,
 * updates, upserts, selects) took as long per statement either way, and less CPU in all without it. A
 * database kept busy still tiers up its hottest functions (two, after about a hundred statements: some
 * 200 ms of CPU, once). V8's flags are the process's, and the budget is read when a module is compiled:
 * set as this module loads, before any PGlite worker starts (a server on DATABASE_URL never loads it). The
 * only other WebAssembly the server runs is undici's HTTP parser, for upstream answers.
 */
setFlagsFromString(`--wasm-tiering-budget=${2 ** 31 - 1}`);

/** Where PGlite keeps its cluster and its lock, below DATA_DIR. */
export const pglitePaths = (dataDir: string) => ({ cluster: join(dataDir, 'pglite'), lock: join(dataDir, 'pglite.lock') });

export interface PgliteOpenOptions {
  /** Stops the opening (the worker is terminated: a first-start initdb leaves only a staging directory) when the server shuts down meanwhile. */
  signal?: AbortSignal;
}

/**
 * Opens (creating on first use) the PGlite cluster under `dataDir`. Throws DirLockedError when another
 * process owns it, UnsafeDataDirError when other users could write `dataDir` (db/data-dir.ts).
 */
export async function openPglite(dataDir: string, options: PgliteOpenOptions = {}): Promise<Database> {
  // PGlite creates its files 0666 and its directories 0777, less the umask: owner-only only under one of 077.
  keepFilesOwnerOnly();
  prepareDataDir(dataDir);
  const paths = pglitePaths(dataDir);
  const lock = acquireLock(paths.lock);
  let worker: WorkerCalls | undefined;
  const stop = () => void worker?.terminate(new Error('PGlite opening stopped: the server is shutting down'));
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    if (!existsSync(join(paths.cluster, 'PG_VERSION'))) {
      // First start: initdb on a worker of its own, ended afterwards (its memory with it).
      worker = newWorker();
      options.signal?.throwIfAborted();
      await worker.call({ op: 'initdb', dir: paths.cluster });
      await worker.terminate(new Error('initdb done'));
    }
    worker = newWorker();
    options.signal?.throwIfAborted();
    await worker.call({ op: 'open', dir: paths.cluster });
    return new PgliteDatabase(worker, () => lock.release());
  } catch (err) {
    await worker?.terminate(err);
    lock.release();
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', stop);
  }
}

const newWorker = () => new WorkerCalls(startWorker(workerModule('pglite-worker', import.meta.url)));

type Call =
  | { op: 'initdb' | 'open'; dir: string }
  | { op: 'query'; sql: string; params: readonly unknown[]; tx?: number }
  | { op: 'begin' }
  | { op: 'commit' | 'rollback'; tx: number }
  | { op: 'close' };

/** Request/answer over the worker's message port; a worker that dies fails every call in flight, and every later one. */
class WorkerCalls {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  private dead: Error | undefined;
  /** Called once if the worker dies on its own (not through `terminate`). */
  onDeath: ((err: Error) => void) | undefined;

  constructor(private readonly worker: Worker) {
    worker.on('message', (m: { id: number; ok: boolean; value?: unknown; error?: { message: string; code?: string } }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.ok) w?.resolve(m.value);
      else w?.reject(Object.assign(new Error(m.error!.message), m.error!.code ? { code: m.error!.code } : {}));
    });
    const died = (err: Error) => {
      const unexpected = !this.dead;
      this.fail(Object.assign(err, { code: DATABASE_GONE }));
      if (unexpected) this.onDeath?.(err);
    };
    worker.on('error', (err) => died(new Error(`the PGlite worker failed: ${err.message}`)));
    worker.on('exit', (code) => died(new Error(`the PGlite worker exited (code ${code})`)));
  }

  call<T = unknown>(c: Call): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, ...c });
    });
  }

  async terminate(reason: unknown): Promise<void> {
    this.fail(reason instanceof Error ? reason : new Error(String(reason)));
    await this.worker.terminate();
  }

  private fail(err: Error): void {
    this.dead ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}

class PgliteDatabase implements Database {
  readonly kind = 'pglite';
  /** Why it can no longer answer: closed, or its worker died. */
  private gone: Error | undefined;

  constructor(
    private readonly worker: WorkerCalls,
    private readonly onClose: () => void,
  ) {
    // A worker that dies (a crash inside PGlite) leaves the directory to whoever opens it next.
    worker.onDeath = (err) => {
      if (this.gone) return;
      this.gone = err;
      this.onClose();
    };
  }

  query<Row>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    if (this.gone) return Promise.reject(this.gone);
    return this.worker.call<Row[]>({ op: 'query', sql, params });
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    if (this.gone) throw this.gone;
    const tx = await this.worker.call<number>({ op: 'begin' });
    let result: T;
    try {
      result = await fn({ query: <Row>(sql: string, params: readonly unknown[] = []) => this.worker.call<Row[]>({ op: 'query', sql, params, tx }) });
    } catch (err) {
      await this.worker.call({ op: 'rollback', tx }).catch(() => {});
      throw err;
    }
    await this.worker.call({ op: 'commit', tx });
    return result;
  }

  async close(): Promise<void> {
    if (this.gone) return;
    this.gone = Object.assign(new Error('the PGlite database is closed'), { code: DATABASE_GONE });
    try {
      await this.worker.call({ op: 'close' });
    } finally {
      await this.worker.terminate(new Error('the PGlite database is closed'));
      this.onClose();
    }
  }
}
