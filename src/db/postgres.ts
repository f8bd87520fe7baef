// A PostgreSQL server (DATABASE_URL) through node-postgres's pool, shared by every instance of the
// server. `pg` is loaded when the database is opened, so the embedded default never loads it.
//
// Bounded: connecting, and every statement, fail within `timeoutMs` (the pool's connection timeout,
// the client's read timeout, and the server's own statement_timeout), so a server that is down or
// hung turns into a prompt error, never a request that waits forever.
import type { Pool, PoolClient } from 'pg';
import type { Database, Queryable } from './database.ts';

export interface PostgresOptions {
  url: string;
  /** Longest wait for a connection or for one statement (ms). */
  timeoutMs: number;
  /** Connections in the pool. */
  maxConnections?: number;
}

const INT8_OID = 20;
const DATE_OID = 1082;

export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const { default: pg } = await import('pg');
  // The same values as PGlite gives (database.ts): int8 as a number, date as its text.
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID ? Number : oid === DATE_OID ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text'),
  };
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.timeoutMs,
    query_timeout: options.timeoutMs,
    statement_timeout: options.timeoutMs,
    idle_in_transaction_session_timeout: Math.max(options.timeoutMs * 5, 10_000),
    keepAlive: true,
    types,
  } as ConstructorParameters<typeof pg.Pool>[0]);
  // An idle connection the server drops (restart, network) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new PostgresDatabase(pool);
  try {
    await db.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  return db;
}

class PostgresDatabase implements Database {
  readonly kind = 'postgres';

  constructor(private readonly pool: Pool) {}

  async query<Row>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.pool.query(sql, params as unknown[])).rows as Row[];
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const result = await fn(clientQueryable(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollbackErr: unknown) => (broken = rollbackErr));
      throw err;
    } finally {
      // A connection whose rollback failed is in an unknown state: destroy it rather than reuse it.
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

const clientQueryable = (client: PoolClient): Queryable => ({
  query: async <Row>(sql: string, params: readonly unknown[] = []) => (await client.query(sql, params as unknown[])).rows as Row[],
});
