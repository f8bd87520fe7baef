// Idempotent paid retries (x402 `payment-identifier`), end to end: the official @x402/fetch client with an
// extension that sends an id, a local facilitator that counts its verify and settle calls, the EDR chain.
// A retry with the same payment gets the first answer again and is never settled twice.
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { declarePaymentIdentifierExtension, extractAndValidatePaymentIdentifier, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment, type x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identifierOf } from '../../src/payments/core/idempotency.ts';
import { V1_PAYMENT_HEADER } from '../../src/payments/core/responses.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { recorded } from '../fixtures.ts';
import { listeningApp, paidWorldEnv, PRICE, recordingFetch, signPayment, startPaidWorld, TICKER, type PaidWorld } from './world.ts';
import { payingClient } from './x402/paying.ts';

let world: PaidWorld;
let fac: PaidWorld['fac'];
let exchange: PaidWorld['exchange'];
let app: FastifyInstance;
let base: string;
let client: x402Client;
const ticker = () => world.serveTicker();

/** The id the client's extension puts into the next payment (none when empty). */
let nextId = '';
/** Payment headers the paying fetch sent. */
const sent: string[] = [];

beforeAll(async () => {
  world = await startPaidWorld({ payerIndex: 5, payToIndex: 6 });
  ({ fac, exchange } = world);
  ({ app, base } = await listeningApp({ ...paidWorldEnv(world), DATA_DIR: await pgliteDataDir() }));
  // What an agent registers to send an id: the server's declaration, with the id filled in.
  client = payingClient(world.payer, world.setting(), { identifier: () => nextId });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await world?.close();
  removeTempDirs();
});

