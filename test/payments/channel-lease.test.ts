// The batch-settlement channels' single writer (channel-lease.ts) over one ledger database shared by two instances:
// changes on the instance holding a channel are made in memory and written behind (a few writes for many changes),
// changes from both instances at once never interleave (every increment counted once), a channel moves to the
// instance that asks for it with its latest state, and what is held is written and handed back on close.
import type { Channel } from '@x402/evm/batch-settlement/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrations.ts';
import { createChannelStorage, peekChannelLease, takeChannelLease, wantedChannelLeases, writeChannelLease } from '../../src/db/x402-channels.ts';
import { LEASE_TIMING, LeasedChannels, type LeaseStore } from '../../src/payments/schemes/batch-settlement/channel-lease.ts';
import { memoryDatabase } from '../db/pglite-database.ts';

let db: Awaited<ReturnType<typeof memoryDatabase>>;
beforeAll(async () => {
  db = await memoryDatabase();
  await migrate(db);
}, 120_000);
afterAll(() => db?.close());

/** The ledger's leases, counting the writes of channel state. */
function store(d: Database, writes: { n: number }): LeaseStore {
  const ledger = createChannelStorage(d);
  return {
    peek: (id, owner) => peekChannelLease(d, id, owner),
    list: () => ledger.list(),
    take: (id, owner, ms) => takeChannelLease(d, id, owner, ms),
    write: (id, owner, state, answer, ms, release) => (writes.n++, writeChannelLease(d, id, owner, state, answer, ms, release)),
    wanted: (ids, owner) => wantedChannelLeases(d, ids, owner),
  };
}

const id = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const channel = (n: number): Channel => ({
  channelId: id(n),
  channelConfig: {} as Channel['channelConfig'],
  chargedCumulativeAmount: '0',
  signedMaxClaimable: '0',
  signature: '0x',
  balance: '100000',
  totalClaimed: '0',
  withdrawRequestedAt: 0,
  refundNonce: 0,
  lastRequestTimestamp: 0,
});
const bump = (c: Channel | undefined): Channel => ({ ...c!, chargedCumulativeAmount: String(BigInt(c!.chargedCumulativeAmount) + 1000n) });
const stored = async (n: number) => (await db.query<{ state: Channel | null }>('SELECT state FROM x402_channels WHERE channel_id = $1', [id(n)]))[0]?.state?.chargedCumulativeAmount;

describe('one channel, one writer', () => {
  it('100 changes on the instance holding it: made in memory, written behind in a few writes', async () => {
    const writes = { n: 0 };
    const a = new LeasedChannels(store(db, writes));
    await a.updateChannel(id(1), () => channel(1));
    for (let i = 0; i < 100; i++) await a.updateChannel(id(1), bump);
    expect((await a.get(id(1)))?.chargedCumulativeAmount).toBe('100000');
    expect(writes.n).toBeLessThan(10);
    await expect.poll(() => stored(1), { timeout: 5000 }).toBe('100000');
    await a.close();
    expect(a.holding).toBe(0);
  });

  it('two instances changing one channel at once: every change counted once, in turn', async () => {
    const writes = { n: 0 };
    const a = new LeasedChannels(store(db, writes));
    const b = new LeasedChannels(store(db, writes));
    await a.updateChannel(id(2), () => channel(2));
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).updateChannel(id(2), bump)));
    // Whichever holds it now has the latest state; the other reads it through the lease.
    expect((await b.get(id(2)))?.chargedCumulativeAmount).toBe('20000');
    expect((await a.get(id(2)))?.chargedCumulativeAmount).toBe('20000');
    await Promise.all([a.close(), b.close()]);
    expect(await stored(2)).toBe('20000');
  });

  it('a channel another instance holds is handed over with its latest state, written or not', async () => {
    const writes = { n: 0 };
    const a = new LeasedChannels(store(db, writes));
    const b = new LeasedChannels(store(db, writes));
    await a.updateChannel(id(3), () => channel(3));
    await a.updateChannel(id(3), bump); // in a's memory, perhaps not written yet
    const moved = await b.updateChannel(id(3), bump);
    expect(moved.channel?.chargedCumulativeAmount).toBe('2000');
    await Promise.all([a.close(), b.close()]);
    expect(await stored(3)).toBe('2000');
  });
});

describe('what a claim is made from', () => {
  it("lists what is written: a held channel's latest changes are written before it is listed, so a claim is never ahead of the ledger", async () => {
    const writes = { n: 0 };
    const a = new LeasedChannels(store(db, writes), { ...LEASE_TIMING, flushMs: 60_000, idleMs: 60_000 }); // nothing written behind meanwhile
    await a.updateChannel(id(9), () => channel(9));
    for (let i = 0; i < 3; i++) await a.updateChannel(id(9), bump);
    expect(await stored(9)).toBeUndefined();
    const listed = (await a.list()).find((c) => c.channelId === id(9));
    expect(listed?.chargedCumulativeAmount).toBe('3000');
    expect(await stored(9)).toBe('3000');
    await a.close();
  });
});

describe('a holder that dies', () => {
  it("its reservation of a call in flight, written behind with the state, is dropped by the instance that takes the lapsed lease", async () => {
    const writes = { n: 0 };
    // The dead holder: its state written with a reservation (pendingRequest), its lease left to lapse (never released).
    const reserved = { ...channel(7), pendingRequest: { pendingId: 'p-dead', signedMaxClaimable: '1000', expiresAt: Date.now() + 60_000 } };
    expect(await takeChannelLease(db, id(7), 'dead-instance', 300)).toMatchObject({ taken: true, lapsed: false });
    expect(await writeChannelLease(db, id(7), 'dead-instance', reserved, undefined, 300, false)).toEqual({ held: true, wanted: false });
    const heir = new LeasedChannels(store(db, writes), { ...LEASE_TIMING, waitMs: 5000 });
    // Taken once the lease lapses: the state, without the dead call's reservation (it would hold the channel busy).
    const state = await heir.updateChannel(id(7), (c) => c);
    expect(state.channel?.chargedCumulativeAmount).toBe('0');
    expect(state.channel?.pendingRequest).toBeUndefined();
    await expect.poll(async () => (await db.query<{ state: Channel }>('SELECT state FROM x402_channels WHERE channel_id = $1', [id(7)]))[0]!.state.pendingRequest, { timeout: 5000 }).toBeUndefined();
    await heir.close();
    // A released lease is no death: what was written stays as it is.
    expect(await takeChannelLease(db, id(8), 'leaving-instance', 3000)).toMatchObject({ taken: true, lapsed: false });
    await writeChannelLease(db, id(8), 'leaving-instance', { ...channel(8), pendingRequest: reserved.pendingRequest }, undefined, 3000, true);
    expect(await takeChannelLease(db, id(8), 'next-instance', 3000)).toMatchObject({ taken: true, lapsed: false, state: { pendingRequest: { pendingId: 'p-dead' } } });
  });
});
