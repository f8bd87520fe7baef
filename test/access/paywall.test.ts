// The paywall holds for every request shape. Every paid route of the catalog is asked with raw request
// lines over a socket (no client normalises them): origin-form, absolute-form in any case, `*://`,
// `*` then a path, bad ports, HEAD, encoded line terminators and separators, dot segments, doubled slashes, over-long
// paths. None may get data (or reach its handler) without a key or a verified payment, none a 500 —
// with x402 on (402) and off (401).
import { connect, type AddressInfo } from 'node:net';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discardPrefetch, grantRequired, prefetch } from '../../src/access/grant.ts';
import { createPaymentGate } from '../../src/payments/fastify.ts';
import { PaymentSchemes } from '../../src/payments/core/scheme.ts';
import { exactEvmScheme } from '../../src/payments/schemes/exact-evm/scheme.ts';
import { examplePath, type CatalogEntry } from '../../src/catalog/route.ts';
import { loadConfig } from '../../src/config.ts';
import { AppError } from '../../src/lib/errors.ts';
import { originForm, pathOf } from '../../src/edge/edge.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { probeCalls, probeRoute } from '../fakes/probe-route.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** Sends raw bytes and reads the answer until the server closes (every request says Connection: close). */
function raw(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const done = () => {
      const split = got.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1]), head: got.slice(0, split), body: got.slice(split + 4) });
    };
    socket.setEncoding('latin1');
    socket.on('data', (d) => (got += d));
    socket.on('close', done);
    socket.on('error', () => {});
    socket.write(request, 'latin1');
    setTimeout(() => socket.destroy(), 3000);
  });
}

/** Request targets that Fastify could route to a paid route's handler, or that break naive parsers. */
function shapes(e: CatalogEntry): Array<{ method: string; target: string }> {
  const path = e.url;
  const name = path.slice(path.lastIndexOf('/') + 1);
  const query = examplePath(e).slice(path.length);
  const get = (target: string) => ({ method: 'GET', target });
  return [
    get(`${path}${query}`),
    get(`http://evil.example${path}${query}`),
    get(`HTTP://X${path}${query}`),
    get(`https://127.0.0.1:1${path}${query}`),
    get(`*://x${path}${query}`),
    // `*` then a path without its slash: the router reads it from / (the paid route itself).
    get(`*${path.slice(1)}${query}`),
    { method: 'HEAD', target: `*${path.slice(1)}${query}` },
    get(`http://x:99999${path}${query}`),
    get(`http://x:abc${path}${query}`),
    get(`http://user:pass@x${path}${query}`),
    { method: 'HEAD', target: `${path}${query}` },
    { method: 'HEAD', target: `http://evil.example${path}${query}` },
    get(`${path}%0A${query}`),
    get(`${path}%0D${query}`),
    get(`${path}%0D%0AX-Injected:%201${query}`),
    get(`${path}%E2%80%A8${query}`),
    get(`${path}%E2%80%A9${query}`),
    get(`${path}${query}${query ? '&' : '?'}x=%0A%0D%E2%80%A8%E2%80%A9`),
    get(`${path.replace(name, encodeURIComponent(name).replace(/-/g, '%2D'))}${query}`),
    get(`${path.replace(name, name.replace(/^./, (c) => `%${c.charCodeAt(0).toString(16)}`))}${query}`),
    get(`${path}%${query}`),
    get(`${path}%c0${query}`),
    get(`${path}/${query}`),
    get(`/${path}${query}`),
    get(`${path.replace('/v1/', '/v1//')}${query}`),
    get(`${path.replace('/v1/', '/v1/./')}${query}`),
    get(`${path.replace('/v1/', '/v1/x/../')}${query}`),
    get(`${path.replace('/v1/', '/v1/%2e%2e/v1/')}${query}`),
    get(`/risk/..${path}${query}`),
    get(`${path};x=1${query}`),
    get(`${path}#frag`),
    get(`${path}${query}${'a'.repeat(20_000)}`),
    get(`${path}${'/x'.repeat(3000)}`),
  ];
}

/** Statuses a request without valid credentials may get on a paid route: refusals and client errors, never data. */
const REFUSED = new Set([400, 401, 402, 404, 405, 431]);

function expectRefused(answer: RawAnswer, request: string, refusal: number): void {
  const why = `${request.split('\r\n')[0]} → ${answer.head.split('\r\n')[0]} ${answer.body.slice(0, 120)}`;
  expect(REFUSED.has(answer.status), why).toBe(true);
  expect(answer.body, why).not.toContain('"data"');
  // Every answer carries the request id and the security headers, the framework's and Node's own included.
  expect(answer.head.toLowerCase(), why).toContain('x-request-id: ');
  expect(answer.head.toLowerCase(), why).toContain('x-content-type-options: nosniff');
  // A route that matched answers the route's own refusal, never a generic error.
  if (answer.status === 402 || answer.status === 401) expect(answer.status, why).toBe(refusal);
}

