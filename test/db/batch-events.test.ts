// Batch settlement's steps in the ledger (x402_batch_events): every event the scheme reports becomes one row,
// read back in order; a write that fails is retried in the background, never failing the caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBatchEventRow, type BatchSettlementEvent } from '../../src/payments/schemes/batch-settlement/batch-events.ts';
import { BatchEventRecords } from '../../src/db/batch-events.ts';
import { migrate } from '../../src/db/migrations.ts';
import { instrument, memoryLog, serviceOver } from '../db-helpers.ts';
import { memoryDatabase } from './pglite-database.ts';

const CHANNEL = `0x${'c1'.repeat(32)}` as const;
const PAYER = '0x2222222222222222222222222222222222222222' as const;
const TX = (n: number) => `0x${String(n).repeat(64)}`;
const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, s));

const EVENTS: (BatchSettlementEvent & { at: Date })[] = [
  { type: 'deposit', at: at(0), network: 'eip155:8453', channelId: CHANNEL, payer: PAYER, amount: '100000', transaction: TX(1) },
  { type: 'charge', at: at(1), network: 'eip155:8453', channelId: CHANNEL, payer: PAYER, amount: '1000', cumulative: '1000' },
  { type: 'charge', at: at(2), network: 'eip155:8453', channelId: CHANNEL, payer: PAYER, amount: '1000', cumulative: '2000' },
  { type: 'claim', at: at(3), network: 'eip155:8453', transaction: TX(2), claims: [{ channelId: CHANNEL, payer: PAYER, totalClaimed: '2000', amount: '2000' }] },
  { type: 'settle', at: at(4), network: 'eip155:8453', transaction: TX(3), receiver: '0x3333333333333333333333333333333333333333', token: '0x4444444444444444444444444444444444444444', amount: '2000' },
  { type: 'refund', at: at(5), network: 'eip155:8453', channelId: CHANNEL, payer: PAYER, amount: '98000', transaction: TX(4) },
];

let db: Awaited<ReturnType<typeof memoryDatabase>>;
beforeAll(async () => {
  db = await memoryDatabase();
  await migrate(db);
}, 120_000);
afterAll(() => db?.close());

describe('the batch-settlement ledger', () => {
  it('records deposit → charges → claim → settle → refund, one row each, amounts exact, read back in order', async () => {
    const ledger = new BatchEventRecords(serviceOver(db), memoryLog());
    for (const e of EVENTS) await ledger.record(toBatchEventRow(e));
    const rows = await ledger.list();
    expect(rows.map((r) => [r.type, r.amount, r.transaction ?? null])).toEqual([
      ['deposit', '100000', TX(1)],
      ['charge', '1000', null],
      ['charge', '1000', null],
      ['claim', '2000', TX(2)],
      ['settle', '2000', TX(3)],
      ['refund', '98000', TX(4)],
    ]);
    expect(rows[2]).toMatchObject({ channelId: CHANNEL, payer: PAYER, detail: { cumulative: '2000' }, at: '2026-11-24T12:00:02.000Z' });
    expect(rows[3]!.detail).toEqual({ claims: [{ channelId: CHANNEL, payer: PAYER, totalClaimed: '2000', amount: '2000' }] });
    expect(await ledger.list(at(4))).toHaveLength(2);
    await ledger.close();
  });

  it('a write the database refuses never fails the caller; it is retried and lands', async () => {
    const flaky = instrument(db);
    flaky.failWhen = (sql) => sql.includes('INSERT INTO x402_batch_events');
    const log = memoryLog();
    const ledger = new BatchEventRecords(serviceOver(flaky), log);
    const before = (await ledger.list()).length;
    await expect(ledger.record(toBatchEventRow({ ...EVENTS[1]!, at: at(30) }))).resolves.toBeUndefined();
    expect(log.text()).toMatch(/could not record an event; retrying/);
    flaky.failWhen = undefined;
    await ledger.close(); // the last attempt at shutdown writes it
    expect(await new BatchEventRecords(serviceOver(db), memoryLog()).list()).toHaveLength(before + 1);
  });

  it('events of one instant read back in the order money takes (the call that opens a channel records its deposit and its charge at once); a limit keeps the newest', async () => {
    const ledger = new BatchEventRecords(serviceOver(db), memoryLog());
    const when = at(50);
    const channel = `0x${'c2'.repeat(32)}`;
    // Ids are random: here the charge's id sorts before the deposit's, and the settle's before the claim's.
    const rows: [string, string][] = [['00000000-charge', 'charge'], ['ffffffff-deposit', 'deposit'], ['00000000-settle', 'settle'], ['ffffffff-claim', 'claim']];
    for (const [id, type] of rows) {
      await db.query('INSERT INTO x402_batch_events (id, type, at, network, channel_id, amount) VALUES ($1, $2, $3, $4, $5, 1)', [id, type, when, 'eip155:8453', channel]);
    }
    expect((await ledger.list(when)).filter((r) => r.at === when.toISOString()).map((r) => r.type)).toEqual(['deposit', 'charge', 'claim', 'settle']);
    // A limit keeps the newest events (what an operator looks at), still oldest first.
    expect((await ledger.list(undefined, 2)).map((r) => r.type)).toEqual(['claim', 'settle']);
    await ledger.close();
  });
});
