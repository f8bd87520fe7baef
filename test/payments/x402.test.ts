// x402 end to end with real parts: an in-process Hardhat EDR chain, a 6-decimal EIP-3009 token
// compiled with solc-js, a local facilitator built from @x402/core + @x402/evm, the server pointed
// at it, and the official @x402/fetch client paying with a viem local account. The same flows run
// with the ledger in PGlite (DATA_DIR, the default) and in a PostgreSQL server (DATABASE_URL), and
// each leaves its row: settled, cancelled, unknown; a final status the database refuses at first is retried.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentRecord } from '../../src/db/payment-rows.ts';
import { startStorage } from '../../src/app.ts';
import { AUTHORIZATION_USED } from '../../src/payments/core/authorization-claim.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { recorded } from '../fixtures.ts';
import { startPostgres, type TestPostgres } from '../servers/postgres.ts';
import { makeApp } from '../helpers.ts';
import { listeningApp, paidWorldEnv, PRICE, recordingFetch, startPaidWorld, TICKER, type Account, type PaidWorld } from './world.ts';
import { payingClient } from './x402/paying.ts';

let world: PaidWorld;
let chain: PaidWorld['chain'];
let fx: PaidWorld['fx'];
let fac: PaidWorld['fac'];
let exchange: PaidWorld['exchange'];
let payer: Account;
let payTo: `0x${string}`;
let postgres: TestPostgres | undefined;
const signatures: string[] = [];
let payFetch: typeof fetch;

beforeAll(async () => {
  // The paid route under test is the real /v1/price, over a fake Binance and Coinbase.
  world = await startPaidWorld({ payerIndex: 2, payToIndex: 3 });
  ({ chain, fx, fac, exchange, payer, payTo } = world);
  payFetch = wrapFetchWithPayment(recordingFetch(signatures), payingClient(payer, world.setting()));
}, 60_000);

afterAll(async () => {
  await world?.close();
  await postgres?.stop();
  removeTempDirs();
});

/** A paid app over the test chain and facilitator, its ledger where `env` says, open before the tests start. */
async function paidApp(env: Record<string, string>): Promise<{ app: FastifyInstance; base: string }> {
  // CACHE_TTL_PRICE_S=0: every handler run reaches the fake, so "handler not run" is observable.
  return listeningApp({ API_KEYS: 'test-key', ...paidWorldEnv(world), ...env });
}

const BACKENDS = [
  { name: 'ledger in PGlite (DATA_DIR, the default)', env: async () => ({ DATA_DIR: await pgliteDataDir() }) },
  {
    name: 'ledger in PostgreSQL (DATABASE_URL)',
    env: async () => {
      postgres ??= await startPostgres();
      return { DATABASE_URL: await postgres.createDatabase(`x402_${Date.now()}`) };
    },
  },
];

const balances = () => world.balances();

