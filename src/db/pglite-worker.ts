// Worker thread that owns the embedded database: PGlite (PostgreSQL compiled to WebAssembly) runs
// here, never on the server's event loop. Opening it runs Postgres's start-up (and initdb the first
// time) for seconds of CPU, and every statement runs synchronously inside WebAssembly; on the main
// thread that held /health and every request (measured: stalls of 4 to 5 s while it opened on a busy
// 2-core machine). pglite.ts is the main thread's side; the protocol is one message per call:
//
//   { id, op: 'initdb', dir }               → creates the cluster (into a staging directory renamed into
//                                             place); sent to a worker of its own, ended afterwards, so
//                                             initdb's memory (hundreds of MB) goes with it
//   { id, op: 'open', dir }                 → opens the cluster
//   { id, op: 'query', sql, params, tx? }   → rows (in transaction `tx` when given)
//   { id, op: 'begin' }                     → a transaction id; PGlite holds it until commit/rollback
//   { id, op: 'commit' | 'rollback', tx }
//   { id, op: 'close' }
// Every answer is { id, ok: true, value } or { id, ok: false, error: { message, code } }.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import './pglite-owner-only.ts'; // before PGlite: its files are owner-only
import { PGlite, type Transaction } from '@electric-sql/pglite';

/** PostgreSQL's `date` (OID 1082) as its 'YYYY-MM-DD' text, as node-postgres is told to give it (PGlite would make a local-midnight Date). */
const PARSERS = { 1082: (v: string) => v };

type Request =
  | { id: number; op: 'initdb' | 'open'; dir: string }
  | { id: number; op: 'query'; sql: string; params: unknown[]; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'commit' | 'rollback'; tx: number }
  | { id: number; op: 'close' };

let pg: PGlite | undefined;
let nextTx = 1;
const transactions = new Map<number, { tx: Transaction; finish: (commit: boolean) => void; done: Promise<unknown> }>();
const ROLLBACK = Symbol('rollback');

async function handle(req: Request): Promise<unknown> {
  switch (req.op) {
    case 'initdb': {
      if (existsSync(join(req.dir, 'PG_VERSION'))) return null;
      const staging = `${req.dir}.initdb`;
      rmSync(staging, { recursive: true, force: true });
      await (await PGlite.create(staging)).close();
      renameSync(staging, req.dir);
      return null;
    }
    case 'open': {
      pg = await PGlite.create(req.dir, { parsers: PARSERS });
      return null;
    }
    case 'query': {
      const target = req.tx === undefined ? open() : transactions.get(req.tx)?.tx;
      if (!target) throw new Error(`no transaction ${req.tx}`);
      return (await target.query(req.sql, req.params)).rows;
    }
    case 'begin': {
      const id = nextTx++;
      return new Promise<number>((begun, failed) => {
        let finish!: (commit: boolean) => void;
        const decided = new Promise<boolean>((resolve) => (finish = resolve));
        const done = open()
          .transaction(async (tx) => {
            transactions.set(id, { tx, finish, done });
            begun(id);
            if (!(await decided)) throw ROLLBACK;
          })
          .catch((err) => {
            if (err !== ROLLBACK) throw err;
          })
          .finally(() => transactions.delete(id));
        done.catch(failed);
      });
    }
    case 'commit':
    case 'rollback': {
      const t = transactions.get(req.tx);
      if (!t) throw new Error(`no transaction ${req.tx}`);
      t.finish(req.op === 'commit');
      await t.done;
      return null;
    }
    case 'close': {
      await pg?.close();
      pg = undefined;
      return null;
    }
  }
}

function open(): PGlite {
  if (!pg) throw new Error('the PGlite database is not open');
  return pg;
}

parentPort!.on('message', (req: Request) => {
  handle(req).then(
    (value) => parentPort!.postMessage({ id: req.id, ok: true, value }),
    (err: unknown) => {
      const e = err as { message?: string; code?: string };
      parentPort!.postMessage({ id: req.id, ok: false, error: { message: e?.message ?? String(err), code: e?.code } });
    },
  );
});
