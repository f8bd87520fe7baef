// The database as a service of the running server: opened in the background (the server answers
// /health before it is ready; PGlite takes seconds to open), and used through `use`, which bounds
// the whole wait — for the opening, a connection and the statements — by DB_TIMEOUT_MS and turns any
// failure to reach the database into DatabaseUnavailableError (503, source "database").
//
// A failed opening (a server that is down, a directory another process owns) is retried on a later
// use, at most every `retryOpenMs`; in between, uses fail at once rather than wait.
//
// A request that only reads for its caller (GET /v1/usage, a key the instance's copy does not hold yet) may
// wait longer for an opening in progress (`useOnceOpen`: up to DB_OPEN_WAIT_MS), so the first requests after
// a start are answered once the database is ready rather than refused while it is merely opening. A paid call
// waits for it the same way (`opened`), before anything is verified: only a ledger that is really down refuses it.
import { AppError } from '../lib/errors.ts';
import { DATABASE_GONE, type Database } from './database.ts';

/** 503 `{ error, source: "database" }`: the database could not be reached in time. */
export class DatabaseUnavailableError extends AppError {
  override name = 'DatabaseUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(503, message, 'database', options);
  }
}

export type DatabaseState = 'idle' | 'opening' | 'open' | 'failed' | 'closed';

/** What the service logs through (a pino logger fits). */
export interface DbLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DatabaseServiceOptions {
  /** Opens and migrates the database; aborted when the service closes meanwhile. */
  open: (signal: AbortSignal) => Promise<Database>;
  /** DB_TIMEOUT_MS: the bound of one `use`, waiting for the opening included. */
  timeoutMs: number;
  /** DB_OPEN_WAIT_MS: how long `useOnceOpen` waits for an opening in progress (default: timeoutMs, no longer than `use`). */
  openWaitMs?: number;
  /** Words for logs ("PGlite in ./data/pglite"). */
  describe: string;
  log: DbLog;
  /** After a failed opening, the next attempt waits at least this long (ms). */
  retryOpenMs?: number;
  /** Told when a use reaches the database and when it cannot (/v1/status, metrics, one log line per change). */
  health?: { ok(): void; failed(err: unknown): void };
}

export class DatabaseService {
  private db: Database | undefined;
  private opening: Promise<Database> | undefined;
  private failure: { err: unknown; at: number } | undefined;
  private closed = false;
  private readonly abort = new AbortController();
  private probe: NodeJS.Timeout | undefined;
  /** Milliseconds the last successful opening took (logged as open_ms). */
  openMs: number | undefined;
  /** When the database last answered a statement (epoch ms; 0: never). */
  answeredAt = 0;

  constructor(private readonly options: DatabaseServiceOptions) {}

