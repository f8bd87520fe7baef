// What every request meets before a route: CORS, security headers, per-IP limits (before any payment is
// verified), and `{ error }` bodies for what the framework or Node would answer in their own shapes.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { encodePaymentSignatureHeader, decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

/** Sends raw bytes to a listening app and returns what came back before the server closed or 2 s passed. */
function raw(port: number, request: string, waitMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => (got += d));
    socket.on('close', () => resolve(got));
    socket.on('error', () => resolve(got));
    socket.write(request);
    setTimeout(() => (socket.destroy(), resolve(got)), waitMs);
  });
}
const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);
const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
/** Node's own low-level answers carry the request id and the security headers like every other answer. */
function expectEdgeHeaders(response: string): void {
  const head = response.slice(0, response.indexOf('\r\n\r\n')).toLowerCase();
  expect(head).toMatch(/\r\nx-request-id: [\w.:-]+\r\n/);
  expect(head).toContain("\r\ncontent-security-policy: default-src 'none';frame-ancestors 'none'\r\n");
  expect(head).toContain('\r\nx-content-type-options: nosniff\r\n');
  expect(head).toContain('\r\naccess-control-allow-origin: *\r\n');
}

describe('framework and protocol errors answer { error } JSON', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await makeApp({ REQUEST_TIMEOUT_MS: '1000' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.app.close());

  it('GET / is a small index with links', async () => {
    const res = await t.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'marketgate', version: expect.any(String), links: { docs: '/docs', openapi: '/openapi.json', llms_txt: '/llms.txt', market_status: '/v1/status', risk_status: '/risk/v1/status' } });
  });

  it.each(['/risk', '/risk/'])('GET %s is interface A\'s index, with links that answer', async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(200);
    const index = res.json();
    expect(index).toMatchObject({
      name: 'marketgate token risk',
      version: '1.0.0',
      links: { status: '/risk/v1/status', health: '/risk/health', docs: '/docs', openapi: '/openapi.json', token_risk: '/risk/v1/token-risk?chain=base&address=0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' },
      disclaimer: expect.stringContaining('Not financial advice'),
    });
    for (const link of ['status', 'health']) expect((await t.app.inject({ url: index.links[link] })).statusCode, link).toBe(200);
  });

  it('malformed percent-encoding → 400', async () => {
    const res = await t.app.inject({ url: '/%ff' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'malformed URL (invalid percent-encoding, or a host or port that is not valid)' });
    // Errors the router raises before any hook carry the request id and the security headers too.
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
  });

  it('unknown path → 404', async () => {
    const res = await t.app.inject({ url: '/v1/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'no route for GET /v1/nope. Every route is listed at /docs.' });
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'] as const)('%s on a GET route → 405 with Allow', async (method) => {
    const res = await t.app.inject({ method, url: '/v1/price?symbol=BTC', payload: method === 'DELETE' ? undefined : { a: 1 } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.json()).toEqual({ error: `method ${method} not allowed on /v1/price; use GET` });
  });

  it('a body is never read: POST with a large one is the 405, POST to an unknown path the 404', async () => {
    const payload = JSON.stringify({ x: 'y'.repeat(70_000) });
    const res = await t.app.inject({ method: 'POST', url: '/v1/price', payload, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(405);
    const unknown = await t.app.inject({ method: 'POST', url: '/v1/nope', payload, headers: { 'content-type': 'application/json' } });
    expect(unknown.statusCode).toBe(404);
  });

  it('huge headers → 431', async () => {
    const res = await raw(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(statusOf(res)).toBe(431);
    expect(bodyOf(res)).toEqual({ error: 'request headers (or the URL) are too large' });
    expectEdgeHeaders(res);
  });

  it('a huge URL → 431', async () => {
    const res = await raw(port, `GET /v1/price?symbol=${'A'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(statusOf(res)).toBe(431);
  });

  it('a client that never finishes its request → 408', async () => {
    const res = await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\n', 4000);
    expect(statusOf(res)).toBe(408);
    expect(bodyOf(res)).toEqual({ error: 'request not received in time' });
    expectEdgeHeaders(res);
  });

  it('an HTTP/1.1 request without Host → 400', async () => {
    const res = await raw(port, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(statusOf(res)).toBe(400);
    expect(bodyOf(res)).toEqual({ error: 'the Host header is required (HTTP/1.1)' });
    expectEdgeHeaders(res);
  });

  it.each(['GET *', 'GET *health', 'HEAD *health', 'GET *v1/status', 'GET *?x=1'])(
    'the asterisk form outside OPTIONS (%s, which the router would read as a path from /) → 400 JSON',
    async (line) => {
      const res = await raw(port, `${line} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(statusOf(res)).toBe(400);
      if (!line.startsWith('HEAD')) expect(bodyOf(res)).toEqual({ error: "malformed request target: '*' is for OPTIONS only; a path starts with /" });
      expectEdgeHeaders(res);
    },
  );

  it('OPTIONS * is still a preflight', async () => {
    const res = await raw(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET\r\nConnection: close\r\n\r\n');
    expect(statusOf(res)).toBe(204);
  });

  it('garbage instead of HTTP → 400 JSON', async () => {
    const res = await raw(port, 'HELLO THERE\r\n\r\n');
    expect(statusOf(res)).toBe(400);
    expect(bodyOf(res)).toEqual({ error: 'malformed HTTP request' });
    expectEdgeHeaders(res);
  });
});

describe('CORS and security headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({});
  });
  afterAll(() => t.app.close());

  it('answers a preflight from any origin for the credential headers', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/price?symbol=BTC',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key, payment-signature, x-payment' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/GET/);
    for (const h of ['x-api-key', 'payment-signature', 'x-payment']) expect(String(res.headers['access-control-allow-headers'])).toContain(h);
  });

  it('exposes the payment, rate-limit and request-id headers on real answers', async () => {
    const res = await t.app.inject({ url: '/v1/status', headers: { origin: 'https://agent.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const exposed = String(res.headers['access-control-expose-headers']);
    for (const h of ['payment-required', 'payment-response', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id']) {
      expect(exposed).toContain(h);
    }
  });

  it('answers without an Origin carry Allow-Origin but not the list of readable headers', async () => {
    const res = await t.app.inject({ url: '/v1/status' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers']).toBeUndefined();
  });

  it('an OPTIONS request that is not a preflight is a 400 saying what a preflight needs', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: '/v1/status' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'a CORS preflight needs the Origin and Access-Control-Request-Method headers' });
  });

  it('sends the API security headers (OWASP REST): a CSP that forbids everything and framing, nosniff; HSTS only over HTTPS', async () => {
    const res = await t.app.inject({ url: '/v1/status' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBeUndefined();
    expect(res.headers['strict-transport-security']).toBeUndefined();
    const tls = await makeApp({ TRUST_PROXY: 'true' });
    const secure = await tls.app.inject({ url: '/v1/status', headers: { 'x-forwarded-proto': 'https' } });
    expect(secure.headers['strict-transport-security']).toBe('max-age=15552000; includeSubDomains');
    await tls.app.close();
  });

  it('the /docs pages get helmet\'s HTML set with their own CSP', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/default-src 'self'.*script-src 'self'/);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
  });
});

describe('parameters', () => {
  const fake = new FakeUpstream();
  let t: TestApp;
  beforeAll(async () => {
    await fake.start();
    fake.route('GET /api/v3/klines', { body: recorded('binance__spot_klines.json') });
    fake.route('GET /api/v1/token_security/8453', (req) => ({ body: { code: 1, message: 'OK', result: { [String(req.query.get('contract_addresses'))]: { token_name: 'USD Coin' } } } }));
    t = await makeApp({ ...TEST_KEY_ENV, BINANCE_SPOT_BASE_URL: fake.url, GOPLUS_BASE_URL: fake.url, HYPERLIQUID_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await t.app.close();
    await fake.stop();
  });
  const get = (url: string) => t.app.inject({ url, headers: TEST_KEY });

  it.each(['0x10', '1e2', '+5', '5.0', '-1', ' 5', '99999999999'])('limit=%s is not a plain decimal integer → 400', async (limit) => {
    const res = await get(`/v1/ohlcv?symbol=BTC&limit=${encodeURIComponent(limit)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "query parameter 'limit' must be a whole number from 1 to 1000" });
  });

  it('limit=16 is 16', async () => {
    const res = await get('/v1/ohlcv?symbol=BTC&limit=16');
    expect(res.statusCode).toBe(200);
    expect(fake.calls('/api/v3/klines').at(-1)!.query.get('limit')).toBe('16');
  });

  // Crypto-only routes ask the venue for any well-formed base asset (test/market/crypto-only-symbols.test.ts);
  // only what cannot be a crypto symbol is refused here.
  it.each(['/v1/orderbook?symbol=BRK.B', '/v1/funding-oi?symbol=BRK-B/X', '/v1/basis?symbol=A.B', '/v1/long-short-ratio?symbol=TOOLONGFORACRYPTOASSET', '/v1/perpdex?symbol=BRK.B'])(
    'a crypto-only route refuses what cannot be a crypto symbol: %s → 400',
    async (url) => {
      const res = await get(url);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(/^query parameter 'symbol' (takes crypto only: .*; got '.+'|must be .*)$/);
    },
  );

  it('an EVM address with a 0X prefix is accepted (any case, as documented)', async () => {
    const res = await t.app.inject({ url: '/risk/v1/token-risk?chain=base&address=0X833589FCD6EDB6E08F4C7C32D4F71B54BDA02913' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.address).toBe('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
  });
});

describe('rate limits', () => {
  it('/health and /risk/health are never limited; free routes are, per client IP', async () => {
    const t = await makeApp({ FREE_RATE_LIMIT: '2', RISK_RATE_LIMIT: '2' });
    for (let i = 0; i < 6; i++) {
      for (const url of ['/health', '/risk/health']) {
        const res = await t.app.inject({ url });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['x-ratelimit-limit'], url).toBeUndefined();
      }
    }
    expect((await t.app.inject({ url: '/v1/status' })).statusCode).toBe(200);
    const last = await t.app.inject({ url: '/v1/status' });
    expect(last.statusCode).toBe(200);
    // The quota headers go with the 429, not with every answer.
    expect(last.headers['x-ratelimit-remaining']).toBeUndefined();
    const limited = await t.app.inject({ url: '/v1/status' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect([limited.headers['x-ratelimit-limit'], limited.headers['x-ratelimit-remaining']]).toEqual(['2', '0']);
    expect(limited.json()).toEqual({ error: expect.stringMatching(/^rate limit exceeded: 2 requests per minute per client on the reference pages; retry in \d+ s$/) });
    // Another client is not affected.
    expect((await t.app.inject({ url: '/v1/status', remoteAddress: '10.0.0.9' })).statusCode).toBe(200);
    // An IPv6 client counts by its /64: rotating addresses inside it does not escape the limit.
    const from = (remoteAddress: string) => t.app.inject({ url: '/v1/status', remoteAddress }).then((r) => r.statusCode);
    expect([await from('2001:db8:1:2::1'), await from('2001:db8:1:2::2'), await from('2001:db8:1:2:ffff::3')]).toEqual([200, 200, 429]);
    expect(await from('2001:db8:1:3::1')).toBe(200);
    await t.app.close();
  });

  it('the status pages count in a bucket of their own, apart from the data routes', async () => {
    const t = await makeApp({ FREE_RATE_LIMIT: '2', RISK_RATE_LIMIT: '2' });
    const status = (url: string) => t.app.inject({ url }).then((r) => r.statusCode);
    // Two status calls, then the free data routes still have their whole quota (they fail upstream here: 502, not 429).
    expect([await status('/v1/status'), await status('/v1/status')]).toEqual([200, 200]);
    expect([await status('/v1/sentiment'), await status('/v1/sentiment')]).toEqual([502, 502]);
    expect(await status('/v1/sentiment')).toBe(429);
    expect(await status('/v1/status')).toBe(429);
    // Interface A the same: its status page does not use up the token-risk quota.
    expect([await status('/risk/v1/status'), await status('/risk/v1/status')]).toEqual([200, 200]);
    const risk = '/risk/v1/token-risk?chain=base&address=0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
    expect([await status(risk), await status(risk)]).toEqual([502, 502]);
    expect(await status(risk)).toBe(429);
    // The reference documents count in the status pages' bucket (a 226 KB OpenAPI document is no free way to load the server).
    for (const url of ['/llms.txt', '/openapi.json', '/docs/json', '/.well-known/agent.json']) expect(await status(url), url).toBe(429);
    const fromOther = (url: string) => t.app.inject({ url, remoteAddress: '10.0.0.7' }).then((r) => r.statusCode);
    expect([await fromOther('/openapi.json'), await fromOther('/llms.txt'), await fromOther('/v1/status')]).toEqual([200, 200, 429]);
    await t.app.close();
  });

  it('paid requests without a key are limited per IP before the facilitator is asked to verify anything', async () => {
    const facilitator = await new FakeUpstream().start();
    let verifies = 0;
    facilitator.route('GET /supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
    facilitator.route('POST /verify', () => {
      verifies++;
      return { body: { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer: '0x2222222222222222222222222222222222222222' } };
    });
    const t = await makeApp({
      X402_PAY_TO: '0x1111111111111111111111111111111111111111',
      X402_FACILITATOR: facilitator.url,
      PAID_IP_RATE_LIMIT: '5',
      ...TEST_KEY_ENV,
    });
    const challenge = await t.app.inject({ url: '/v1/price?symbol=BTC' });
    expect(challenge.statusCode).toBe(402);
    const accepted = decodePaymentRequiredHeader(String(challenge.headers['payment-required'])).accepts[0]!;
    const payment = encodePaymentSignatureHeader({
      x402Version: 2,
      resource: { url: 'http://x/v1/price', description: '', mimeType: 'application/json' },
      accepted,
      payload: {
        signature: `0x${'ab'.repeat(65)}`,
        // Valid for the 60 s the 402 offers (an authorization valid for longer is refused before any verify).
        authorization: { from: '0x2222222222222222222222222222222222222222', to: accepted.payTo, value: accepted.amount, validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) + 60), nonce: `0x${'11'.repeat(32)}` },
      },
    } as never);

    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await t.app.inject({ url: '/v1/price?symbol=BTC', headers: { 'payment-signature': payment } })).statusCode);
    // The challenge above counted too: 4 more reach the payment check, then 429 without asking the facilitator.
    expect(statuses.filter((s) => s === 402)).toHaveLength(4);
    expect(statuses.filter((s) => s === 429)).toHaveLength(16);
    expect(verifies).toBe(4);
    const limited = await t.app.inject({ url: '/v1/price?symbol=BTC', headers: { 'payment-signature': payment } });
    expect(limited.json()).toEqual({ error: expect.stringMatching(/^rate limit exceeded: 5 requests per minute per client without an API key; retry in \d+ s$/) });
    // A key has its own bucket.
    expect((await t.app.inject({ url: '/v1/status', headers: TEST_KEY })).statusCode).toBe(200);
    await t.app.close();
    await facilitator.stop();
  });

  it('a garbage payment header is a 402 that says so, without the SDK printing anything', async () => {
    const facilitator = await new FakeUpstream().start();
    facilitator.route('GET /supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
    const t = await makeApp({ X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: facilitator.url });
    const printed: unknown[] = [];
    const original = { warn: console.warn, error: console.error, log: console.log };
    console.warn = console.error = console.log = (...args: unknown[]) => void printed.push(args);
    try {
      const res = await t.app.inject({ url: '/v1/price?symbol=BTC', headers: { 'payment-signature': 'not base64 at all!!' } });
      expect(res.statusCode).toBe(402);
      expect(res.json()).toMatchObject({ error: expect.stringMatching(/^payment rejected: malformed payment header/), reason: expect.stringMatching(/^malformed payment header/) });
    } finally {
      Object.assign(console, original);
    }
    expect(printed).toEqual([]);
    await t.app.close();
    await facilitator.stop();
  });
});
