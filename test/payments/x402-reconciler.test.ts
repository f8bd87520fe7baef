// The reconciler's schedule and its verdicts, over a ledger and a chain that answer as told (the end-to-end
// cases, on a real chain and a killed server process, are in x402-crash.test.ts): its first pass waits for the
// database to open (the embedded one takes seconds), and each verdict of the chain becomes the status it says.
import { describe, expect, it } from 'vitest';
import type { ChainVerdict } from '../../src/payments/core/outcome.ts';
import { PaymentReconciler } from '../../src/payments/core/reconciler.ts';
import type { PaymentRecord } from '../../src/db/payment-rows.ts';
import { memoryLog } from '../db-helpers.ts';

const row = (id: string, status: 'verified' | 'unknown'): PaymentRecord =>
  ({
    id,
    status,
    network: 'eip155:8453',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    pay_to: '0x1111111111111111111111111111111111111111',
    payer: '0x2222222222222222222222222222222222222222',
    amount_required: '1000',
    authorization_nonce: `0x${id.padStart(64, '0')}`,
    valid_before: '2026-11-24T02:00:00.000Z',
    verified_at: '2026-11-24T01:59:00.000Z',
  }) as PaymentRecord;

function setup(verdicts: Record<string, ChainVerdict>) {
  const calls: string[] = [];
  const ledger = {
    unfinished: async () => {
      calls.push('unfinished');
      return Object.keys(verdicts).map((id) => row(id, id.startsWith('a') ? 'unknown' : 'verified'));
    },
    recordSettled: async (id: string, s: { txHash: string | null; chain?: string }) => void calls.push(`settled ${id} ${s.txHash} (${s.chain})`),
    recordSettleFailed: async (id: string, f: { errorReason: string }) => void calls.push(`settle_failed ${id}: ${f.errorReason}`),
    recordCancelled: async (id: string, reason: string) => void calls.push(`cancelled ${id}: ${reason}`),
    noteChain: async (id: string, state: string) => void calls.push(`noted ${id}: ${state}`),
  };
  const chain = { check: async (a: { nonce: string }) => verdicts[BigInt(a.nonce).toString(16)]! };
  return { calls, ledger, chain };
}

describe('payment reconciliation from the chain', () => {
  it('the first pass waits for the database to open, then gives each row the status the chain says', async () => {
    const { calls, ledger, chain } = setup({
      a1: { kind: 'landed', txHash: `0x${'ab'.repeat(32)}`, state: 'used in 0xab…' },
      b2: { kind: 'not_landed', state: 'unused, past validBefore' },
      a3: { kind: 'not_landed', state: 'unused, past validBefore' },
      b4: { kind: 'used_elsewhere', state: 'canceled by the payer' },
      b5: { kind: 'pending', state: 'unused, validBefore ahead' },
      b6: { kind: 'unreachable', state: 'the chain could not be asked' },
    });
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const reconciler = new PaymentReconciler({ records: ledger as never, chains: new Map([['eip155:8453', chain as never]]), intervalMs: 3_600_000, log: memoryLog() as never, ready: () => opened });
    reconciler.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toEqual([]); // the database is not open yet: nothing asked
    open();
    await expect.poll(() => calls.length).toBe(7);
    expect(calls).toEqual([
      'unfinished',
      `settled a1 0x${'ab'.repeat(32)} (used in 0xab…)`,
      'cancelled b2: never settled: the authorization was not used in time; nothing was charged',
      'settle_failed a3: the transfer never landed: nothing was charged',
      'settle_failed b4: the authorization was used without paying this call',
      'noted b5: unused, validBefore ahead',
      'noted b6: the chain could not be asked',
    ]);
    await reconciler.stop();
  });
});