  get state(): DatabaseState {
    if (this.closed) return 'closed';
    if (this.db) return 'open';
    if (this.opening) return 'opening';
    return this.failure ? 'failed' : 'idle';
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** Starts opening the database in the background (once); uses wait for it. */
  start(): void {
    if (this.closed || this.db || this.opening) return;
    const started = performance.now();
    this.options.log.info({ database: this.options.describe }, 'opening the database');
    this.opening = this.options.open(this.abort.signal).then(
      (db) => {
        this.opening = undefined;
        this.failure = undefined;
        this.openMs = Math.round(performance.now() - started);
        if (this.closed) {
          void db.close();
          throw new Error('the database service is closed');
        }
        this.db = db;
        this.options.log.info({ database: this.options.describe, open_ms: this.openMs }, 'database open');
        return db;
      },
      (err: unknown) => {
        this.opening = undefined;
        this.failure = { err, at: Date.now() };
        if (!this.closed) this.options.log.error({ database: this.options.describe, err: String((err as Error)?.message ?? err) }, 'database could not be opened');
        throw err;
      },
    );
    // A failure is reported through `use`; nobody may be waiting yet.
    this.opening.catch(() => {});
  }

  /**
   * Runs `fn` with the database, all of it (waiting for the opening included) within DB_TIMEOUT_MS.
   * Throws DatabaseUnavailableError when the database cannot be reached in time; an error `fn`
   * raises for another reason (a constraint, a bug) is passed on as it is.
   */
  async use<T>(fn: (db: Database) => Promise<T>, timeoutMs = this.options.timeoutMs): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let late = false;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        late = true;
        reject(new DatabaseUnavailableError(`database did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    // Work whose caller has given up (the database opened too late) is not started at all.
    const run = (db: Database) => (late ? Promise.reject(new DatabaseUnavailableError('database opened too late for this request')) : fn(db));
    try {
      const result = await Promise.race([this.ready(true).then(run).catch((err) => unavailable(this.forgetIfGone(err))), expired]);
      this.answeredAt = Date.now();
      this.options.health?.ok();
      return result;
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) this.options.health?.failed(err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * `use` for a read a request makes for its caller: an opening in progress (or not yet started) is waited for
   * up to DB_OPEN_WAIT_MS first, then `fn` has DB_TIMEOUT_MS. An opening that fails fails this at once, as in `use`.
   */
  async useOnceOpen<T>(fn: (db: Database) => Promise<T>): Promise<T> {
    const waitMs = this.options.openWaitMs ?? this.options.timeoutMs;
    if (this.state === 'idle' || this.state === 'opening') {
      let timer: NodeJS.Timeout | undefined;
      const stillOpening = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
      // A failed opening is left to `use` below, which reports it as it reports any (503, once per retry period).
      const outcome = await Promise.race([this.ready(true).then(() => 'open' as const, () => 'failed' as const), stillOpening]).finally(() => clearTimeout(timer));
      if (outcome === 'late') {
        const err = new DatabaseUnavailableError(`database still opening after ${waitMs} ms`);
        this.options.health?.failed(err);
        throw err;
      }
    }
    return this.use(fn);
  }

  /**
   * Resolves once the database is open: at once when it is; an opening in progress (or not yet started) is waited
   * for up to DB_OPEN_WAIT_MS and then asked once (which makes its health current). Rejects with
   * DatabaseUnavailableError as `useOnceOpen` does.
   */
  async opened(): Promise<void> {
    if (this.state === 'open') return;
    await this.useOnceOpen((db) => db.query('SELECT 1'));
  }

  /** The open database, waiting for the opening without a bound (tests, the CLI); `failFast`: a recent failure is rethrown at once. */
  async ready(failFast = false): Promise<Database> {
    if (this.closed) throw new DatabaseUnavailableError('database closed: the server is shutting down');
    if (this.db) return this.db;
    const retryOpenMs = this.options.retryOpenMs ?? 5000;
    if (failFast && this.failure && !this.opening && Date.now() - this.failure.at < retryOpenMs) {
      throw new DatabaseUnavailableError(`database unavailable: ${reason(this.failure.err)}`, { cause: this.failure.err });
    }
    this.start();
    return this.opening!;
  }

  /**
   * Keeps the database's health current between requests (/v1/status shows it; a paid call checks it before
   * anything is verified): every `everyMs`, one `SELECT 1` when no statement was answered meanwhile (the API keys'
   * change check usually has been: each statement costs the embedded database's worker CPU). Until close().
   */
  keepHealthCurrent(everyMs: number): void {
    clearInterval(this.probe);
    this.probe = setInterval(() => {
      if (Date.now() - this.answeredAt < everyMs) return;
      if (this.state === 'open' || this.state === 'failed') this.use((db) => db.query('SELECT 1')).catch(() => {});
    }, everyMs);
    this.probe.unref();
  }

  /** A database that is gone for good (its PGlite worker died) is dropped: the next use opens it again. */
  private forgetIfGone(err: unknown): unknown {
    if ((err as { code?: string } | null)?.code === DATABASE_GONE && this.db) {
      this.options.log.error({ database: this.options.describe, err: String((err as Error).message) }, 'database lost; it is opened again on the next request');
      this.db = undefined;
      this.failure = { err, at: Date.now() };
    }
    return err;
  }

  /** Closes the database (after an opening in progress ends; a first-start initdb is stopped). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.probe);
    this.abort.abort();
    await this.opening?.catch(() => {});
    const db = this.db;
    this.db = undefined;
    await db?.close();
  }
}

const CONNECTION_CODES = new Set([DATABASE_GONE, 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);

/** Failures to reach the database become DatabaseUnavailableError; other errors pass unchanged. */
function unavailable(err: unknown): never {
  if (err instanceof AppError) throw err;
  const e = err as { code?: string; message?: string } | null;
  const code = e?.code ?? '';
  const message = e?.message ?? String(err);
  const isConnection =
    CONNECTION_CODES.has(code) ||
    // SQLSTATE classes 08 (connection), 53 (insufficient resources), 57P (shut down, cannot connect now), 57014 (statement timeout)
    /^(08|53|57P)/.test(code) ||
    code === '57014' ||
    /timeout|terminated|Connection|closed|DirLocked|initdb/i.test(`${(err as Error)?.name ?? ''} ${message}`);
  if (isConnection) throw new DatabaseUnavailableError(`database unavailable: ${reason(err)}`, { cause: err });
  throw err;
}

function reason(err: unknown): string {
  const e = err as { code?: string; message?: string } | null;
  const message = (e?.message ?? String(err)).split('\n')[0]!;
  return e?.code && !message.includes(e.code) ? `${message} (${e.code})` : message;
}