async function listen(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as AddressInfo).port;
}

function paidEntries(app: FastifyInstance): CatalogEntry[] {
  return app.services.catalog.entries.filter((e) => e.access === 'paid');
}

describe.each([
  { x402: true, refusal: 402 },
  { x402: false, refusal: 401 },
])('paid routes with x402 $x402: no data, no handler, no 500 for any request shape', ({ x402, refusal }) => {
  let t: TestApp;
  let port: number;
  let facilitator: FakeUpstream;
  let verifies = 0;

  beforeAll(async () => {
    facilitator = await new FakeUpstream().start();
    facilitator.route('GET /supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
    facilitator.route('POST /verify', () => {
      verifies++;
      return { body: { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer: '0x2222222222222222222222222222222222222222' } };
    });
    const env: Record<string, string> = x402 ? { X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: facilitator.url } : {};
    t = await makeApp({ ...env, ...TEST_KEY_ENV, PAID_IP_RATE_LIMIT: '1000000' }, undefined, [probeRoute]);
    // A payment's authorization is claimed in the ledger before it is verified: the ledger open before the first.
    if (x402) await t.app.services.db.ready();
    port = await listen(t);
  });
  afterAll(async () => {
    await t.app.close();
    await facilitator.stop();
  });

  it('enumerates every paid route of the catalog (the probe route included)', () => {
    const urls = paidEntries(t.app).map((e) => e.url);
    expect(urls.length).toBeGreaterThanOrEqual(24);
    expect(urls).toContain('/v1/test-probe');
    expect(urls).toContain('/v1/market-clock');
  });

  it('every shape of every paid route is refused, and no handler runs', async () => {
    const before = probeCalls.count;
    for (const entry of paidEntries(t.app)) {
      for (const { method, target } of shapes(entry)) {
        const request = `${method} ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
        expectRefused(await raw(port, request), request, refusal);
      }
    }
    expect(probeCalls.count).toBe(before);
  });

  it('a payment that does not verify, sent in any shape, is refused: no data, and the route\'s work ran only as a prefetch beside a verify', async () => {
    const before = probeCalls.count;
    const verifiesBefore = verifies;
    const payment = encodePaymentSignatureHeader({
      x402Version: 2,
      resource: { url: 'http://x/v1/test-probe', description: '', mimeType: 'application/json' },
      accepted: { scheme: 'exact', network: 'eip155:8453', amount: '1000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', payTo: '0x1111111111111111111111111111111111111111', maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } },
      payload: {
        signature: `0x${'ab'.repeat(65)}`,
        // Valid for the 60 s the 402 offers (an authorization valid for longer is refused before any verify).
        authorization: { from: '0x2222222222222222222222222222222222222222', to: '0x1111111111111111111111111111111111111111', value: '1000', validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) + 60), nonce: `0x${'11'.repeat(32)}` },
      },
    } as never);
    const probe = paidEntries(t.app).find((e) => e.url === '/v1/test-probe')!;
    for (const { method, target } of shapes(probe)) {
      const request = `${method} ${target} HTTP/1.1\r\nHost: x\r\nPAYMENT-SIGNATURE: ${payment}\r\nConnection: close\r\n\r\n`;
      expectRefused(await raw(port, request), request, refusal);
    }
    // The shapes that reach the probe route with this (well-formed, matching) payment go to the facilitator's
    // verify, and the probe's work is prefetched meanwhile (X402_PREFETCH): once per verify, never otherwise,
    // and none of it was delivered (expectRefused: no "data" in any answer). Without x402 nothing runs at all.
    expect(probeCalls.count - before).toBe(verifies - verifiesBefore);
    if (x402) expect(verifies - verifiesBefore).toBeGreaterThan(0);
    else expect(probeCalls.count).toBe(before);
  });

  it('an invalid key is a 401 in every shape; a valid key gets the data in absolute form too', async () => {
    const probe = paidEntries(t.app).find((e) => e.url === '/v1/test-probe')!;
    for (const { method, target } of shapes(probe)) {
      const request = `${method} ${target} HTTP/1.1\r\nHost: x\r\nx-api-key: wrong\r\nConnection: close\r\n\r\n`;
      expectRefused(await raw(port, request), request, 401);
    }
    const keyed = await raw(port, `GET http://evil.example/v1/test-probe HTTP/1.1\r\nHost: x\r\nx-api-key: ${TEST_KEY['x-api-key']}\r\nConnection: close\r\n\r\n`);
    expect(keyed.status).toBe(200);
    expect(JSON.parse(keyed.body).data).toEqual({ value: 42 });
  });

  it('a remembered answer is no way in: once a keyed call made the probe\'s answer servable from the fast lane, every shape without a key, with a wrong one or with an unverified payment is still refused', async () => {
    const probe = paidEntries(t.app).find((e) => e.url === '/v1/test-probe')!;
    const keyedCall = `GET /v1/test-probe HTTP/1.1\r\nHost: x\r\nx-api-key: ${TEST_KEY['x-api-key']}\r\nConnection: close\r\n\r\n`;
    expect((await raw(port, keyedCall)).status).toBe(200);
    const before = probeCalls.count;
    const again = await raw(port, keyedCall);
    expect(again.status).toBe(200);
    expect(probeCalls.count, 'the second keyed call is served from the fast lane').toBe(before);
    for (const { method, target } of shapes(probe)) {
      for (const credentials of ['', 'x-api-key: wrong\r\n']) {
        const request = `${method} ${target} HTTP/1.1\r\nHost: x\r\n${credentials}Connection: close\r\n\r\n`;
        expectRefused(await raw(port, request), request, credentials ? 401 : refusal);
      }
    }
  });

  it.runIf(x402)('without any credentials the challenge comes before parameter validation (catalogs probe bare URLs); with a payment, a bad parameter is a 400 and nothing is verified', async () => {
    const bare = await t.app.inject({ url: '/v1/price' });
    expect(bare.statusCode).toBe(402);
    expect(bare.headers['payment-required']).toBeTruthy();
    const before = verifies;
    const paying = await t.app.inject({ url: '/v1/price', headers: { 'payment-signature': 'eyJ4NDAyVmVyc2lvbiI6Mn0=' } });
    expect(paying.statusCode).toBe(400);
    expect(paying.json().error).toMatch(/^query parameter 'symbol' is required/);
    expect(verifies).toBe(before);
  });

  it.runIf(x402)('HEAD gets the route\'s 402 challenge; a HEAD with a payment is never verified nor settled', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/v1/test-probe' });
    expect(res.statusCode).toBe(402);
    expect(res.headers['payment-required']).toBeTruthy();
    const before = verifies;
    const paid = await t.app.inject({ method: 'HEAD', url: '/v1/test-probe', headers: { 'payment-signature': 'eyJ4NDAyVmVyc2lvbiI6Mn0=' } });
    expect(paid.statusCode).toBe(402);
    expect(verifies).toBe(before);
  });
});

describe('the paywall invariant fails closed', () => {
  it('a paid handler without a grant for its own route does not run (grantRequired)', async () => {
    const entry = { url: '/v1/x', access: 'paid' } as CatalogEntry;
    const other = { url: '/v1/y', access: 'paid' } as CatalogEntry;
    let ran = 0;
    const handler = grantRequired(entry, (async () => void ran++) as never, () => new AppError(402, 'payment required'));
    const errors: unknown[] = [];
    const log = { error: (...args: unknown[]) => errors.push(args) };
    const call = (grant: unknown) => (handler as (req: unknown, reply: unknown) => unknown).call(null, { grant, log, method: 'GET', url: '/v1/x' }, {});
    expect(() => call(null)).toThrow('payment required');
    expect(() => call({ entry: other, via: 'x402' })).toThrow('payment required');
    expect(ran).toBe(0);
    expect(errors).toHaveLength(2);
    await call({ entry, via: 'key' });
    expect(ran).toBe(1);
  });

  it('a prefetched answer is held, never delivered without a grant for its route, and delivered once with one (grant.ts)', async () => {
    const entry = { url: '/v1/x', access: 'paid' } as CatalogEntry;
    const other = { url: '/v1/y', access: 'paid' } as CatalogEntry;
    let ran = 0;
    const handler = grantRequired(entry, (async () => ({ data: ++ran })) as never, () => new AppError(402, 'payment required'));
    grantRequired(other, (async () => ({ data: 'other' })) as never, () => new AppError(402, 'payment required'));
    const request = (matched: CatalogEntry) => ({ grant: null as unknown, log: { error: () => {} }, method: 'GET', url: matched.url, routeOptions: { config: { catalog: matched } }, server: {} });
    const call = (req: unknown) => (handler as (req: unknown, reply: unknown) => unknown).call(null, req, {});

    // Started for the matched route only, once, and never for a request that already holds a grant.
    const refused = request(entry);
    expect(prefetch(refused as never, other)).toBe(false);
    expect(prefetch(refused as never, entry)).toBe(true);
    expect(prefetch(refused as never, entry)).toBe(false);
    expect(ran).toBe(1);
    expect(prefetch({ ...request(entry), grant: { entry, via: 'key' } } as never, entry)).toBe(false);
    // No grant (the payment was refused, yet the handler reached somehow): refused, the held answer goes nowhere.
    expect(() => call(refused)).toThrow('payment required');
    // A grant for another route does not deliver it either.
    const misgranted = request(entry);
    prefetch(misgranted as never, entry);
    misgranted.grant = { entry: other, via: 'x402' };
    expect(() => call(misgranted)).toThrow('payment required');
    expect(ran).toBe(2);

    // With the grant for its route: the prefetched answer, without running the handler again.
    const paid = request(entry);
    prefetch(paid as never, entry);
    paid.grant = { entry, via: 'x402' };
    expect(await call(paid)).toEqual({ data: 3 });
    expect(ran).toBe(3);
    // Discarded (the gate does so on every refusal): a later grant runs the handler itself.
    const dropped = request(entry);
    prefetch(dropped as never, entry);
    discardPrefetch(dropped as never);
    dropped.grant = { entry, via: 'x402' };
    expect(await call(dropped)).toEqual({ data: 5 });
  });

  it('a prefetched handler gets no reply to send with; one that reaches for it runs again, normally, once granted', async () => {
    const entry = { url: '/v1/z', access: 'paid' } as CatalogEntry;
    const replies: unknown[] = [];
    const handler = grantRequired(
      entry,
      (async (_req: unknown, reply: { header(name: string, value: string): void }) => {
        reply.header('x-seen', '1');
        replies.push(reply);
        return { data: 1 };
      }) as never,
      () => new AppError(402, 'payment required'),
    );
    const req = { grant: null as unknown, log: { error: () => {} }, method: 'GET', url: entry.url, routeOptions: { config: { catalog: entry } }, server: {} };
    expect(prefetch(req as never, entry)).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(replies).toEqual([]); // the prefetch failed at the reply, and sent nothing
    req.grant = { entry, via: 'x402' };
    const reply = { header: () => {} };
    expect(await (handler as (req: unknown, reply: unknown) => unknown).call(null, req, reply)).toEqual({ data: 1 });
    expect(replies).toEqual([reply]);
  });

  it('the gate answers 402 (and logs) when the SDK has no payment requirements for a route the catalog marks paid', async () => {
    const facilitator = await new FakeUpstream().start();
    facilitator.route('GET /supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
    const config = loadConfig({ X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: facilitator.url });
    const logged: unknown[] = [];
    const log = { error: (...a: unknown[]) => logged.push(a), warn: () => {}, info: () => {} } as never;
    const { HTTPFacilitatorClient } = await import('@x402/core/server');
    // The SDK's table is built from no routes at all: every paid route is unknown to it.
    const gate = createPaymentGate({
      x402: config.x402,
      facilitator: new HTTPFacilitatorClient({ url: facilitator.url }),
      facilitatorName: facilitator.url,
      paidRoutes: () => [],
      publicBaseUrl: 'http://x',
      log,
      records: {} as never,
      paymentIds: {} as never,
      database: { degraded: false },
      metrics: { payment: () => {}, settleLatency: () => {} },
      paidCallMs: 1000,
      schemes: new PaymentSchemes([exactEvmScheme(config.x402, '1000', undefined)]),
    });
    const sent: { status?: number; body?: unknown } = {};
    const reply = { code: (s: number) => ((sent.status = s), reply), headers: () => reply, send: (b: unknown) => ((sent.body = b), reply) };
    const req = { headers: {}, method: 'GET', query: {}, grant: null } as never;
    await gate.preHandler(req, reply as never, { url: '/v1/market-clock', access: 'paid' } as CatalogEntry);
    expect(sent.status).toBe(402);
    expect((req as { grant: unknown }).grant).toBeNull();
    expect(logged).toHaveLength(1);
    await facilitator.stop();
  });
});

describe('pathOf', () => {
  it('reads the path of origin-form and absolute-form targets', () => {
    expect(pathOf('/v1/price?symbol=BTC')).toBe('/v1/price');
    expect(pathOf('http://evil.example/v1/price?x=1')).toBe('/v1/price');
    expect(pathOf('HTTP://X')).toBe('/');
    expect(pathOf('*://x/v1/market-clock')).toBe('/v1/market-clock');
    expect(pathOf('*')).toBe('*');
  });

  it('originForm keeps the query of an absolute-form target and leaves other forms alone', () => {
    expect(originForm('http://risk.example/v1/status?x=1')).toBe('/v1/status?x=1');
    expect(originForm('HTTP://X')).toBe('/');
    expect(originForm('http://x?y=1')).toBe('/?y=1');
    expect(originForm('/v1/price?symbol=BTC')).toBe('/v1/price?symbol=BTC');
    expect(originForm('*')).toBe('*');
  });
});
