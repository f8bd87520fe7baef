// Access to the market-context routes with x402 on: the free ones (/v1/sentiment, /v1/market-overview,
// /v1/gas) answer anyone, ignore payment headers and are limited per client IP; the paid ones
// (/v1/volatility, /v1/defi-tvl) answer 402 without credentials, before any provider is asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { startRecordedWorld, type RecordedWorld } from '../fakes/recorded-world.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

const PAY_TO = '0x1111111111111111111111111111111111111111';
const FREE = ['/v1/sentiment?limit=1', '/v1/market-overview?view=top&limit=1', '/v1/gas'];
const PAID: [string, string][] = [
  ['/v1/volatility?currency=ETH', 'deribit'],
  ['/v1/defi-tvl?view=stablecoins', 'defillama'],
];
const FREE_LIMIT = 3;

let world: RecordedWorld;
const facilitator = new FakeUpstream();
let t: TestApp;
beforeAll(async () => {
  world = await startRecordedWorld();
  await facilitator.start();
  facilitator.route('GET /supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
  t = await makeApp({ ...world.env, ...TEST_KEY_ENV, X402_PAY_TO: PAY_TO, X402_FACILITATOR: facilitator.url, FREE_RATE_LIMIT: String(FREE_LIMIT) });
});
afterAll(async () => {
  await t.app.close();
  await facilitator.stop();
  await world.stop();
});

let client = 0;
/** A new client IP per test, so the per-IP limit of one test does not spill into another. */
const nextIp = () => `10.1.0.${++client}`;

describe('free market-context routes', () => {
  it.each(FREE)('%s answers without credentials and ignores payment headers (nothing is verified or settled)', async (url) => {
    const remoteAddress = nextIp();
    const plain = await t.app.inject({ url, remoteAddress });
    expect(plain.statusCode, plain.body).toBe(200);
    const withPayment = await t.app.inject({ url, remoteAddress, headers: { 'payment-signature': 'eyJ4NDAyVmVyc2lvbiI6Mn0=', 'x-payment': 'anything' } });
    expect(withPayment.statusCode, withPayment.body).toBe(200);
    expect(withPayment.headers['payment-response']).toBeUndefined();
    expect(withPayment.json().data).toEqual(plain.json().data);
    expect(facilitator.requests.filter((r) => r.path !== '/supported')).toEqual([]);
  });

  it.each(FREE)(`%s is limited to FREE_RATE_LIMIT (${FREE_LIMIT}) requests per minute per client IP`, async (url) => {
    const remoteAddress = nextIp();
    for (let i = 0; i < FREE_LIMIT; i++) expect((await t.app.inject({ url, remoteAddress })).statusCode).toBe(200);
    const limited = await t.app.inject({ url, remoteAddress });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['x-ratelimit-limit']).toBe(String(FREE_LIMIT));
    expect(limited.headers['retry-after']).toBeDefined();
    expect(limited.json()).toEqual({ error: expect.stringMatching(/^rate limit exceeded: 3 requests per minute per client; retry in \d+ s$/) });
    // Another client is not affected.
    expect((await t.app.inject({ url, remoteAddress: nextIp() })).statusCode).toBe(200);
  });
});

describe('paid market-context routes', () => {
  it.each(PAID)('%s answers 402 with the x402 challenge without credentials, and asks no provider', async (url, provider) => {
    const before = world.fakes[provider]!.requests.length;
    const res = await t.app.inject({ url, remoteAddress: nextIp() });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ error: 'payment required', price: '$0.001', network: 'eip155:8453', payTo: PAY_TO });
    expect(res.headers['payment-required']).toBeTruthy();
    expect(world.fakes[provider]!.requests.length).toBe(before);
  });

  it.each(PAID)('%s answers 200 with an API key', async (url) => {
    const res = await t.app.inject({ url, headers: TEST_KEY });
    expect(res.statusCode, res.body).toBe(200);
  });
});
