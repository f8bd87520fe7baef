// A payer is never charged without an answer: what the server does once a settle has been sent, on real parts (an
// EDR chain mining a block every second, the official facilitator code, the official client). A slow settle is
// waited for; a settle the facilitator does not answer in time is decided by the chain (X402_RPC_URL): landed →
// 200 with the data, never landed and past validBefore → 402 saying nothing was charged; never "try again later".
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentRecord } from '../../src/db/payment-rows.ts';
import { AUTHORIZATION_USED } from '../../src/payments/core/authorization-claim.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { recorded } from '../fixtures.ts';
import { listeningApp, paidWorldEnv, PRICE, signPayment, startPaidWorld, TICKER, type Account, type PaidWorld, type SignOptions } from './world.ts';
import { payingClient } from './x402/paying.ts';

let world: PaidWorld;
let chain: PaidWorld['chain'];
let fac: PaidWorld['fac'];
let exchange: PaidWorld['exchange'];
let payer: Account;
let payTo: `0x${string}`;
let app: FastifyInstance;
let base: string;
let client: x402Client;
let nextId = '';

/** Verify within 2 s; a settle listened to for 4 s; authorizations valid for 30 s. */
const SETTINGS = { X402_FACILITATOR_TIMEOUT_MS: '2000', X402_SETTLE_TIMEOUT_MS: '4000', X402_MAX_TIMEOUT_S: '30' };

beforeAll(async () => {
  // A block every second at wall-clock time: the chain's clock passes a validBefore as a real chain's does.
  world = await startPaidWorld({ payerIndex: 9, payToIndex: 10, chain: { mining: { auto: true, interval: 1000 }, allowBlocksWithSameTimestamp: true } });
  ({ chain, fac, exchange, payer, payTo } = world);
  ({ app, base } = await listeningApp({ ...paidWorldEnv(world, { rpc: true }), ...SETTINGS, DATA_DIR: await pgliteDataDir() }));
  client = payingClient(payer, world.setting({ rpc: true }), { identifier: () => nextId });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await world?.close();
  removeTempDirs();
});

const balances = () => world.balances();
const rows = (): Promise<PaymentRecord[]> => app.services.paymentRecords.list({});
const pay = (signature: string, path = PRICE) => fetch(`${base}${path}`, { headers: { 'PAYMENT-SIGNATURE': signature } });

/** A signed payment for `path`, with `id` when given; `validForS` signs an authorization that expires sooner than the 402 offers. */
async function signed(options: SignOptions & { id?: string } = {}): Promise<string> {
  nextId = options.id ?? '';
  try {
    return await signPayment(base, client, options);
  } finally {
    nextId = '';
  }
}

