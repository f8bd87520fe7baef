// API keys as one instance sees them. Keys live in the ledger database (src/db/api-keys.ts), shared by
// every instance on one DATABASE_URL; each instance keeps a copy of the whole table in memory — every
// key's SHA-256 with its identity, or "revoked" — so checking a key never waits on the database. On the
// hot path a presented key is found in a memo of verdicts by its raw value (one Map lookup); a key not
// seen yet is hashed once and found in the copy by its hash.
//
// The copy is refreshed
//   - at once when a change is announced on Redis (key-changes.ts): a revocation is applied from the
//     message itself, then the table is read again;
//   - in full on every Redis reconnect (pub/sub drops what is sent while disconnected);
//   - every API_KEYS_RELOAD_MS by a cheap look at the change marker (one row, one number), reading the
//     table again when it moved. Without Redis this is the only way other instances' changes arrive.
// A key that is not in the copy may be new (created since the last refresh): it is looked up in the
// database (access-control.ts does this after the rate limit), and answered 503 with source "database"
// when the database cannot say: fail closed, never a 401 for a key that may be valid, never data. Keys
// in the copy keep working while the database is down, with the copy as it was.
//
// API_KEYS (raw, for development) live in memory only. API_KEYS_FILE, when it exists, is read at
// start-up (a corrupt file stops start-up) and imported into the database once, when it opens.
import { createHash, randomBytes } from 'node:crypto';
import { importKeyFile, keyByHash, keysVersion, listKeys, type KeyFileImport, type KeyRecord } from '../../db/api-keys.ts';
import type { Database } from '../../db/database.ts';
import { DatabaseUnavailableError, type DatabaseService } from '../../db/service.ts';
import { parseKeyChange, type KeyChange } from './key-changes.ts';
import { loadKeyFile } from './key-file.ts';

export { KeyFileError } from './key-file.ts';

export const hashKey = (raw: string) => createHash('sha256').update(raw, 'utf8').digest('hex');

/** A new key: `mg_` + 32 random bytes (base64url), with its id. */
export function generateKey(): { id: string; key: string } {
  return { id: `key_${randomBytes(6).toString('hex')}`, key: `mg_${randomBytes(32).toString('base64url')}` };
}

export interface KeyIdentity {
  id: string;
  label: string;
}

/** What the copy says of a key: who it is, null (refused: revoked, or unknown to the database), or 'unknown' (ask the database). */
export type KeyVerdict = KeyIdentity | null | 'unknown';

export interface KeyStoreOptions {
  /** API_KEYS. */
  raw: string[];
  /** API_KEYS_FILE, imported once. */
  file: string;
  /** API_KEYS_RELOAD_MS. */
  reloadMs: number;
}

export interface KeyStoreDeps {
  db: DatabaseService;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Tells the other instances of a change this one made (Redis); undefined without Redis. */
  announce?: (change: KeyChange) => Promise<unknown>;
}

/** Raw keys remembered with their verdict, so a key is hashed once, not on every request. */
const MEMO_LIMIT = 10_000;

export class KeyStore {
  private readonly envKeys: Map<string, KeyIdentity>;
  /** The database's keys as last read: hash → identity, or null for a revoked key. */
  private dbKeys = new Map<string, KeyIdentity | null>();
  /**
   * Revocations heard on Redis, applied to every copy read until one shows them: a read that began
   * before the revocation's commit must not bring the key back.
   */
  private readonly heardRevoked = new Set<string>();
  /** The change marker the copy was read at; undefined before the first read. */
  private version: number | undefined;
  private fullReloadWanted = false;
  /** Bumped on every change of the copy: a lookup that began before it does not store its (maybe stale) verdict. */
  private generation = 0;
  /** Verdict per presented raw key; emptied whenever the copy changes. */
  private readonly memo = new Map<string, KeyIdentity | null>();
  /** Database lookups in flight, by hash: a burst of calls with one new key asks once. */
  private readonly lookups = new Map<string, Promise<KeyIdentity | null>>();
  private readonly keyFile: KeyFileImport | undefined;
  private imported = false;
  private importing: Promise<void> | undefined;
  private syncing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** Throws KeyFileError when API_KEYS_FILE exists but is not a key file (start-up stops). */
  constructor(
    private readonly options: KeyStoreOptions,
    private readonly deps: KeyStoreDeps,
  ) {
    this.envKeys = new Map(options.raw.map((k, i) => [hashKey(k), { id: `env-${i + 1}`, label: 'API_KEYS' }]));
    this.keyFile = loadKeyFile(options.file);
  }

  /** Whether the copy has been read from the database at least once. */
  get loaded(): boolean {
    return this.version !== undefined;
  }

  /**
   * The verdict of the copy, without waiting: a Map lookup for a key seen before. A key's SHA-256 is
   * looked up in a Map rather than compared in constant time: the time depends on the hash, which a
   * caller cannot steer toward a stored one (that would take a preimage of SHA-256).
   */
  verify(raw: string): KeyVerdict {
    const known = this.memo.get(raw);
    if (known !== undefined) return known;
    const hash = hashKey(raw);
    const found = this.envKeys.get(hash) ?? this.dbKeys.get(hash);
    // Not in the copy: only the database can say. (An app whose database was never started, built for
    // tests or `npm run docs`, knows API_KEYS only; the server always starts it.)
    if (found === undefined) return this.deps.db.state === 'idle' ? null : 'unknown';
    this.remember(raw, found);
    return found;
  }

