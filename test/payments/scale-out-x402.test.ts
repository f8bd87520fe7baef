// Several instances as one service, for payments: two app instances share one Redis and one PostgreSQL
// ledger. One payment identifier sent to both at once settles once, and both answer with it; identifiers and
// their stored answers live in the shared ledger database (Redis in front of the answers), so x402 keeps
// serving with Redis stopped, and a finished payment is still answered after Redis restarted empty.
import { decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import type { x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZATION_USED } from '../../src/payments/core/authorization-claim.ts';
import { recorded } from '../fixtures.ts';
import { startPostgres, type TestPostgres } from '../servers/postgres.ts';
import { startRedis, type TestRedis } from '../servers/redis.ts';
import { listeningApp, paidWorldEnv, PRICE, signPayment, startPaidWorld, type PaidWorld } from './world.ts';
import { payingClient } from './x402/paying.ts';

let world: PaidWorld;
let fac: PaidWorld['fac'];
let redis: TestRedis;
let postgres: TestPostgres;
const apps: FastifyInstance[] = [];
const bases: string[] = [];
let client: x402Client;
let nextId = '';

beforeAll(async () => {
  const ticker = { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json'), delayMs: 200 };
  [world, redis, postgres] = await Promise.all([startPaidWorld({ payerIndex: 7, payToIndex: 8, ticker }), startRedis(), startPostgres()]);
  ({ fac } = world);
  const databaseUrl = await postgres.createDatabase('scaleout_x402');
  for (let i = 0; i < 2; i++) {
    const { app, base } = await listeningApp({
      ...paidWorldEnv(world),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      // What is tested is one settlement through Redis while it answers. Past REDIS_TIMEOUT_MS an instance
      // takes the ledger database instead (its own test below), and under a loaded CI the default 250 ms was
      // once exceeded mid-claim: the two instances then claimed in different stores.
      REDIS_TIMEOUT_MS: '2000',
    });
    apps.push(app);
    bases.push(base);
  }
  client = payingClient(world.payer, world.setting(), { identifier: () => nextId });
}, 120_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  await world?.close();
  await redis?.stop();
  await postgres?.stop();
});

async function signedPayment(id: string): Promise<string> {
  nextId = id;
  try {
    return await signPayment(bases[0]!, client);
  } finally {
    nextId = '';
  }
}

const pay = (base: string, signature: string) => fetch(`${base}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': signature } });
const payerBalance = () => world.fx.balanceOf(world.payer.address);

describe('one payment identifier across two instances (Redis)', () => {
  it('sent to both at once: one settlement, both answer with it', async () => {
    const signature = await signedPayment('pay_two_instances_one_id_01');
    const before = await payerBalance();
    const settles = fac.state.calls.settle;
    const [a, b] = await Promise.all([pay(bases[0]!, signature), pay(bases[1]!, signature)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await a.text()).toBe(await b.text());
    expect(a.headers.get('payment-response')).toBe(b.headers.get('payment-response'));
    expect(fac.state.calls.settle - settles).toBe(1);
    expect(before - (await payerBalance())).toBe(1000n);
    // Again on either instance later: the stored answer, nothing more taken.
    const later = await pay(bases[1]!, signature);
    expect(later.status).toBe(200);
    expect(fac.state.calls.settle - settles).toBe(1);
  });

  it('with Redis stopped, identifiers live in the shared ledger database: still one settlement across both', async () => {
    await redis.kill();
    try {
      const signature = await signedPayment('pay_redis_down_shared_db_01');
      const before = await payerBalance();
      const settles = fac.state.calls.settle;
      const first = await pay(bases[0]!, signature);
      expect(first.status).toBe(200);
      const retried = await pay(bases[1]!, signature);
      expect(retried.status).toBe(200);
      expect(await retried.text()).toBe(await first.text());
      expect(fac.state.calls.settle - settles).toBe(1);
      expect(before - (await payerBalance())).toBe(1000n);
      const status = (await (await fetch(`${bases[0]}/v1/status`)).json()) as { data: { backends: { redis: { status: string } } } };
      expect(status.data.backends.redis.status).toBe('degraded');
    } finally {
      await redis.restart();
    }
  });

  it('a finished payment sent again after Redis restarted (empty) gets its stored answer on either instance, charged once', async () => {
    // Both instances talk to Redis (an earlier test restarted it): the answer is stored while Redis is up.
    const connected = () => apps.every((a) => a.services.backends.redis!.connections.client.status === 'ready');
    await expect.poll(connected, { timeout: 10_000 }).toBe(true);
    const signature = await signedPayment('pay_after_redis_restart_1');
    const first = await pay(bases[0]!, signature);
    expect(first.status).toBe(200);
    const body = await first.text();
    const before = await payerBalance();
    const settles = fac.state.calls.settle;
    await redis.kill();
    await redis.restart(); // Redis keeps nothing on disk here: every stored answer it held is gone
    await expect.poll(connected, { timeout: 10_000 }).toBe(true);
    for (const base of bases) {
      const again = await pay(base, signature);
      expect(again.status, base).toBe(200);
      expect(await again.text()).toBe(body);
      expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
    }
    expect(fac.state.calls.settle).toBe(settles);
    expect(await payerBalance()).toBe(before);
  });

  it('one authorization under 8 payment identifiers, each sent twice, to both instances at once: one payment answered (its id\'s two requests get the one answer), the 7 others 402 "already used", one settlement', async () => {
    const signed = decodePaymentSignatureHeader(await signedPayment(''));
    const ids = Array.from({ length: 8 }, (_, i) => `pay_one_auth_many_ids_${i}0000`);
    const payments = ids.map((id) => encodePaymentSignatureHeader({ ...signed, extensions: appendPaymentIdentifierToExtensions(structuredClone(signed.extensions ?? {}), id) }));
    const before = await payerBalance();
    const { verify, settle } = fac.state.calls;
    const sends = payments.flatMap((p, i) => [pay(bases[i % 2]!, p).then((r) => ({ i, r })), pay(bases[(i + 1) % 2]!, p).then((r) => ({ i, r }))]);
    const answers = await Promise.all(sends.map(async (s) => { const { i, r } = await s; return { i, status: r.status, body: await r.text() }; }));
    const ok = answers.filter((a) => a.status === 200);
    // One payment answered, once: both of its requests carry the same answer.
    expect(new Set(ok.map((a) => a.i)).size).toBe(1);
    expect(ok).toHaveLength(2);
    expect(ok[0]!.body).toBe(ok[1]!.body);
    const refused = answers.filter((a) => a.i !== ok[0]!.i);
    expect(refused.map((a) => a.status)).toEqual(Array<number>(14).fill(402));
    for (const a of refused) expect((JSON.parse(a.body) as { reason: string }).reason).toBe(AUTHORIZATION_USED);
    expect(fac.state.calls.settle - settle).toBe(1);
    // The holder checked it itself (X402_EXACT_VERIFY=local, the default): no /verify at all.
    expect(fac.state.calls.verify - verify).toBe(0);
    expect(before - (await payerBalance())).toBe(1000n);
  });
});