const payFetch = (url: string) => wrapFetchWithPayment(recordingFetch(sent), client)(url);
const balances = () => world.balances();
const facilitatorCalls = () => ({ ...fac.state.calls });
const withSignature = (signature: string) => fetch(`${base}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': signature } });

/** A signed payment for `path` (the price route by default) carrying `id`, not sent yet. */
async function signedPayment(id: string, path = PRICE): Promise<string> {
  nextId = id;
  try {
    return await signPayment(base, client, { path });
  } finally {
    nextId = '';
  }
}

describe('x402 payment-identifier: idempotent paid retries', () => {
  it('every 402 declares the extension, optional for the client', async () => {
    const res = await fetch(`${base}${PRICE}`);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.extensions?.[PAYMENT_IDENTIFIER]).toMatchObject({ info: { required: false } });
  });

  it('the same payment sent again gets the first answer (status, body, PAYMENT-RESPONSE) without a second settlement', async () => {
    nextId = 'pay_retry_same_payload_0001';
    const first = await payFetch(`${base}${PRICE}`);
    nextId = '';
    expect(first.status).toBe(200);
    const body = await first.text();
    const receipt = first.headers.get('payment-response');
    expect(receipt).toBeTruthy();
    const calls = facilitatorCalls();
    const before = await balances();
    const handlerRuns = exchange.calls(TICKER).length;

    // The agent lost the answer (a timeout) and resends exactly what it sent.
    const again = await withSignature(sent.at(-1)!);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(body);
    expect(again.headers.get('payment-response')).toBe(receipt);
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(facilitatorCalls()).toEqual(calls); // no verify, no settle
    expect(await balances()).toEqual(before);
    expect(exchange.calls(TICKER)).toHaveLength(handlerRuns);
    // One attempt, one row, with its identifier.
    const rows = (await app.services.paymentRecords.list({})).filter((r) => r.payment_identifier === 'pay_retry_same_payload_0001');
    expect(rows.map((r) => r.status)).toEqual(['settled']);
  });

  it('the same id with another payment (what @x402/fetch sends when it retries by itself) → 409, nothing taken', async () => {
    nextId = 'pay_retry_same_payload_0001';
    const before = await balances();
    const calls = facilitatorCalls();
    const res = await payFetch(`${base}${PRICE}`);
    nextId = '';
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: 'payment identifier pay_retry_same_payload_0001 was already used with another payment; use a new identifier for a new payment' });
    expect(await balances()).toEqual(before);
    expect(facilitatorCalls()).toEqual(calls);
  });

  it('two concurrent requests with one id and one payment → one settlement; the second waits and gets the same answer', async () => {
    exchange.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json'), delayMs: 300 });
    try {
      const signature = await signedPayment('pay_concurrent_same_payment_01');
      const before = await balances();
      const calls = facilitatorCalls();
      const [a, b] = await Promise.all([withSignature(signature), withSignature(signature)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(await a.text()).toBe(await b.text());
      expect(a.headers.get('payment-response')).toBe(b.headers.get('payment-response'));
      expect(facilitatorCalls().settle - calls.settle).toBe(1);
      // Checked here, not by the facilitator's /verify (X402_EXACT_VERIFY=local, the default).
      expect(facilitatorCalls().verify - calls.verify).toBe(0);
      const after = await balances();
      expect(before.payer - after.payer).toBe(1000n);
    } finally {
      ticker();
    }
  });

  it('a payment whose call failed (cancelled, not settled) can be sent again with its id, and is then settled once', async () => {
    exchange.route(`GET ${TICKER}`, { status: 451, body: { code: 0, msg: 'Service unavailable from a restricted location' } });
    exchange.route('GET /products/BTC-USD/ticker', { status: 500, body: 'down' });
    const signature = await signedPayment('pay_failed_then_retried_0001');
    const before = await balances();
    const failed = await withSignature(signature);
    expect(failed.status).toBe(502);
    expect(await balances()).toEqual(before);
    ticker();
    const retried = await withSignature(signature);
    expect(retried.status).toBe(200);
    expect(before.payer - (await balances()).payer).toBe(1000n);
    const rows = (await app.services.paymentRecords.list({})).filter((r) => r.payment_identifier === 'pay_failed_then_retried_0001');
    expect(rows.map((r) => r.status).sort()).toEqual(['cancelled', 'settled']);
  });

  it('an id that breaks the format → 400 naming the extension, before anything is verified', async () => {
    const challenge = await fetch(`${base}${PRICE}`);
    const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
    const payload = await client.createPaymentPayload(required);
    (payload.extensions as Record<string, { info: { id?: string } }>)[PAYMENT_IDENTIFIER]!.info.id = 'short!';
    const calls = facilitatorCalls();
    const res = await withSignature(encodePaymentSignatureHeader(payload));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^the payment's payment-identifier extension is invalid/);
    expect(facilitatorCalls()).toEqual(calls);
  });

  it("the identifier is checked as the SDK checks it, without compiling the schema every payment echoes", () => {
    const echoed = declarePaymentIdentifierExtension(false); // what a client copies from the 402, schema included
    const shapes: unknown[] = [
      undefined,
      'not an object',
      {},
      { info: 'x' },
      { info: { required: 'no' } },
      { ...echoed, info: { required: false } },
      { ...echoed, info: { required: false, id: 'pay_valid_identifier_0001' } },
      { info: { required: false, id: 'pay_valid_identifier_0001' } },
      { ...echoed, info: { required: false, id: 'short!' } },
      { ...echoed, info: { required: false, id: 'pay_with spaces_in_it_0001' } },
      { ...echoed, info: { required: false, id: 12345678901234567 } },
      { ...echoed, info: { required: false, id: 'x'.repeat(129) } },
    ];
    for (const extension of shapes) {
      const payload = { x402Version: 2, payload: {}, ...(extension === undefined ? {} : { extensions: { [PAYMENT_IDENTIFIER]: extension } }) } as never;
      const ours = identifierOf(payload);
      const sdk = extractAndValidatePaymentIdentifier(payload);
      expect({ id: ours.id, valid: ours.validation.valid }, JSON.stringify(extension)).toEqual({ id: sdk.id, valid: sdk.validation.valid });
    }
  });

  it('an identifier belongs to its request: finished on /v1/market-clock, then sent with /v1/price?symbol=BTC → 409 naming both, nothing served or charged', async () => {
    const id = 'pay_bound_to_market_clock_1';
    const signature = await signedPayment(id, '/v1/market-clock');
    const first = await fetch(`${base}/v1/market-clock`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    expect(first.status).toBe(200);
    const clock = await first.text();
    const calls = facilitatorCalls();
    const before = await balances();
    const runs = exchange.calls(TICKER).length;
    const res = await withSignature(signature);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: `payment identifier ${id} was used for GET /v1/market-clock; this request is GET /v1/price?symbol=BTC: an identifier belongs to one request (nothing was served or charged; use a new identifier for a new payment)`,
    });
    expect(facilitatorCalls()).toEqual(calls);
    expect(await balances()).toEqual(before);
    expect(exchange.calls(TICKER)).toHaveLength(runs);
    // Its own request still gets its answer.
    const again = await fetch(`${base}/v1/market-clock`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(clock);
  });

  it('the query is compared in canonical order: the same parameters in another order get the stored answer', async () => {
    const id = 'pay_query_order_canonical1';
    const signature = await signedPayment(id);
    const first = await fetch(`${base}/v1/price?symbol=BTC&asset_class=crypto`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    expect(first.status).toBe(200);
    const calls = facilitatorCalls();
    const again = await fetch(`${base}/v1/price?asset_class=crypto&symbol=BTC`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(await first.text());
    expect(facilitatorCalls()).toEqual(calls);
    const other = await fetch(`${base}/v1/price?asset_class=crypto&symbol=ETH`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    expect(other.status).toBe(409);
    expect(((await other.json()) as { error: string }).error).toMatch(/was used for GET \/v1\/price\?asset_class=crypto&symbol=BTC; this request is GET \/v1\/price\?asset_class=crypto&symbol=ETH/);
  });

  it("x402 v1's X-PAYMENT is refused everywhere: a new payment and the replay of an answered one both get 402 naming PAYMENT-SIGNATURE, nothing verified, replayed or taken", async () => {
    const fresh = await signedPayment('pay_sent_in_x_payment_0001');
    const answered = await signedPayment('pay_answered_then_x_pay_01');
    expect((await withSignature(answered)).status).toBe(200);
    const before = await balances();
    const calls = facilitatorCalls();
    for (const header of [fresh, answered]) {
      const res = await fetch(`${base}${PRICE}`, { headers: { 'X-PAYMENT': header } });
      expect(res.status).toBe(402);
      const body = (await res.json()) as { reason: string; accepts: unknown[] };
      expect(body.reason).toBe(V1_PAYMENT_HEADER);
      expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts).toEqual(body.accepts);
      expect(res.headers.get('payment-response')).toBeNull();
    }
    expect(facilitatorCalls()).toEqual(calls);
    expect(await balances()).toEqual(before);
    // The same payment in PAYMENT-SIGNATURE is still the payment it was: its stored answer.
    expect((await withSignature(answered)).status).toBe(200);
  });
});
