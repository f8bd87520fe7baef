// Many rows in one INSERT, sent as one JSON parameter: `INSERT … SELECT (r->>0)::type, … FROM
// jsonb_array_elements($1::jsonb) r`. For the rows written behind (write-behind.ts), a few hundred at a time.
//
// Why not `VALUES ($1, …), ($24, …)`: with a parameter per value, a batch of 400 payment rows is 9,200 parameters,
// each framed by the driver (in the embedded database, by PGlite's JavaScript in its worker), and a statement of
// 9,200 placeholders for PostgreSQL to parse and plan. Measured on the embedded database, 400 `payments` rows cost
// about 80-170 µs of CPU a row that way and 40-60 µs as one JSON array (bench/README.md, the repeat buyer). The
// values are the same text PostgreSQL would have read from each parameter: a string as is, a Date as its ISO
// form (UTC), null as NULL; each is cast to its column's type by PostgreSQL, as a parameter is. A string with a lone
// UTF-16 surrogate is written with U+FFFD in its place, as a driver's UTF-8 encoding of a parameter writes it (JSON
// would carry the surrogate as an escape that PostgreSQL refuses, and the whole batch with it).
import type { Queryable } from './database.ts';

/** A column: its name and its PostgreSQL type, to which each row's text is cast. */
export type JsonColumn = readonly [name: string, type: string];

/** A row's values, in the order of its columns: text, a Date, or null. */
export type JsonRowValue = string | Date | null;

/** Rows a statement carries at most (a few hundred KB of JSON); more go in several statements, in order. */
export const ROWS_PER_STATEMENT = 1000;

/** Builds the statement once per table: `suffix` follows the SELECT (an `ON CONFLICT` clause). */
export function jsonRowsInsert(table: string, columns: readonly JsonColumn[], suffix = ''): (db: Queryable, rows: readonly (readonly JsonRowValue[])[]) => Promise<void> {
  for (const [name, type] of columns) if (!/^[a-z_][a-z0-9_]*$/.test(name) || !/^[a-z][a-z0-9_ (),]*$/.test(type)) throw new Error(`not a column: ${name} ${type}`);
  const sql =
    `INSERT INTO ${table} (${columns.map(([name]) => name).join(', ')}) ` +
    `SELECT ${columns.map(([, type], k) => `(r->>${k})::${type}`).join(', ')} FROM jsonb_array_elements($1::jsonb) AS r` +
    (suffix ? ` ${suffix}` : '');
  return async (db, rows) => {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await db.query(sql, [JSON.stringify(rows.slice(i, i + ROWS_PER_STATEMENT).map((row) => checked(table, columns.length, row)))]);
    }
  };
}

type Utf16 = string & { isWellFormed(): boolean; toWellFormed(): string };

/** The row as it is, or a copy with its lone surrogates replaced; throws on a row of the wrong width. */
function checked(table: string, width: number, row: readonly JsonRowValue[]): readonly JsonRowValue[] {
  if (row.length !== width) throw new Error(`a row of ${table} has ${row.length} values for ${width} columns`);
  for (let k = 0; k < width; k++) {
    const v = row[k];
    if (typeof v === 'string' && !(v as Utf16).isWellFormed()) return row.map((x) => (typeof x === 'string' ? (x as Utf16).toWellFormed() : x));
  }
  return row;
}