describe('once a settle has been sent, its outcome is waited for and found out', () => {
  it('a settle slower than the verify timeout is waited for: 200 with the data and the receipt, charged once', async () => {
    const before = await balances();
    fac.state.delays.settleMs = 3000; // longer than X402_FACILITATOR_TIMEOUT_MS (2 s), within X402_SETTLE_TIMEOUT_MS (4 s)
    let res: Response;
    try {
      res = await pay(await signed());
    } finally {
      fac.state.delays.settleMs = 0;
    }
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { price: number } }).data.price).toBe(63350.1);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect((await chain.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` })).status).toBe('success');
    expect(before.payer - (await balances()).payer).toBe(1000n);
    await expect.poll(async () => (await rows()).find((r) => r.tx_hash === receipt.transaction)?.status).toBe('settled');
  }, 60_000);

  it('a settle not answered within X402_SETTLE_TIMEOUT_MS: the chain says the transfer landed → 200 with the data and its transaction', async () => {
    const before = await balances();
    const settles = fac.state.calls.settle;
    fac.state.delays.settleMs = 5500; // past the 4 s the settle is listened to; it lands right after
    let res: Response;
    try {
      res = await pay(await signed());
    } finally {
      fac.state.delays.settleMs = 0;
    }
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { price: number } }).data.price).toBe(63350.1);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, payer: payer.address });
    // The transaction was found on chain, from the authorization's AuthorizationUsed event.
    const tx = await chain.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` });
    expect(tx.status).toBe('success');
    expect(fac.state.calls.settle - settles).toBe(1);
    expect(before.payer - (await balances()).payer).toBe(1000n);
    await expect.poll(async () => (await rows()).find((r) => r.tx_hash === receipt.transaction)?.status).toBe('settled');
    const row = (await rows()).find((r) => r.tx_hash === receipt.transaction)!;
    expect(row).toMatchObject({ status: 'settled', settled_amount: '1000', payer: payer.address });
    expect(row.answered_at).not.toBeNull();
    expect(row.chain_state).toMatch(new RegExp(`^authorizationState\\(${payer.address}, 0x[0-9a-f]{64}\\) = true at block \\d+ .*: transferred 1000 units to ${payTo} in ${receipt.transaction}`));
  }, 60_000);

  it('a settle the facilitator dropped, and that the chain shows can no longer land (past validBefore) → 402 saying nothing was charged; the id is free again', async () => {
    const before = await balances();
    const id = 'pay_never_landed_00000001';
    const signature = await signed({ id, validForS: 10 });
    fac.state.mode = 'drop-settle';
    let res: Response;
    try {
      res = await pay(signature);
    } finally {
      fac.state.mode = 'ok';
    }
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: string; reason: string; accepts: unknown[] };
    expect(body.reason).toBe('the payment was not settled before its authorization expired (validBefore), and can no longer be: nothing was charged; sign a new payment');
    // It asks for a new payment, so it says what to pay, as every 402 does.
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts).toEqual(body.accepts);
    expect(body.accepts).toHaveLength(1);
    expect(await balances()).toEqual(before);
    const row = (await rows()).find((r) => r.payment_identifier === id)!;
    expect(row).toMatchObject({ status: 'settle_failed', tx_hash: null, settled_amount: null });
    expect(row.chain_state).toMatch(/= false at block \d+ .*, at or after validBefore .*: it can never be used$/);
    // Nothing was taken, so the identifier was given up: a new payment under it is processed.
    const again = await pay(await signed({ id }));
    expect(again.status).toBe(200);
    expect(before.payer - (await balances()).payer).toBe(1000n);
  }, 60_000);

  it('one authorization sent 20 times at once (no identifier): one 200, 19 × 402 "already used", one settle at the facilitator (no verify: checked here), charged once, never a 5xx', async () => {
    exchange.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json'), delayMs: 200 });
    try {
      const signature = await signed();
      const before = await balances();
      const { verify, settle } = fac.state.calls;
      const answers = await Promise.all(Array.from({ length: 20 }, () => pay(signature)));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(19).fill(402)]);
      for (const res of answers.filter((r) => r.status === 402)) {
        expect(((await res.json()) as { reason: string }).reason).toBe(AUTHORIZATION_USED);
        expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts).toHaveLength(1);
      }
      // Only the holder of the authorization reached the facilitator (its /settle; checked here, X402_EXACT_VERIFY=local).
      expect(fac.state.calls.settle - settle).toBe(1);
      expect(fac.state.calls.verify - verify).toBe(0);
      expect(before.payer - (await balances()).payer).toBe(1000n);
      // Sent again later: refused at once, nothing more taken.
      const later = await pay(signature);
      expect(later.status).toBe(402);
      expect(((await later.json()) as { reason: string }).reason).toBe(AUTHORIZATION_USED);
      expect(fac.state.calls.verify - verify).toBe(0);
      expect(fac.state.calls.settle - settle).toBe(1);
      expect(before.payer - (await balances()).payer).toBe(1000n);
    } finally {
      exchange.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
    }
  }, 60_000);

  it('an authorization valid for longer than X402_MAX_TIMEOUT_S offers → 402 before anything is verified', async () => {
    const verifies = fac.state.calls.verify;
    const res = await pay(await signed({ validForS: 3600 }));
    expect(res.status).toBe(402);
    expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts).toMatchObject([{ scheme: 'exact', maxTimeoutSeconds: 30 }]);
    expect(((await res.json()) as { reason: string }).reason).toMatch(/^authorization_valid_too_long: the authorization's validBefore \(\d+, unix seconds\) is more than maxTimeoutSeconds \(30 s\) from now/);
    expect(fac.state.calls.verify).toBe(verifies);
  });

  it("the ledger records the matched route's URL, never the resource URL the payer wrote", async () => {
    const res = await pay(await signed({ id: 'pay_forged_resource_url_1', edit: (p) => void (p.resource = { ...p.resource!, url: 'http://forged.example/v1/price\n2026-01-01 settled' }) }));
    expect(res.status).toBe(200);
    const row = (await rows()).find((r) => r.payment_identifier === 'pay_forged_resource_url_1')!;
    expect(row.resource_url).toBe(`${app.services.config.publicBaseUrl}/v1/price`);
  });
});
