// A crash mid-payment, on real parts: the server process (`node src/server.ts`, its ledger in a real PostgreSQL
// server) killed with SIGKILL while a settle is with the facilitator, then started again. The retry of the same
// signed payment is answered from what the chain says — 200 with the data and no second charge when the transfer
// landed; processed as new when it did not and the authorization is still valid — and the ledger, reconciled from
// the chain by the server itself, counts each transfer once.
import { decodePaymentResponseHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import type { PaymentRecord } from '../../src/db/payment-rows.ts';
import { listPayments, summarizePayments } from '../../src/db/payment-reports.ts';
import { OFFLINE_BASE_URLS } from '../helpers.ts';
import { startServerProcess, type RunningServer } from '../servers/marketgate.ts';
import { startCrashWorld, type CrashWorld } from './crash-world.ts';
import { paidWorldEnv, PRICE, signPayment, type PaidWorld } from './world.ts';
import { payingClient } from './x402/paying.ts';
import { tempDir } from '../db-helpers.ts';

let world: PaidWorld;
let chain: PaidWorld['chain'];
let fac: PaidWorld['fac'];
let crash: CrashWorld;
let ledger: Database;
let env: Record<string, string>;
let server: RunningServer | undefined;
let client: x402Client;
let nextId = '';

beforeAll(async () => {
  crash = await startCrashWorld({ payerIndex: 11, payToIndex: 12, chain: { allowBlocksWithSameTimestamp: true } }, 'crash');
  ({ world, ledger } = crash);
  ({ chain, fac } = world);
  // Authorizations valid for 60 s: a retry after a restart (seconds on a loaded machine) also waits for the dead
  // process's claims to lapse (their 5 s leases), and must still come before its authorization expires.
  env = { ...OFFLINE_BASE_URLS, ...paidWorldEnv(world, { rpc: true }), DATA_DIR: tempDir(), DATABASE_URL: crash.databaseUrl, X402_MAX_TIMEOUT_S: '60', X402_RECONCILE_INTERVAL_S: '1' };
  client = payingClient(world.payer, world.setting(), { identifier: () => nextId });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await crash?.close();
});

const start = async (extra: Record<string, string> = {}) => (server = await startServerProcess({ ...env, ...extra }));
const payerBalance = () => world.fx.balanceOf(world.payer.address);
const pay = (signature: string) => fetch(`${server!.url}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': signature } });
const rows = async (): Promise<PaymentRecord[]> => listPayments(ledger, { limit: 1000 });
const rowsOf = async (id: string) => (await rows()).filter((r) => r.payment_identifier === id);

async function signed(id: string): Promise<string> {
  nextId = id;
  try {
    return await signPayment(server!.url, client);
  } finally {
    nextId = '';
  }
}

/** The same signed authorization under another payment identifier (what a client that lost track of its id sends). */
function underNewIdentifier(signature: string, id: string): string {
  const payload = decodePaymentSignatureHeader(signature);
  const extensions = structuredClone(payload.extensions!);
  (extensions[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id = id;
  return encodePaymentSignatureHeader({ ...payload, extensions });
}

/** Sends the payments, waits until the facilitator has received each one's settle, and kills the server then (SIGKILL). */
async function crashMidSettle(signatures: string[]): Promise<void> {
  const settles = fac.state.calls.settle;
  const sent = signatures.map((s) => pay(s).then((r) => r.status, () => 'connection lost'));
  await fac.state.received('settle', settles + signatures.length);
  await server!.kill();
  expect(await Promise.all(sent)).toEqual(signatures.map(() => 'connection lost'));
}

describe('kill -9 while a settle is with the facilitator, then a restart', () => {
  it('the transfer landed while the server was down: the retry of the same payment gets 200 with the data and its transaction, no second charge', async () => {
    await start();
    const id = 'pay_crash_transfer_landed1';
    const signature = await signed(id);
    const before = await payerBalance();
    fac.state.delays.settleMs = 10_000; // the facilitator settles 10 s after it was asked: the server is gone by then
    try {
      await crashMidSettle([signature]);
      // The claim the dead process held never outlived the authorization.
      const [claim] = await ledger.query<{ lease_until: Date }>('SELECT lease_until FROM payment_identifiers WHERE id = $1', [id]);
      const [row] = await rowsOf(id);
      expect(row!.status).toBe('verified');
      expect(claim!.lease_until.getTime()).toBeLessThanOrEqual(Date.parse(row!.valid_before!));
      // Reconciliation only at start-up this time (the transfer has not landed yet then): the retry asks the chain itself.
      await start({ X402_RECONCILE_INTERVAL_S: '3600' });
      await expect.poll(payerBalance, { timeout: 30_000, interval: 200 }).toBe(before - 1000n);
    } finally {
      fac.state.delays.settleMs = 0;
    }
    const settles = fac.state.calls.settle;
    const res = await pay(signature);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { price: number } }).data.price).toBe(63350.1);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect((await chain.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` })).status).toBe('success');
    expect(fac.state.calls.settle).toBe(settles);
    expect(await payerBalance()).toBe(before - 1000n);
    // One row, settled with the transaction the chain names, answered once.
    const [row, ...others] = await rowsOf(id);
    expect(others).toEqual([]);
    expect(row).toMatchObject({ status: 'settled', tx_hash: receipt.transaction, settled_amount: '1000' });
    expect(row!.answered_at).not.toBeNull();
    expect(row!.chain_state).toMatch(/= true at block \d+ .*: transferred 1000 units/);
    // Sent once more: the stored answer.
    const again = await pay(signature);
    expect(again.status).toBe(200);
    expect(again.headers.get('payment-response')).toBe(res.headers.get('payment-response'));
  }, 120_000);

  it('nothing landed: the same payment proceeds as new, so does its authorization under a new identifier; the rows left behind are closed from the chain, each transfer counted once', async () => {
    const sameId = 'pay_crash_nothing_landed1';
    const oldId = 'pay_crash_lost_identifier';
    const [same, lost] = [await signed(sameId), await signed(oldId)];
    const before = await payerBalance();
    fac.state.mode = 'drop-settle'; // the facilitator drops the settles it is asked: nothing moves
    try {
      await crashMidSettle([same, lost]);
    } finally {
      fac.state.mode = 'ok';
    }
    expect(await payerBalance()).toBe(before);
    await start();
    const retried = await pay(same);
    expect(retried.status, await retried.clone().text()).toBe(200);
    const renamed = await pay(underNewIdentifier(lost, 'pay_crash_new_identifier1'));
    expect(renamed.status).toBe(200);
    expect(await payerBalance()).toBe(before - 2000n);

    // The server reconciles the rows the crash left `verified`: their authorizations are settled on the new rows.
    const txOf = (r: Response) => decodePaymentResponseHeader(r.headers.get('payment-response')!).transaction;
    await expect.poll(async () => (await rows()).filter((r) => r.status === 'verified').length, { timeout: 30_000, interval: 250 }).toBe(0);
    for (const [id, tx] of [[sameId, txOf(retried)], [oldId, txOf(renamed)]] as const) {
      const settled = (await rows()).filter((r) => r.tx_hash === tx);
      expect(settled.map((r) => r.status), id).toEqual(['settled']);
      const left = (await rowsOf(id)).filter((r) => r.tx_hash !== tx);
      expect(left.map((r) => r.status), id).toEqual(['cancelled']);
      expect(left[0]!.error_reason).toBe(`duplicate: this authorization is settled on payment ${settled[0]!.id} (tx ${tx}); one transfer, counted once`);
    }
    // Revenue: three transfers in this file, three settled rows, 3000 units.
    const summary = await summarizePayments(ledger, {});
    const settledRows = summary.filter((s) => s.status === 'settled');
    expect(settledRows.reduce((n, s) => n + s.count, 0)).toBe(3);
    expect(settledRows.reduce((n, s) => n + BigInt(s.amount_settled), 0n)).toBe(3000n);
  }, 120_000);
});
