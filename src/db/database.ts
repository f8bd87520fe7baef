// The one interface every part of the server uses to reach the ledger database: PostgreSQL, either
// embedded (PGlite, in DATA_DIR, the default) or a server (DATABASE_URL). Parts that store durable
// data (payments, payment identifiers, per-key usage, API keys, payment channels) take a Database and
// write plain SQL that runs the same on both.
//
// Both implementations return the same JavaScript values for the types the schema uses, so a part
// never needs to know which one it talks to: int2/int4/int8 → number (the counts and ids stored here
// stay far below 2^53), numeric → string (exact: token amounts in atomic units), date → 'YYYY-MM-DD'
// string (no time zone shift), timestamptz → Date, json/jsonb → the parsed value, text → string.

/** Something SQL can be sent to: the database itself, or one transaction of it. */
export interface Queryable {
  /** Runs one statement with `$1, $2, …` parameters and returns its rows. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

export interface Database extends Queryable {
  /** `pglite` (embedded, one process owns it) or `postgres` (a server, shared by every instance). */
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The `code` of the errors a Database answers with once it is gone for good (the worker running the
 * embedded database died): whoever holds it should open a new one.
 */
export const DATABASE_GONE = 'EDATABASEGONE';

/** A database used but not owned (tests share one): closing it leaves it open. */
export const borrowed = (db: Database): Database => ({
  kind: db.kind,
  query: <Row>(sql: string, params?: readonly unknown[]) => db.query<Row>(sql, params),
  transaction: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction<T>(fn),
  close: async () => {},
});