  /**
   * Asks the database about a key the copy does not hold (within DB_TIMEOUT_MS, after waiting up to
   * DB_OPEN_WAIT_MS for an opening in progress: right after a start the copy is not read yet). Throws
   * DatabaseUnavailableError (503, source "database") when it cannot answer.
   */
  async lookup(raw: string): Promise<KeyIdentity | null> {
    const hash = hashKey(raw);
    const generation = this.generation;
    let pending = this.lookups.get(hash);
    if (!pending) {
      pending = this.deps.db
        .useOnceOpen(async (db) => {
          await this.importFile(db);
          return keyByHash(db, hash);
        })
        .then(
          (row) => {
            const verdict = row && !row.revoked_at && !this.heardRevoked.has(hash) ? { id: row.id, label: row.label } : null;
            // A real key joins the copy (an unknown one is only remembered below, in the bounded memo).
            if (row && generation === this.generation) this.dbKeys.set(hash, verdict);
            return verdict;
          },
          (err: unknown) => {
            throw err instanceof DatabaseUnavailableError ? new DatabaseUnavailableError(`this API key cannot be checked: ${err.message}`, { cause: err }) : err;
          },
        )
        .finally(() => this.lookups.delete(hash));
      this.lookups.set(hash, pending);
    }
    const verdict = await pending;
    if (generation === this.generation) this.remember(raw, verdict);
    return verdict;
  }

  /** Reads the copy once the database is open (the serving process calls this at start-up). */
  start(): void {
    this.deps.db.ready().then(
      () => this.refresh().catch((err) => this.deps.log.warn({ err: errorText(err) }, 'API keys not read from the database yet; retried every API_KEYS_RELOAD_MS')),
      () => {}, // the database service logs its failure; the periodic check retries
    );
  }

  /** Checks the change marker every API_KEYS_RELOAD_MS while the database is started. */
  watch(): void {
    this.timer ??= setInterval(() => {
      if (this.databaseStarted) this.refresh().catch(() => {}); // the database's health logs the failure once
    }, this.options.reloadMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Brings the copy up to date: the key file imported first (once), then the table read again when the
   * change marker moved (always when `full`). One refresh at a time; a call during one runs after it.
   */
  refresh(full = false): Promise<void> {
    if (full) this.fullReloadWanted = true;
    if (!this.syncing) {
      this.syncing = this.sync().finally(() => (this.syncing = undefined));
      return this.syncing;
    }
    this.queued ??= this.syncing
      .catch(() => {})
      .then(() => {
        this.queued = undefined;
        return this.refresh();
      });
    return this.queued;
  }

  /** A message on the key-changes channel. */
  heard(message: string): void {
    const change = parseKeyChange(message);
    if (!change) return;
    if (change.op === 'revoked') this.revokeLocally(change.hash);
    if (this.databaseStarted) this.refresh().catch(() => {});
  }

  /** Redis reconnected: announcements may have been missed, so the verdicts are dropped and the table read again in full. */
  reconnected(): void {
    this.memo.clear();
    this.generation++;
    this.fullReloadWanted = true;
    if (this.databaseStarted) this.refresh().catch(() => {});
  }

  /**
   * A change this instance wrote (through its admin socket): applied here at once, then announced to the
   * others. Resolves with whether Redis took the announcement (null without Redis).
   */
  async applied(change: KeyChange): Promise<boolean | null> {
    if (change.op === 'revoked') this.revokeLocally(change.hash);
    await this.refresh().catch(() => {});
    if (!this.deps.announce) return null;
    try {
      await this.deps.announce(change);
      return true;
    } catch (err) {
      this.deps.log.warn({ err: errorText(err), change: change.op }, 'key change not announced on Redis: other instances apply it within API_KEYS_RELOAD_MS');
      return false;
    }
  }

  /** The key file imported into `db` (once per process; the database records it, so once overall). */
  importFile(db: Database): Promise<void> {
    const file = this.keyFile;
    if (this.imported || !file) return Promise.resolve();
    this.importing ??= importKeyFile(db, file)
      .then((result) => {
        this.imported = true;
        if (result.already) return;
        this.deps.log.info({ file: file.path, keys: file.keys.length, added: result.added, revoked: result.revoked }, 'API key file imported into the database (once; the database holds the keys from now on)');
        if (result.added + result.revoked > 0) void this.deps.announce?.({ op: 'imported', version: result.version }).catch(() => {});
      })
      .finally(() => (this.importing = undefined));
    return this.importing;
  }

  private get databaseStarted(): boolean {
    const state = this.deps.db.state;
    return state === 'open' || state === 'failed';
  }

  private async sync(): Promise<void> {
    const full = this.fullReloadWanted || this.version === undefined;
    this.fullReloadWanted = false;
    try {
      await this.deps.db.use(async (db) => {
        await this.importFile(db);
        // The marker first, then the rows: rows read after it are at least as new, so no change is missed.
        const version = await keysVersion(db);
        if (!full && version === this.version) return;
        this.replace(await listKeys(db), version);
      });
    } catch (err) {
      if (full) this.fullReloadWanted = true;
      throw err;
    }
  }

  private replace(rows: KeyRecord[], version: number): void {
    const next = new Map<string, KeyIdentity | null>();
    for (const r of rows) next.set(r.hash, r.revoked_at ? null : { id: r.id, label: r.label });
    for (const hash of this.heardRevoked) {
      if (next.get(hash) === null) this.heardRevoked.delete(hash);
      else next.set(hash, null);
    }
    this.dbKeys = next;
    this.version = version;
    this.generation++;
    this.memo.clear();
  }

  private revokeLocally(hash: string): void {
    this.heardRevoked.add(hash);
    this.dbKeys.set(hash, null);
    this.generation++;
    this.memo.clear();
  }

  private remember(raw: string, verdict: KeyIdentity | null): void {
    // Bounded: a flood of random keys cannot grow it; it is rebuilt from scratch past the limit.
    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    this.memo.set(raw, verdict);
  }
}

const errorText = (err: unknown) => String((err as Error)?.message ?? err);
