// What settling costs, from the ledger (npm run payments -- summary, /metrics): per scheme and network the calls
// paid, the transactions the facilitator submitted (an exact payment; a batch deposit, claim, settlement or refund —
// never a voucher's call, nor the deposit counted twice through its call's row), the free ones of each UTC month
// taken in the order they happened across schemes, the fees past them, the revenue and what is left of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrations.ts';
import { settlingCosts } from '../../src/db/settling-costs.ts';
import { memoryDatabase } from './pglite-database.ts';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const NET = 'eip155:8453';
const TX = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const oct = (d: number, h: number) => new Date(Date.UTC(2026, 9, d, h));
const nov = (d: number, h: number, m = 0) => new Date(Date.UTC(2026, 10, d, h, m));
const FEES = { feeUsd: '0.001', freePerMonth: 2 };
const decimals = (asset: string) => (asset === USDC ? 6 : undefined);

let db: Awaited<ReturnType<typeof memoryDatabase>>;
let n = 0;

async function paid(scheme: string, at: Date, o: { tx?: string | null; status?: string; amount?: string; asset?: string } = {}) {
  n++;
  await db.query(
    `INSERT INTO payments (id, request_id, route, resource_url, scheme, network, asset, amount_required, pay_to, payer, payload_hash, status, tx_hash, settled_amount, facilitator, verified_at, updated_at, finished_at)
     VALUES ($1, $1, '/v1/price', 'http://x/v1/price', $2, $3, $4, 1000, '0x1', '0x2', 'h', $5, $6, $7, 'f', $8, $8, $8)`,
    [`p${n}`, scheme, NET, o.asset ?? USDC, o.status ?? 'settled', o.tx ?? null, (o.status ?? 'settled') === 'settled' ? (o.amount ?? '1000') : null, at],
  );
}

async function event(type: string, at: Date, tx: string | null) {
  n++;
  await db.query('INSERT INTO x402_batch_events (id, type, at, network, amount, tx_hash) VALUES ($1, $2, $3, $4, 0, $5)', [`e${n}`, type, at, NET, tx]);
}

beforeAll(async () => {
  db = await memoryDatabase();
  await migrate(db);
  // October: three exact settlements (two free, one charged), a cancelled attempt (nothing settled).
  for (const h of [10, 11, 12]) await paid('exact', oct(30, h), { tx: TX(h) });
  await paid('exact', oct(30, 13), { status: 'cancelled' });
  // October 31: a batch deposit (charged: the month's fourth), with its call's row naming the deposit's transaction,
  // then four voucher calls (no transaction), and their charge events (none on chain).
  await event('deposit', oct(31, 9), TX(100));
  await paid('batch-settlement', oct(31, 9), { tx: TX(100) });
  for (const h of [10, 11, 12, 13]) {
    await paid('batch-settlement', oct(31, h));
    await event('charge', oct(31, h), null);
  }
  // November: a claim and a settlement (the month's two free ones), then an exact payment (charged).
  await event('claim', nov(1, 0, 10), TX(101));
  await event('settle', nov(1, 0, 11), TX(102));
  await paid('exact', nov(1, 1), { tx: TX(200) });
}, 120_000);
afterAll(() => db?.close());

describe('settling costs', () => {
  it('all time: paid calls, settlements, the free ones of each month, fees past them, revenue and net', async () => {
    expect(await settlingCosts(db, {}, FEES, decimals)).toEqual([
      { scheme: 'exact', network: NET, paid_calls: 4, settlements: 4, free_settlements: 2, facilitator_fees_usd: '0.002', revenue_usd: '0.004', net_usd: '0.002' },
      { scheme: 'batch-settlement', network: NET, paid_calls: 5, settlements: 3, free_settlements: 2, facilitator_fees_usd: '0.001', revenue_usd: '0.005', net_usd: '0.004' },
    ]);
  });

  it("a period inside a month: the month's earlier settlements still took its free ones", async () => {
    expect(await settlingCosts(db, { since: nov(1, 0, 30) }, FEES, decimals)).toEqual([
      { scheme: 'exact', network: NET, paid_calls: 1, settlements: 1, free_settlements: 0, facilitator_fees_usd: '0.001', revenue_usd: '0.001', net_usd: '0' },
    ]);
    expect(await settlingCosts(db, { since: nov(1, 0), until: nov(1, 0, 30) }, FEES, decimals)).toEqual([
      { scheme: 'batch-settlement', network: NET, paid_calls: 0, settlements: 2, free_settlements: 2, facilitator_fees_usd: '0', revenue_usd: '0', net_usd: '0' },
    ]);
  });

  it('a facilitator that charges nothing, and a token whose decimals are unknown (revenue not guessed)', async () => {
    const free = await settlingCosts(db, {}, { feeUsd: '0', freePerMonth: 0 }, () => undefined);
    expect(free.map((r) => [r.scheme, r.free_settlements, r.facilitator_fees_usd, r.revenue_usd, r.net_usd])).toEqual([
      ['exact', 0, '0', null, null],
      ['batch-settlement', 0, '0', null, null],
    ]);
  });
});
