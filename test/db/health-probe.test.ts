// The database's health kept current between requests (DatabaseService.keepHealthCurrent): one SELECT 1 per
// interval when no statement was answered meanwhile, none when one was, a failure reported to the health, and
// nothing after close. The clock is vitest's, so the intervals pass when the test says so.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { DatabaseService } from '../../src/db/service.ts';

const EVERY_MS = 2000;
const log = { info: () => {}, warn: () => {}, error: () => {} };

/** A database that keeps the statements it is sent, and refuses them (connection refused) while `down`. */
function recordingDatabase() {
  const sent: string[] = [];
  const state = { down: false };
  const db: Database = {
    kind: 'postgres',
    query: async <Row>(sql: string) => {
      sent.push(sql);
      if (state.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return [] as Row[];
    },
    transaction: async (fn) => fn(db),
    close: async () => {},
  };
  return { db, sent, state };
}

describe('the database health kept current', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('asks SELECT 1 when nothing was answered for an interval, not when a statement was; reports a failure; stops on close', async () => {
    const { db, sent, state } = recordingDatabase();
    const health = { ok: vi.fn(), failed: vi.fn() };
    const service = new DatabaseService({ open: async () => db, timeoutMs: 1000, describe: 'test', log, health });
    await service.ready();
    service.keepHealthCurrent(EVERY_MS);

    await vi.advanceTimersByTimeAsync(EVERY_MS);
    expect(sent).toEqual(['SELECT 1']);
    expect(health.ok).toHaveBeenCalledTimes(1);

    // A statement answered half an interval before the next tick: that tick asks nothing.
    await vi.advanceTimersByTimeAsync(EVERY_MS / 2);
    await service.use((d) => d.query('SELECT count(*) FROM payments'));
    await vi.advanceTimersByTimeAsync(EVERY_MS / 2);
    expect(sent).toEqual(['SELECT 1', 'SELECT count(*) FROM payments']);

    // Nothing answered since: the next tick asks, and the refusal is told to the health.
    state.down = true;
    await vi.advanceTimersByTimeAsync(EVERY_MS);
    expect(sent).toEqual(['SELECT 1', 'SELECT count(*) FROM payments', 'SELECT 1']);
    expect(health.failed).toHaveBeenCalledTimes(1);

    await service.close();
    await vi.advanceTimersByTimeAsync(5 * EVERY_MS);
    expect(sent).toHaveLength(3);
  });
});
