// A Database (src/db/database.ts) over an in-memory PGlite, for tests of parts that store durable data.
// (The server's own PGlite/PostgreSQL implementations come with the ledger; this one only adapts the API.)
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { Database, Queryable } from '../../src/db/database.ts';

export async function memoryDatabase(): Promise<Database & { pg: PGlite }> {
  const pg = await PGlite.create();
  const over = (q: PGlite | Transaction): Queryable => ({
    query: async <Row,>(sql: string, params: readonly unknown[] = []) => (await q.query<Row>(sql, params as unknown[])).rows,
  });
  return {
    kind: 'pglite',
    pg,
    ...over(pg),
    transaction: (fn) => pg.transaction((tx) => fn(over(tx))),
    close: () => pg.close(),
  };
}
