// The x402 terms /openapi.json publishes (src/payments/core/published-terms.ts, src/reference/payment-terms.ts): each
// paid operation's x-payment-info carries, in protocols[].x402, exactly the `accepts` entries its route's 402 states,
// with the payment-identifier extension (not Bazaar's schemas, not signed offers, which last one 402); they are read
// from the payment table once it is ready, so before the facilitator has answered the document names the networks
// only, and a request for it asks the facilitator again; the document served next carries them, with a new ETag.
// The client side (one exchange for the first paid call of a client that read them): test/client/client-repeat.test.ts.
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, type FakeReply } from '../fakes/fake-upstream.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const PAY_TO = '0x1111111111111111111111111111111111111111';
const SUPPORTED: FakeReply = { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } };
const fake = new FakeUpstream();
const env = (extra: Record<string, string> = {}) => ({ X402_NETWORK: 'base', X402_PAY_TO: PAY_TO, X402_FACILITATOR: `${fake.url}/facilitator`, ...extra });

beforeAll(async () => {
  await fake.start();
});
afterAll(async () => {
  await fake.stop();
});

type Doc = { paths: Record<string, { get: { 'x-payment-info'?: { protocols: { x402: Record<string, unknown> }[] } } }> };
const x402Of = (doc: Doc, url: string) => doc.paths[url]!.get['x-payment-info']!.protocols[0]!.x402;
const challenge = async (t: TestApp, url: string): Promise<PaymentRequired> => {
  const res = await t.app.inject({ url });
  expect(res.statusCode, url).toBe(402);
  return decodePaymentRequiredHeader(res.headers['payment-required'] as string);
};

describe('/openapi.json with x402 on', () => {
  let t: TestApp;
  beforeAll(async () => {
    fake.route('GET /facilitator/supported', SUPPORTED);
    // Signed offers on: the 402 carries them, the document does not (they last one 402's maxTimeoutSeconds).
    t = await makeApp(env({ X402_SIGNING_KEY: `0x${'5a'.repeat(32)}` }));
    await t.app.reference.termsPublished();
  });
  afterAll(async () => {
    await t.app.close();
  });

  it("every paid operation carries its route's live 402 terms: the same accepts, the payment-identifier extension, nothing per-402", async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as Doc;
    const paid = t.app.services.catalog.entries.filter((e) => e.access === 'paid');
    expect(paid.length).toBeGreaterThan(20);
    for (const e of paid) {
      // A request without the route's parameters still gets its 402 first (the payment comes before validation).
      const required = await challenge(t, e.url);
      expect(Object.keys(required.extensions ?? {}).sort()).toEqual(['bazaar', 'offer-receipt', 'payment-identifier']);
      expect(x402Of(doc, e.url), e.url).toEqual({
        networks: ['eip155:8453'],
        x402Version: 2,
        accepts: required.accepts,
        extensions: { 'payment-identifier': required.extensions!['payment-identifier'] },
      });
    }
    expect(x402Of(doc, '/v1/price').accepts).toEqual([
      { scheme: 'exact', network: 'eip155:8453', amount: '1000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', payTo: PAY_TO, maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } },
    ]);
    // Free operations carry none; /docs/json is the same document.
    expect(doc.paths['/v1/sentiment']!.get['x-payment-info']).toBeUndefined();
    expect((await t.app.inject({ url: '/docs/json' })).json()).toEqual(doc);
  });

  it('the YAML form carries the same terms', async () => {
    const { parse } = await import('yaml');
    const yaml = parse((await t.app.inject({ url: '/docs/yaml' })).body) as Doc;
    const json = (await t.app.inject({ url: '/openapi.json' })).json() as Doc;
    expect(x402Of(yaml, '/v1/price')).toEqual(x402Of(json, '/v1/price'));
  });
});

describe('before the payment table is ready', () => {
  let t: TestApp;
  let up = false;
  beforeAll(async () => {
    fake.route('GET /facilitator/supported', () => (up ? SUPPORTED : { status: 503, body: { error: 'down' } }));
    t = await makeApp(env());
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('the document names the networks only; served, it asks the facilitator again, and the next one carries the terms with a new ETag', async () => {
    const asked = () => fake.calls('/facilitator/supported').length;
    // Start-up asked once, and was refused.
    await expect.poll(asked).toBeGreaterThanOrEqual(1);
    const before = await t.app.inject({ url: '/openapi.json' });
    expect(x402Of(before.json() as Doc, '/v1/price')).toEqual({ networks: ['eip155:8453'] });
    up = true;
    const n = asked();
    // This request is answered at once with what there is, and asks again in the background.
    const meanwhile = await t.app.inject({ url: '/openapi.json' });
    expect(meanwhile.headers.etag).toBe(before.headers.etag);
    await t.app.reference.termsPublished();
    expect(asked()).toBeGreaterThan(n);
    const after = await t.app.inject({ url: '/openapi.json' });
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(x402Of(after.json() as Doc, '/v1/price')).toMatchObject({ networks: ['eip155:8453'], x402Version: 2, accepts: (await challenge(t, '/v1/price?symbol=BTC')).accepts });
    // The compressed forms were made with it: a brotli reader gets the same terms.
    const br = await t.app.inject({ url: '/openapi.json', headers: { 'accept-encoding': 'br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.etag).toBe(`${after.headers.etag!.slice(0, -1)}-br"`);
  });
});