describe.each(BACKENDS)('x402 on a paid route, $name', ({ name, env }) => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    ({ app, base } = await paidApp(await env()));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });
  const rows = (): Promise<PaymentRecord[]> => app.services.paymentRecords.list({});

  it('no credentials → 402 with PAYMENT-REQUIRED and a body that states the price', async () => {
    const res = await fetch(`${base}${PRICE}`);
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(required.x402Version).toBe(2);
    expect(required.accepts[0]).toMatchObject({ scheme: 'exact', network: 'eip155:31337', amount: '1000', asset: fx.usdc, payTo });
    const body = (await res.json()) as any;
    expect(body).toEqual({ error: 'payment required', price: '$0.001', network: 'eip155:31337', networks: ['eip155:31337'], asset: fx.usdc, payTo, accepts: required.accepts });
  });

  it('the paying client gets 200 with the data and PAYMENT-RESPONSE; payTo gains exactly the price', async () => {
    const before = await balances();
    const res = await payFetch(`${base}${PRICE}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data).toEqual({
      symbol: 'BTC/USDT',
      venue_symbol: 'BTCUSDT',
      asset_class: 'crypto',
      price: 63350.1,
      currency: 'USDT',
      as_of: '2026-07-06T03:16:28.000Z',
    });
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:31337', payer: payer.address });
    const after = await balances();
    expect(after.payTo - before.payTo).toBe(1000n); // $0.001 at 6 decimals
    expect(before.payer - after.payer).toBe(1000n);
    const tx = await chain.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` });
    expect(tx.status).toBe('success');
    // One ledger row for the attempt, updated to settled with the transaction.
    const [row, ...others] = await rows();
    expect(others).toEqual([]);
    expect(row).toMatchObject({
      route: '/v1/price',
      scheme: 'exact',
      network: 'eip155:31337',
      asset: fx.usdc,
      amount_required: '1000',
      pay_to: payTo,
      payer: payer.address,
      status: 'settled',
      tx_hash: receipt.transaction,
      settled_amount: '1000',
      error_reason: null,
    });
    expect(row!.payload_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.authorization_nonce).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('replaying the same payment → 402 "authorization already used", no balance change, no data, nothing asked of the facilitator or the upstream', async () => {
    const used = signatures.at(-1)!;
    const before = await balances();
    const calls = exchange.calls(TICKER).length;
    const { settle: settles, verify: verifies } = fac.state.calls;
    const res = await fetch(`${base}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': used } });
    expect(res.status).toBe(402);
    const body = (await res.json()) as any;
    expect(body.reason).toBe(AUTHORIZATION_USED);
    expect(body.price).toBe('$0.001');
    expect(body.data).toBeUndefined();
    expect(res.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(before);
    expect(fac.state.calls.settle).toBe(settles);
    // Its authorization is known used (it was settled and answered): refused before verify, so no prefetch either.
    expect(fac.state.calls.verify).toBe(verifies);
    expect(exchange.calls(TICKER)).toHaveLength(calls);
    // A payment the facilitator refused to verify is not a ledger row: still the one settled attempt.
    expect((await rows()).map((r) => r.status)).toEqual(['settled']);
  });

  it('a valid payment on a route whose upstream fails → 502 and no balance change', async () => {
    exchange.route(`GET ${TICKER}`, { status: 451, body: { code: 0, msg: 'Service unavailable from a restricted location' } });
    exchange.route('GET /products/BTC-USD/ticker', { status: 500, body: 'down' });
    const before = await balances();
    const res = await payFetch(`${base}${PRICE}`);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: 'binance answered HTTP 451; fallback coinbase answered HTTP 500', source: 'binance' });
    expect(res.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(before);
    exchange.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
    // Verified, then cancelled because the handler failed: its row says so.
    const cancelled = (await rows()).find((r) => r.status === 'cancelled');
    expect(cancelled).toMatchObject({ route: '/v1/price', payer: payer.address, tx_hash: null, error_reason: 'handler_failed: 502' });
  });

  it.runIf(name.includes('PostgreSQL'))('a ledger that cannot record the verified payment → 503 { source: "database" }, no data, nothing settled', async () => {
    const before = await balances();
    const settles = fac.state.calls.settle;
    const handlerRuns = exchange.calls(TICKER).length;
    postgres!.pause(); // accepts connections, never answers: DB_TIMEOUT_MS runs out
    let res: Response;
    let again: Response;
    let verifiesBetween: number;
    try {
      res = await payFetch(`${base}${PRICE}`);
      // Now known to be down (/v1/status says so): the next paid call is refused before the facilitator verifies anything.
      const status = (await (await fetch(`${base}/v1/status`)).json()) as { data: { backends: { database: { status: string } } } };
      expect(status.data.backends.database.status).toBe('degraded');
      const verifies = fac.state.calls.verify;
      again = await payFetch(`${base}${PRICE}`);
      verifiesBetween = fac.state.calls.verify - verifies;
    } finally {
      postgres!.resume();
    }
    expect(again.status).toBe(503);
    expect(verifiesBetween).toBe(0);
    // Back up: the probe (every 2 s) sees it, and paid calls are taken again.
    for (let i = 0; i < 100 && app.services.backends.database.degraded; i++) await new Promise((r) => setTimeout(r, 100));
    expect(app.services.backends.database.degraded).toBe(false);
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body).toMatchObject({ source: 'database' });
    expect(body).not.toHaveProperty('data');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fac.state.calls.settle).toBe(settles);
    // Neither reached verify: the first could not claim its authorization in the ledger, the second found it down; so neither ran the route.
    expect(exchange.calls(TICKER)).toHaveLength(handlerRuns);
    expect(await balances()).toEqual(before);
  }, 30_000);

  it('a final status the ledger cannot write after the transfer: the payer still gets 200; the write is retried, counted, and lands', async () => {
    const before = await balances();
    const known = new Set((await rows()).map((r) => r.id));
    const failures = app.services.paymentRecords.stats().final_write_failures;
    const sql = (text: string) => app.services.db.use((d) => d.query(text));
    // While the handler's upstream call is answered (the route's work starts while the facilitator verifies:
    // the answer waits here until the verified row is written), the database starts refusing every update of a payment.
    let statusWhileHandlerRan: string | undefined;
    exchange.route(`GET ${TICKER}`, async () => {
      for (let i = 0; i < 100 && statusWhileHandlerRan === undefined; i++) {
        statusWhileHandlerRan = (await rows()).find((r) => !known.has(r.id))?.status;
        if (statusWhileHandlerRan === undefined) await new Promise((r) => setTimeout(r, 20));
      }
      await sql(`CREATE FUNCTION refuse_payment_updates() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
      await sql('CREATE TRIGGER refuse_payment_updates BEFORE UPDATE ON payments FOR EACH ROW EXECUTE FUNCTION refuse_payment_updates()');
      return { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') };
    });
    let res: Response;
    try {
      res = await payFetch(`${base}${PRICE}`);
      await expect.poll(() => app.services.paymentRecords.stats().final_write_failures, { timeout: 10_000 }).toBeGreaterThan(failures);
      expect((await rows()).find((r) => !known.has(r.id))?.status).toBe('verified');
    } finally {
      exchange.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
      await sql('DROP TRIGGER IF EXISTS refuse_payment_updates ON payments');
      await sql('DROP FUNCTION IF EXISTS refuse_payment_updates()');
    }
    expect(statusWhileHandlerRan).toBe('verified');
    expect(res.status).toBe(200);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true });
    expect(before.payer - (await balances()).payer).toBe(1000n);
    // The retry (1 s later, then 2 s, …) writes it once the database takes it.
    const row = async () => (await rows()).find((r) => !known.has(r.id));
    await expect.poll(async () => (await row())?.status, { timeout: 15_000, interval: 200 }).toBe('settled');
    expect(await row()).toMatchObject({ tx_hash: receipt.transaction, settled_amount: '1000' });
    expect(app.services.paymentRecords.stats()).toMatchObject({ final_writes_pending: 0, final_writes_lost: 0 });
  }, 30_000);

  it('a settlement the facilitator never answers, with no chain to ask (no X402_RPC_URL) → 503 + Retry-After "resend this same payment, not charged twice", never 504 nor "pay again", and an `unknown` row', async () => {
    fac.state.mode = 'drop-settle';
    try {
      const res = await payFetch(`${base}${PRICE}`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        error:
          "the payment's outcome cannot be told yet (neither the facilitator nor the chain answered in time): resend this same PAYMENT-SIGNATURE (with the same payment identifier, if it has one) after Retry-After to get this call's answer; it will not be charged twice; do not sign a new payment",
        source: 'facilitator',
      });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      fac.state.mode = 'ok';
    }
    // The outcome is written beside the answer, not before it: waited for, not read at once.
    await expect.poll(async () => (await rows()).filter((r) => r.status === 'unknown').length, { timeout: 10_000 }).toBe(1);
    const unknown = (await rows()).filter((r) => r.status === 'unknown');
    expect(unknown[0]).toMatchObject({ route: '/v1/price', payer: payer.address, tx_hash: null });
    expect(unknown[0]!.error_reason).toBeTruthy();
  });

  it('a bad parameter → 400 before any payment is taken', async () => {
    const before = await balances();
    const res = await payFetch(`${base}/v1/price?symbol=BTC&asset_class=bond`);
    expect(res.status).toBe(400);
    expect(await balances()).toEqual(before);
  });

  it('an API key is used when present: no payment is taken', async () => {
    const before = await balances();
    const res = await payFetch(`${base}${PRICE}`, { headers: { 'x-api-key': 'test-key' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(before);
  });

  it('payment headers on a free route are ignored: nobody is charged', async () => {
    const before = await balances();
    const res = await payFetch(`${base}/v1/status`, { headers: { 'PAYMENT-SIGNATURE': signatures.at(-1)! } });
    expect(res.status).toBe(200);
    expect(await balances()).toEqual(before);
  });

});

describe('x402 right after start-up', () => {
  it('a paid call while the embedded database is still opening waits for it (DB_OPEN_WAIT_MS) and gets 200, not 503 at DB_TIMEOUT_MS', async () => {
    // As the server starts: listen, the database opens in the background (PGlite: about a second, far longer than
    // this DB_TIMEOUT_MS), and the paying client comes at once.
    // DB_TIMEOUT_MS 1.5 s: far shorter than a first opening (initdb: seconds), long enough for a statement under load.
    const fresh = await makeApp({ API_KEYS: 'test-key', ...paidWorldEnv(world), DATA_DIR: await pgliteDataDir(), DB_TIMEOUT_MS: '1500' });
    try {
      const base = await fresh.app.listen({ host: '127.0.0.1', port: 0 });
      await startStorage(fresh.app);
      expect(fresh.app.services.db.state).toBe('opening');
      const before = await balances();
      const res = await payFetch(`${base}${PRICE}`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(before.payer - (await balances()).payer).toBe(1000n);
      await expect.poll(async () => (await fresh.app.services.paymentRecords.list({})).map((r) => r.status), { timeout: 10_000 }).toEqual(['settled']);
    } finally {
      await fresh.app.close();
    }
  }, 120_000);
});

describe('x402 when the facilitator is gone', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    ({ app, base } = await paidApp({ DATA_DIR: await pgliteDataDir() }));
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  it('facilitator stopped → 503 { error, source: "facilitator" }, never 500', async () => {
    await fac.close();
    const before = await balances();
    const res = await payFetch(`${base}${PRICE}`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'payment facilitator unavailable; try again later', source: 'facilitator' });
    // Every 503 says when to try again.
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await balances()).toEqual(before);
  });
});
