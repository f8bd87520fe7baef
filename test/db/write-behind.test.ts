// write-behind.ts: rows gathered and written together, kept and tried again when a write fails, given up past the
// bound or at close, in order.
import { describe, expect, it } from 'vitest';
import { WriteBehind } from '../../src/db/write-behind.ts';

function harness(opts: { failFirst?: number; maxPending?: number } = {}) {
  const writes: number[][] = [];
  const lost: { rows: number[]; why: string }[] = [];
  let failures = opts.failFirst ?? 0;
  let failed = 0;
  const wb = new WriteBehind<number>({
    write: async (rows) => {
      if (failures > 0) {
        failures--;
        throw new Error('down');
      }
      writes.push(rows);
    },
    failed: () => void failed++,
    lost: (rows, why) => void lost.push({ rows, why }),
    flushMs: 5,
    maxPending: opts.maxPending,
  });
  return { wb, writes, lost, failed: () => failed };
}

describe('rows written behind', () => {
  it('writes the rows added within one flush interval in one write, in order', async () => {
    const h = harness();
    for (let i = 1; i <= 50; i++) h.wb.add(i);
    expect(h.wb.size).toBe(50);
    await expect.poll(() => h.writes.length).toBe(1);
    expect(h.writes[0]).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(h.wb.size).toBe(0);
  });

  it('keeps a batch whose write failed and writes it, before newer rows, at the next flush', async () => {
    const h = harness({ failFirst: 1 });
    h.wb.add(1);
    h.wb.add(2);
    await expect.poll(() => h.failed()).toBe(1);
    h.wb.add(3);
    await expect.poll(() => h.writes.flat()).toEqual([1, 2, 3]);
    expect(h.lost).toEqual([]);
  });

  it('gives up the oldest rows past its bound, and what is still unwritten at close', async () => {
    const h = harness({ failFirst: 100, maxPending: 3 });
    for (let i = 1; i <= 5; i++) h.wb.add(i);
    expect(h.lost).toEqual([{ rows: [1], why: 'more than 3 rows waiting to be written' }, { rows: [2], why: 'more than 3 rows waiting to be written' }]);
    await h.wb.close(2);
    expect(h.lost.at(-1)).toEqual({ rows: [3, 4, 5], why: 'still unwritten when the ledger closed' });
    expect(h.writes).toEqual([]);
    h.wb.add(6);
    expect(h.lost.at(-1)).toEqual({ rows: [6], why: 'the ledger is closed' });
  });

  it('close writes what waits', async () => {
    const h = harness();
    h.wb.add(7);
    await h.wb.close();
    expect(h.writes).toEqual([[7]]);
  });
});
