// What a caller meets around the routes themselves: another method on any route (405 with Allow), a
// mistyped path (404 naming the nearest route and /docs), interface B's index at /v1, a 401's challenge,
// and a bad parameter said once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CHALLENGE, PAYMENT_CHALLENGE } from '../../src/access/challenge.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ ...TEST_KEY_ENV });
});
afterAll(() => t.app.close());

describe('methods other than GET and HEAD', () => {
  // QUERY (a body method Fastify knew, which asked for a Content-Type: a 400) and others Node's parser accepts.
  const METHODS = ['QUERY', 'PROPFIND', 'MKCOL', 'TRACE', 'LOCK', 'SEARCH', 'PURGE', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

  it('answer 405 with Allow: GET, HEAD and the { error } body on every route', async () => {
    const paths = t.app.services.catalog.entries.map((e) => e.url).concat(['/', '/v1', '/risk', '/docs', '/openapi.json', '/llms.txt']);
    for (const path of paths) {
      for (const method of METHODS) {
        const res = await t.app.inject({ method: method as never, url: `${path}?x=1` });
        expect(res.statusCode, `${method} ${path}`).toBe(405);
        expect(res.headers.allow).toBe('GET, HEAD');
        expect(res.json()).toEqual({ error: `method ${method} not allowed on ${path}; use GET` });
      }
    }
  });

  it('on an unknown path, the 404', async () => {
    const res = await t.app.inject({ method: 'QUERY' as never, url: '/v1/nope', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(404);
  });
});

describe('a path no route serves', () => {
  it.each([
    ['/v1/prices', '/v1/price'],
    ['/v1/price/', '/v1/price'],
    ['/V1/Price', '/v1/price'],
    ['/v1/stauts', '/v1/status'],
    ['/risk/v1/token-risc', '/risk/v1/token-risk'],
    ['/healht', '/health'],
  ])('%s → 404 naming %s and /docs', async (url, nearest) => {
    const res = await t.app.inject({ url: `${url}?symbol=BTC` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: `no route for GET ${url}; did you mean ${nearest}? Every route is listed at /docs.` });
  });

  it('nothing near → the 404 names /docs alone', async () => {
    const res = await t.app.inject({ url: '/completely/elsewhere' });
    expect(res.json()).toEqual({ error: 'no route for GET /completely/elsewhere. Every route is listed at /docs.' });
  });
});

describe('GET /v1', () => {
  it("is interface B's index, as /risk is interface A's, with links that answer", async () => {
    const res = await t.app.inject({ url: '/v1' });
    expect(res.statusCode).toBe(200);
    const index = res.json();
    expect(index).toMatchObject({ name: 'marketgate market data', version: expect.any(String), links: { status: '/v1/status', health: '/health', docs: '/docs', openapi: '/openapi.json', token_risk: '/risk' } });
    for (const link of [index.links.status, index.links.health, index.links.token_risk]) expect((await t.app.inject({ url: link })).statusCode, link).toBe(200);
    for (const example of index.links.examples) expect((await t.app.inject({ url: example, headers: TEST_KEY })).statusCode, example).not.toBe(400);
    expect((await t.app.inject({ url: '/v1?x=1' })).statusCode).toBe(400);
  });
});

describe('a 401 carries WWW-Authenticate (RFC 9110)', () => {
  it('naming the key header, on a paid route and on a key-only one', async () => {
    for (const [url, headers] of [
      ['/v1/price?symbol=BTC', {}],
      ['/v1/price?symbol=BTC', { 'x-api-key': 'not-a-key' }],
      ['/v1/usage', {}],
    ] as const) {
      const res = await t.app.inject({ url, headers });
      expect(res.statusCode, url).toBe(401);
      expect(res.headers['www-authenticate']).toBe(KEY_CHALLENGE);
      expect(KEY_CHALLENGE).toContain('header="x-api-key"');
    }
  });

  it('and the payment too where x402 is on', async () => {
    const facilitator = await import('../fakes/fake-upstream.ts').then(async (m) => new m.FakeUpstream().start());
    facilitator.route('GET /supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
    const paid = await makeApp({ ...TEST_KEY_ENV, X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: facilitator.url });
    try {
      const res = await paid.app.inject({ url: '/v1/price?symbol=BTC', headers: { 'x-api-key': 'not-a-key' } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`${KEY_CHALLENGE}, ${PAYMENT_CHALLENGE}`);
      expect(PAYMENT_CHALLENGE).toContain('header="PAYMENT-SIGNATURE"');
      // A key-only route takes no payment: the key alone.
      expect((await paid.app.inject({ url: '/v1/usage' })).headers['www-authenticate']).toBe(KEY_CHALLENGE);
    } finally {
      await paid.app.close();
      await facilitator.stop();
    }
  });
});

describe('a bad parameter', () => {
  it.each(['/v1/price?symbol=', '/v1/volatility?symbol=', '/v1/price?symbol=%20'])('%s is said once', async (url) => {
    const res = await t.app.inject({ url, headers: TEST_KEY });
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.match(/query parameter 'symbol'/g)).toHaveLength(1);
  });
});
