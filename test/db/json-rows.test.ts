// Rows written behind go to the ledger as one JSON parameter (src/db/json-rows.ts): what lands must be what a
// parameter per value would have written, on the embedded database and on a PostgreSQL server alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/db/database.ts';
import { jsonRowsInsert, ROWS_PER_STATEMENT, type JsonRowValue } from '../../src/db/json-rows.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { startPostgres, type TestPostgres } from '../servers/postgres.ts';
import { memoryDatabase } from './pglite-database.ts';

let server: TestPostgres | undefined;
afterAll(async () => {
  await server?.stop();
});

const BACKENDS: { name: string; open: () => Promise<Database> }[] = [
  { name: 'PGlite', open: () => memoryDatabase() },
  {
    name: 'PostgreSQL server',
    open: async () => {
      server ??= await startPostgres();
      return openPostgres({ url: await server.createDatabase('json_rows'), timeoutMs: 5000 });
    },
  },
];

const TABLE = `CREATE TABLE IF NOT EXISTS {t} (id text PRIMARY KEY, amount numeric(78, 0), at timestamptz, note text, detail jsonb)`;
const COLUMNS = [['id', 'text'], ['amount', 'numeric'], ['at', 'timestamptz'], ['note', 'text'], ['detail', 'jsonb']] as const;

/** Values a parameter carries as text, and the ones that text has trouble with. */
const ROWS: JsonRowValue[][] = [
  ['plain', '1000', new Date(Date.UTC(2026, 11, 7, 23, 0, 0, 123)), 'a payment', JSON.stringify({ cumulative: '2000' })],
  ['nulls', '0', new Date(0), null, null],
  ['largest', (2n ** 256n - 1n).toString(), new Date(Date.UTC(1999, 0, 1)), '', JSON.stringify({ claims: [{ amount: '1', payer: '0x22' }] })],
  ['quotes', '1', new Date(Date.UTC(2030, 5, 30, 12)), `it's "quoted" \\ back\\slashed, {braces}, (parens), $1, ->>0`, JSON.stringify('a "string" detail')],
  ['unicode', '2', new Date(Date.UTC(2026, 0, 1)), 'naïve café — 日本語 🚀 \u05d0\u05d1 \\x0a', JSON.stringify({ 'ключ': '🚀' })],
  ['surrogate', '3', new Date(Date.UTC(2026, 0, 2)), 'lone \ud800 high and \udc00 low', null],
];

describe.each(BACKENDS)('$name', ({ name, open }) => {
  let db: Database;
  beforeAll(async () => {
    db = await open();
    for (const t of ['by_json', 'by_params']) await db.query(TABLE.replace('{t}', t));
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  const read = (t: string) => db.query(`SELECT id, amount::text AS amount, at, note, detail FROM ${t} ORDER BY id`);

  it('writes every row in one statement, exactly as one parameter per value writes it', async () => {
    const statements: string[] = [];
    const counting: Queryable = { query: <Row,>(sql: string, params?: readonly unknown[]) => (statements.push(sql), db.query<Row>(sql, params)) };
    await jsonRowsInsert('by_json', COLUMNS)(counting, ROWS);
    expect(statements).toHaveLength(1);
    for (const row of ROWS) await db.query('INSERT INTO by_params (id, amount, at, note, detail) VALUES ($1, $2, $3, $4, $5)', row);
    const written = await read('by_json');
    expect(written).toHaveLength(ROWS.length);
    expect(written).toEqual(await read('by_params'));
    // What the values read back as, beyond agreeing with the parameters.
    const byId = new Map(written.map((r) => [r.id, r]));
    expect(byId.get('largest')).toMatchObject({ amount: (2n ** 256n - 1n).toString(), note: '' });
    expect(byId.get('nulls')).toMatchObject({ note: null, detail: null, at: new Date(0) });
    expect(byId.get('plain')).toMatchObject({ at: new Date(Date.UTC(2026, 11, 7, 23, 0, 0, 123)), detail: { cumulative: '2000' } });
    expect(byId.get('unicode')!.note).toBe('naïve café — 日本語 🚀 \u05d0\u05d1 \\x0a');
    expect(byId.get('surrogate')!.note).toBe('lone \ufffd high and \ufffd low');
  });

  it('keeps the statement’s suffix (ON CONFLICT), writes nothing for no rows, and refuses a row of the wrong width', async () => {
    const insert = jsonRowsInsert('by_json', COLUMNS, 'ON CONFLICT (id) DO NOTHING');
    await insert(db, [ROWS[0]!, ['another', '5', new Date(1), null, null]]);
    expect((await read('by_json')).map((r) => r.id)).toContain('another');
    let asked = 0;
    await insert({ query: async () => (asked++, []) }, []);
    expect(asked).toBe(0);
    await expect(insert(db, [['short', '1']])).rejects.toThrow('a row of by_json has 2 values for 5 columns');
    expect(() => jsonRowsInsert('t', [['id; DROP TABLE t', 'text']])).toThrow('not a column');
    expect(name).toMatch(/PGlite|PostgreSQL/);
  });

  it('writes more rows than a statement carries in several statements, every row landing once', async () => {
    const insert = jsonRowsInsert('by_json', COLUMNS, 'ON CONFLICT (id) DO NOTHING');
    const many: JsonRowValue[][] = Array.from({ length: 2 * ROWS_PER_STATEMENT + 1 }, (_, i) => [`many-${i}`, String(i), new Date(i), null, null]);
    const statements: number[] = [];
    const counting: Queryable = { query: async (sql, params) => (statements.push((JSON.parse(String(params![0])) as unknown[]).length), db.query(sql, params)) };
    await insert(counting, many);
    expect(statements).toEqual([ROWS_PER_STATEMENT, ROWS_PER_STATEMENT, 1]);
    const landed = (await read('by_json')).filter((r) => String(r.id).startsWith('many-'));
    expect(landed).toHaveLength(many.length);
    expect(landed.find((r) => r.id === `many-${2 * ROWS_PER_STATEMENT}`)).toMatchObject({ amount: String(2 * ROWS_PER_STATEMENT) });
  });
});
