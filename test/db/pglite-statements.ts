// Run as a child process (`node --import tsx --trace-wasm-compilation-times test/db/pglite-statements.ts DIR`)
// by test/db/pglite-tiering.test.ts: opens the PGlite cluster in DIR as the server does and runs
// statements of the kinds the ledger and the usage counter run, so that V8 prints how it
// compiled each WebAssembly function meanwhile. (Its second argument: how many rounds of
// three statements, 100 by default.)
import { openPglite } from '../../src/db/pglite.ts';

const db = await openPglite(process.argv[2]!);
await db.query('create table t (id text primary key, calls bigint not null, at timestamptz not null default now())');
for (let i = 0; i < Number(process.argv[3] ?? 100); i++) {
  await db.query('insert into t (id, calls) values ($1, 1)', [`row-${i}`]);
  await db.query('insert into t (id, calls) values ($1, 1) on conflict (id) do update set calls = t.calls + excluded.calls', [`row-${i % 10}`]);
  await db.query('select id, calls, at from t where id = $1', [`row-${i}`]);
}
await db.close();
process.stdout.write('done\n');
