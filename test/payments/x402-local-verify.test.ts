// An `exact` payment checked by the server itself instead of the facilitator's /verify (X402_EXACT_VERIFY=local, the
// default), on real parts: the EDR chain, the official facilitator (which counts its /verify and /settle calls), the
// official client. A first-seen EOA-signed authorization is served with no /verify and one /settle; everything
// /verify would have refused is refused by /settle (402, nothing charged, the answer not sent) or still goes to
// /verify (a signature that does not recover to its payer); a retry of an authorization already seen goes to
// /verify, so a lost answer is still answered from the chain once. With X402_EXACT_VERIFY=facilitator, /verify is
// asked as before.
import { decodePaymentResponseHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentRecord } from '../../src/db/payment-rows.ts';
import { AUTHORIZATION_USED } from '../../src/payments/core/authorization-claim.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { accountAt, listeningApp, paidWorldEnv, PRICE, signPayment, startPaidWorld, TICKER, type PaidWorld } from './world.ts';
import { payingClient } from './x402/paying.ts';

let world: PaidWorld;
let fac: PaidWorld['fac'];
let rpc: RpcProxy;
let local: { app: FastifyInstance; base: string };
let remote: { app: FastifyInstance; base: string };
/** Local verify, and no chain to ask (no X402_RPC_URL): an outcome the facilitator did not tell stays unknown. */
let blind: { app: FastifyInstance; base: string };
let client: x402Client;
/** A payer with no tokens. */
let broke: x402Client;
const brokeAccount = accountAt(52);

/** The chain's JSON-RPC behind a switch: while `down`, every call is a 503 (the node cannot be asked). */
interface RpcProxy {
  url: string;
  down: boolean;
  close(): Promise<void>;
}

async function rpcProxy(target: string): Promise<RpcProxy> {
  const state = { down: false };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (state.down) return void res.writeHead(503).end('down');
    const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  });
}

beforeAll(async () => {
  // Blocks at wall-clock time: the chain's clock passes a validBefore as a real chain's does.
  world = await startPaidWorld({ payerIndex: 50, payToIndex: 51, chain: { mining: { auto: true, interval: 1000 }, allowBlocksWithSameTimestamp: true } });
  fac = world.fac;
  rpc = await rpcProxy(world.chain.rpcUrl);
  const env = { ...paidWorldEnv(world, { rpc: true }), X402_RPC_URL: rpc.url, X402_SETTLE_TIMEOUT_MS: '4000', X402_MAX_TIMEOUT_S: '30' };
  [local, remote, blind] = await Promise.all([
    listeningApp({ ...env, DATA_DIR: await pgliteDataDir() }),
    listeningApp({ ...env, X402_EXACT_VERIFY: 'facilitator', DATA_DIR: await pgliteDataDir() }),
    listeningApp({ ...paidWorldEnv(world), X402_MAX_TIMEOUT_S: '30', DATA_DIR: await pgliteDataDir() }),
  ]);
  client = payingClient(world.payer, world.setting());
  broke = payingClient(brokeAccount, world.setting());
}, 120_000);

afterAll(async () => {
  await Promise.all([local?.app.close(), remote?.app.close(), blind?.app.close()]);
  await rpc?.close();
  await world?.close();
  removeTempDirs();
});

