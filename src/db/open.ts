// Opens the configured database and brings its schema up to date: a PostgreSQL server when
// DATABASE_URL is set, else the embedded PGlite in DATA_DIR. Each implementation is imported only
// when chosen, so neither client library is loaded by a process that does not use it.
import type { Database } from './database.ts';
import { migrate } from './migrations.ts';

export interface DatabaseSettings {
  /** DATA_DIR: the embedded database's directory (and the admin socket's). */
  dataDir: string;
  /** DATABASE_URL: a PostgreSQL server instead of the embedded database. */
  url: string | undefined;
  /** DB_TIMEOUT_MS: longest wait for a connection or a statement. */
  timeoutMs: number;
}

/** Where the data lives, in words for logs and messages (never the URL's password). */
export function describeDatabase(s: DatabaseSettings): string {
  if (!s.url) return `PGlite in ${s.dataDir}/pglite`;
  try {
    const u = new URL(s.url);
    return `PostgreSQL at ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

/** Opens the database `settings` name and migrates it; the result is ready for queries. */
export async function openDatabase(settings: DatabaseSettings, options: { signal?: AbortSignal } = {}): Promise<Database> {
  const db = settings.url
    ? await (await import('./postgres.ts')).openPostgres({ url: settings.url, timeoutMs: settings.timeoutMs })
    : await (await import('./pglite.ts')).openPglite(settings.dataDir, options);
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}
