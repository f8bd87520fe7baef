// DatabaseService.useOnceOpen (src/db/service.ts): a read a request makes for its caller waits for an opening in
// progress up to DB_OPEN_WAIT_MS, rather than DB_TIMEOUT_MS, so the first requests after a start are answered once
// the database is ready; an opening that fails, or one that takes longer than that, is a 503 all the same.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { DatabaseService, DatabaseUnavailableError } from '../../src/db/service.ts';
import { memoryLog } from '../db-helpers.ts';

/** A database whose opening ends when the test says so. */
function opening() {
  let finish!: (db: Database) => void;
  let fail!: (err: Error) => void;
  const opened = new Promise<Database>((resolve, reject) => ((finish = resolve), (fail = reject)));
  const db = { kind: 'postgres', query: async () => [{ n: 1 }], transaction: async () => undefined, close: async () => {} } as unknown as Database;
  return { open: () => opened, finish: () => finish(db), fail };
}

const service = (open: () => Promise<Database>, openWaitMs: number) =>
  new DatabaseService({ open, timeoutMs: 100, openWaitMs, describe: 'test database', log: memoryLog(), retryOpenMs: 0 });

describe('DatabaseService.useOnceOpen', () => {
  it('waits for an opening that takes longer than DB_TIMEOUT_MS (where use gives up), then runs the statement', async () => {
    const o = opening();
    const db = service(o.open, 60_000);
    db.start();
    const early = db.use((d) => d.query('SELECT 1')).catch((e: unknown) => e);
    const waiting = db.useOnceOpen((d) => d.query('SELECT 1'));
    // use gives up at DB_TIMEOUT_MS while the database is still opening…
    expect(await early).toMatchObject({ statusCode: 503, message: 'database did not answer within 100 ms' });
    expect(db.state).toBe('opening');
    // …useOnceOpen is still waiting, and answers once it is open.
    o.finish();
    expect(await waiting).toEqual([{ n: 1 }]);
  });

  it('an opening past DB_OPEN_WAIT_MS is a 503 saying so; a failed opening fails at once', async () => {
    const slow = service(opening().open, 50);
    const err = await slow.useOnceOpen((d) => d.query('SELECT 1')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect(err).toMatchObject({ statusCode: 503, source: 'database', message: 'database still opening after 50 ms' });
    const o = opening();
    const failing = service(o.open, 60_000);
    const failed = failing.useOnceOpen((d) => d.query('SELECT 1')).catch((e: unknown) => e);
    o.fail(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }));
    expect(await failed).toMatchObject({ statusCode: 503, source: 'database', message: 'database unavailable: connect ECONNREFUSED 127.0.0.1:9' });
  });
});