const calls = () => ({ ...fac.state.calls });
const handlerRuns = () => world.exchange.calls(TICKER).length;
const pay = (base: string, signature: string) => fetch(`${base}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': signature } });
const rows = (app: FastifyInstance): Promise<PaymentRecord[]> => app.services.paymentRecords.list({});

describe('X402_EXACT_VERIFY=local (the default)', () => {
  let settledSignature = '';

  it('a valid payment is served with no /verify and one /settle; the payer is charged once and the ledger row is settled', async () => {
    const signature = await signPayment(local.base, client);
    const before = await world.balances();
    const was = calls();
    const runs = handlerRuns();
    const res = await pay(local.base, signature);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { price: number } }).data.price).toBe(63350.1);
    expect(handlerRuns() - runs).toBe(1);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, payer: world.payer.address });
    expect(calls().verify - was.verify).toBe(0);
    expect(calls().settle - was.settle).toBe(1);
    const after = await world.balances();
    expect(before.payer - after.payer).toBe(1000n);
    expect(after.payTo - before.payTo).toBe(1000n);
    await expect.poll(async () => (await rows(local.app)).find((r) => r.tx_hash === receipt.transaction)?.status).toBe('settled');
    expect((await rows(local.app)).find((r) => r.tx_hash === receipt.transaction)).toMatchObject({ payer: world.payer.address, settled_amount: '1000' });
    settledSignature = signature;
  });

  it('the same authorization sent again → 402 "already used": nothing asked of the facilitator, one transfer on chain', async () => {
    expect(settledSignature).not.toBe('');
    const before = await world.balances();
    const was = calls();
    const res = await pay(local.base, settledSignature);
    expect(res.status).toBe(402);
    expect(((await res.json()) as { reason: string }).reason).toBe(AUTHORIZATION_USED);
    expect(calls()).toEqual(was);
    expect(await world.balances()).toEqual(before);
  });

  it('a signature that does not recover to the authorization\'s payer goes to /verify, which refuses it: 402, no settle, no charge, the route not run', async () => {
    const forger = accountAt(53).address;
    // Signed by the payer, but says it is from someone else (who holds no tokens here, and never signed it).
    const signature = await signPayment(local.base, client, { edit: (p) => void ((p.payload as { authorization: { from: string } }).authorization.from = forger) });
    const before = await world.balances();
    const was = calls();
    const runs = handlerRuns();
    const res = await pay(local.base, signature);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: string; data?: unknown };
    expect(body).not.toHaveProperty('data');
    expect(calls().verify - was.verify).toBe(1);
    expect(calls().settle - was.settle).toBe(0);
    expect(await world.balances()).toEqual(before);
    // The route's work was prefetched while /verify ran (as for any payment that goes to it); its answer went nowhere.
    expect(handlerRuns() - runs).toBe(1);
  });

  it('a payer without the balance: checked here, refused by /settle → 402 with no data, nothing charged, no second facilitator call', async () => {
    const signature = await signPayment(local.base, broke);
    const before = await world.fx.balanceOf(world.payTo);
    const was = calls();
    const res = await pay(local.base, signature);
    expect(res.status).toBe(402);
    const text = await res.text();
    expect(text).not.toContain('63350.1');
    // The facilitator's refusal, as with any refused settle.
    expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_insufficient_balance', transaction: '' });
    expect(calls().verify - was.verify).toBe(0);
    expect(calls().settle - was.settle).toBe(1);
    expect(await world.fx.balanceOf(world.payTo)).toBe(before);
    expect(await world.fx.balanceOf(brokeAccount.address)).toBe(0n);
    await expect.poll(async () => (await rows(local.app)).filter((r) => r.payer === brokeAccount.address).map((r) => r.status)).toEqual(['settle_failed']);
  });

  it('a payment whose settle landed but whose answer was lost (the chain could not be asked then): its retry goes to /verify, and is answered from the chain once, not settled again', async () => {
    // Valid for 8 s: the lost settle is watched for until validBefore (+ the chain's grace), then left unknown.
    const signature = await signPayment(local.base, client, { validForS: 8 });
    const before = await world.balances();
    const was = calls();
    fac.state.mode = 'lose-settle-answer';
    rpc.down = true;
    let first: Response;
    try {
      first = await pay(local.base, signature);
    } finally {
      fac.state.mode = 'ok';
      rpc.down = false;
    }
    // Money moved, nobody could tell: never "pay again".
    expect(first.status).toBe(503);
    expect(((await first.json()) as { error: string }).error).toMatch(/resend this same PAYMENT-SIGNATURE/i);
    expect(before.payer - (await world.balances()).payer).toBe(1000n);
    expect(calls().verify - was.verify).toBe(0);
    expect(calls().settle - was.settle).toBe(1);

    const retry = await pay(local.base, signature);
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as { data: { price: number } }).data.price).toBe(63350.1);
    // The retry was not new to the ledger: the facilitator verified it (and refused it: used), the chain answered.
    expect(calls().verify - was.verify).toBe(1);
    expect(calls().settle - was.settle).toBe(1);
    expect(before.payer - (await world.balances()).payer).toBe(1000n);
    // Once: the same payment again is refused.
    const third = await pay(local.base, signature);
    expect(third.status).toBe(402);
    expect(before.payer - (await world.balances()).payer).toBe(1000n);
  }, 90_000);

  it('a retry of an authorization already seen, still valid, is never checked locally: it goes to /verify (whose "used" refusal is what a lost answer is found from), not straight to a second /settle', async () => {
    const signature = await signPayment(blind.base, client);
    const before = await world.balances();
    const was = calls();
    fac.state.mode = 'lose-settle-answer';
    let first: Response;
    try {
      first = await pay(blind.base, signature);
    } finally {
      fac.state.mode = 'ok';
    }
    // The transfer landed, its answer was lost, and there is no chain to ask: unknown, "resend this same payment".
    expect(first.status).toBe(503);
    expect(before.payer - (await world.balances()).payer).toBe(1000n);
    expect(calls().verify - was.verify).toBe(0);
    expect(calls().settle - was.settle).toBe(1);

    const retry = await pay(blind.base, signature);
    // Verified by the facilitator (refused: used), then the chain asked for the first attempt's row: cannot tell, still 503.
    expect(retry.status).toBe(503);
    expect(((await retry.json()) as { error: string }).error).toMatch(/resend this same PAYMENT-SIGNATURE/i);
    expect(calls().verify - was.verify).toBe(1);
    expect(calls().settle - was.settle).toBe(1);
    expect(before.payer - (await world.balances()).payer).toBe(1000n);
    expect((await rows(blind.app)).map((r) => r.status)).toEqual(['unknown']);
  });
});

describe('X402_EXACT_VERIFY=facilitator', () => {
  it('every exact payment is verified by the facilitator first: one /verify and one /settle, charged once', async () => {
    const signature = await signPayment(remote.base, client);
    const before = await world.balances();
    const was = calls();
    const res = await pay(remote.base, signature);
    expect(res.status).toBe(200);
    expect(calls().verify - was.verify).toBe(1);
    expect(calls().settle - was.settle).toBe(1);
    expect(before.payer - (await world.balances()).payer).toBe(1000n);
  });

  it('the same payment re-signed by nobody (from ≠ signer) is refused by /verify as with local: the two settings refuse alike', async () => {
    const signature = await signPayment(remote.base, client);
    const payload = decodePaymentSignatureHeader(signature);
    (payload.payload as { authorization: { from: string } }).authorization.from = accountAt(53).address;
    const was = calls();
    const res = await pay(remote.base, encodePaymentSignatureHeader(payload));
    expect(res.status).toBe(402);
    expect(calls().verify - was.verify).toBe(1);
    expect(calls().settle - was.settle).toBe(0);
  });
});
