import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatedFiles } from '../../scripts/generated-docs.ts';
import { paymentRequiredSchema } from '../../src/catalog/responses.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { probeRoute } from '../fakes/probe-route.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const PAY_TO = '0x1111111111111111111111111111111111111111';
const fake = new FakeUpstream();
let t: TestApp;
beforeAll(async () => {
  await fake.start();
  fake.route('GET /facilitator/supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
  t = await makeApp({ GOPLUS_BASE_URL: fake.url, X402_NETWORK: 'base', X402_PAY_TO: PAY_TO, X402_FACILITATOR: `${fake.url}/facilitator` }, undefined, [probeRoute]);
  // The document as it is once the facilitator has answered: with each paid route's x402 terms (payment-terms.test.ts).
  await t.app.reference.termsPublished();
});
afterAll(async () => {
  await t.app.close();
  await fake.stop();
});

const get = (url: string) => t.app.inject({ url });

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.0.3 document (external validator)', async () => {
    const doc = (await get('/openapi.json')).json();
    expect(doc.openapi).toBe('3.0.3');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every catalog route with parameters, security, free/paid marking and payment info', async () => {
    const doc = (await get('/openapi.json')).json();
    const catalog = t.app.services.catalog.entries;
    expect(Object.keys(doc.paths).sort()).toEqual(catalog.map((e) => e.url).sort());
    for (const e of catalog) {
      const op = doc.paths[e.url].get;
      expect(op['x-access'], e.url).toBe(e.access);
      expect(op.summary).toBe(e.def.summary);
      expect(op.operationId).toBe(e.operationId);
      if (e.access === 'paid') {
        expect(op.security).toEqual([{ ApiKeyAuth: [] }, { X402Payment: [] }]);
        expect(op['x-price']).toBe('$0.001');
        // What x402scan and @agentcash/discovery read: the price in USD (X402_PRICE without the $) and the protocol.
        expect(op['x-payment-info']).toEqual({ price: { mode: 'fixed', amount: '0.001', currency: 'USD' }, protocols: [{ x402: expect.objectContaining({ networks: ['eip155:8453'], x402Version: 2 }) }] });
        expect(op['x-payment-info'].protocols[0].x402.accepts).toEqual([expect.objectContaining({ scheme: 'exact', network: 'eip155:8453', amount: '1000', payTo: PAY_TO })]);
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '402']));
      } else if (e.access === 'key') {
        // An API key is required, and nothing is ever charged: no x402 security, no 402.
        expect(op.security).toEqual([{ ApiKeyAuth: [] }]);
        expect(op['x-price']).toBeUndefined();
        expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '429', '503']); // 400: a query parameter it does not take
      } else {
        expect(op.security).toEqual([]);
        expect(op['x-payment-info']).toBeUndefined();
      }
      for (const p of op.parameters ?? []) expect(p.description, `${e.url} ${p.name}`).toBeTruthy();
    }
    const price = doc.paths['/v1/price'].get;
    expect(price.responses['402'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PaymentRequired' });
    expect(Object.keys(doc.components.schemas.PaymentRequired.properties)).toEqual(['error', 'reason', 'price', 'network', 'asset', 'payTo', 'networks', 'accepts']);
    const tokenRisk = doc.paths['/risk/v1/token-risk'].get;
    expect(tokenRisk.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required])).toEqual([
      ['address', true],
      ['chain', true],
    ]);
    expect(doc.components.securitySchemes.ApiKeyAuth).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }));
    expect(doc.components.securitySchemes.X402Payment.description).toMatch(/\$0\.001 per call in the token 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 on eip155:8453/);
  });

  it('takes the price in x-payment-info and x-guidance from X402_PRICE', async () => {
    const other = await makeApp({ X402_NETWORK: 'base', X402_PAY_TO: PAY_TO, X402_FACILITATOR: `${fake.url}/facilitator`, X402_PRICE: '$0.0025' });
    try {
      await other.app.reference.termsPublished();
      const doc = (await other.app.inject({ url: '/openapi.json' })).json();
      const paid = other.app.services.catalog.entries.filter((e) => e.access === 'paid');
      expect(paid.length).toBeGreaterThan(0);
      for (const e of paid) {
        expect(doc.paths[e.url].get['x-payment-info'], e.url).toMatchObject({ price: { mode: 'fixed', amount: '0.0025', currency: 'USD' }, protocols: [{ x402: { networks: ['eip155:8453'] } }] });
        // 0.0025 USDC in atomic units (6 decimals).
        expect(doc.paths[e.url].get['x-payment-info'].protocols[0].x402.accepts[0].amount, e.url).toBe('2500');
      }
      expect(doc.info['x-guidance']).toMatch(/\$0\.0025 in USD Coin/);
    } finally {
      await other.app.close();
    }
  });

  it('names every operation with a stable, readable operationId: get + the path in camel case', async () => {
    const doc = (await get('/openapi.json')).json();
    const ids = Object.fromEntries(Object.entries(doc.paths).map(([path, item]) => [path, (item as { get: { operationId: string } }).get.operationId]));
    expect(ids).toMatchObject({
      '/risk/v1/token-risk': 'getTokenRisk',
      '/risk/health': 'getRiskHealth',
      '/risk/v1/status': 'getRiskStatus',
      '/health': 'getHealth',
      '/v1/status': 'getStatus',
      '/v1/price': 'getPrice',
      '/v1/long-short-ratio': 'getLongShortRatio',
      '/v1/chain-ens': 'getChainEns',
    });
    expect(new Set(Object.values(ids)).size).toBe(Object.keys(ids).length);
  });

  it('declares its response headers once, as components, and references them where they are sent', async () => {
    const doc = (await get('/openapi.json')).json();
    expect(Object.keys(doc.components.headers).sort()).toEqual(
      ['ContentDigest', 'PaymentRequired', 'PaymentResponse', 'RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset', 'RequestId', 'RetryAfter'],
    );
    const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
    for (const item of Object.values(doc.paths) as { get: { responses: Record<string, { headers: object }> } }[]) {
      for (const response of Object.values(item.get.responses)) expect(response.headers).toMatchObject({ 'x-request-id': ref('RequestId') });
    }
    const price = doc.paths['/v1/price'].get.responses;
    expect(price['402'].headers).toEqual({ 'x-request-id': ref('RequestId'), 'PAYMENT-REQUIRED': ref('PaymentRequired') });
    expect(price['200'].headers).toEqual({ 'x-request-id': ref('RequestId'), 'PAYMENT-RESPONSE': ref('PaymentResponse'), 'Content-Digest': ref('ContentDigest') });
    expect(price['503'].headers).toMatchObject({ 'Retry-After': ref('RetryAfter') });
    expect(price['429'].headers).toMatchObject({ 'Retry-After': ref('RetryAfter'), 'x-ratelimit-reset': ref('RateLimitReset') });
    // Interface A's 502 stands for B's 503 and carries Retry-After when the provider is limiting us or paused.
    expect(doc.paths['/risk/v1/token-risk'].get.responses['502'].headers).toMatchObject({ 'Retry-After': ref('RetryAfter') });
    expect(doc.paths['/v1/sentiment'].get.responses['200'].headers).toEqual({ 'x-request-id': ref('RequestId') });
  });

  it('says how agents pay in info.x-guidance, has a licence, and keeps only the schemas it uses', async () => {
    const doc = (await get('/openapi.json')).json();
    expect(doc.info.license).toEqual({ name: 'Proprietary: all rights reserved' });
    const guidance: string = doc.info['x-guidance'];
    expect(guidance.split('\n').length).toBeLessThanOrEqual(8);
    expect(guidance).toMatch(/HTTP 402 with a PAYMENT-REQUIRED header \(base64 JSON: \$0\.001 in USD Coin 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 on eip155:8453/);
    expect(guidance).toMatch(/PAYMENT-SIGNATURE/);
    expect(guidance).toMatch(/payment-identifier extension \(declared optional in every 402\); resending the same PAYMENT-SIGNATURE returns the first answer again/);
    expect(guidance).toMatch(/409/);
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['Error', 'PaymentRequired', 'SourceMeta']);
  });

  it('puts `nullable` only beside a `type` (OpenAPI 3.0 ignores it elsewhere): a nullable union is nullable in each branch', async () => {
    const doc = (await get('/openapi.json')).json();
    const flags = doc.paths['/risk/v1/token-risk'].get.responses['200'].content['application/json'].schema.properties.data.properties.flags;
    expect(flags.properties.honeypot.additionalProperties).toEqual({ anyOf: [{ type: 'boolean', nullable: true }, { type: 'number', nullable: true }] });
    const untyped: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (node === null || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (n.nullable === true && n.type === undefined) untyped.push(path);
      for (const [k, v] of Object.entries(n)) walk(v, `${path}/${k}`);
    };
    walk(doc, '#');
    expect(untyped).toEqual([]);
  });

  it('the committed generated files (openapi/openapi.json, .env.example, the configuration reference, the providers table) are current (run `npm run docs`)', async () => {
    for (const file of await generatedFiles()) {
      expect(readFileSync(new URL(`../../${file.path}`, import.meta.url), 'utf8'), file.path).toBe(file.content);
    }
  });
});

describe('access policy', () => {
  it('the routes declare the product\'s policy: only the six free interface-B routes (plus health) are free; /v1/usage needs a key and is never charged', () => {
    const FREE = new Set(['/v1/status', '/v1/predmkt-probability', '/v1/sentiment', '/v1/market-overview', '/v1/gas', '/v1/macro-calendar']);
    const KEY_ONLY = new Set(['/v1/usage']);
    const market = t.app.services.catalog.of('market');
    expect(market.filter((e) => e.access === 'paid').length).toBeGreaterThanOrEqual(7);
    for (const e of market) expect(e.access, e.url).toBe(KEY_ONLY.has(e.url) ? 'key' : e.url.startsWith('/v1/') && !FREE.has(e.url) ? 'paid' : 'free');
    expect(t.app.services.catalog.find('/v1/usage')).toMatchObject({ access: 'key', price: null });
    for (const e of t.app.services.catalog.of('risk')) expect(e.access, e.url).toBe('free');
  });

  it('every paid route answers 402 without credentials when x402 is on (the facilitator is not even needed for that)', async () => {
    const paid = t.app.services.catalog.entries.filter((e) => e.access === 'paid');
    expect(paid.length).toBeGreaterThan(0);
    for (const e of paid) {
      const res = await get(e.def.example ? `${e.url}?${new URLSearchParams(e.def.example)}` : e.url);
      expect(res.statusCode, e.url).toBe(402);
      expect(res.json()).toMatchObject({ error: 'payment required', price: '$0.001', network: 'eip155:8453', payTo: PAY_TO });
      // Exactly the documented 402 body (OpenAPI: PaymentRequired), nothing undocumented.
      expect(paymentRequiredSchema.parse(res.json())).toEqual(res.json());
      expect(res.headers['payment-required']).toBeTruthy();
      // A payment challenge must never be replayed by a cache or CDN.
      expect(res.headers['cache-control']).toMatch(/no-store/);
    }
  });
});

describe('/llms.txt', () => {
  it('has the title, a summary, how to authenticate and pay, and every endpoint with parameters and an example URL', async () => {
    const res = await get('/llms.txt');
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.body;
    expect(text.startsWith('# marketgate\n\n> ')).toBe(true);
    expect(text).toContain('## Authentication and payment');
    expect(text).toMatch(/x-api-key/);
    // Batch settlement is on by default (X402_BATCH_SETTLEMENT=auto): the text says it is offered when the 402 lists it.
    expect(text).toMatch(/x402 \(protocol v2, scheme "exact", or "batch-settlement" \(one deposit, then a signed voucher per call\) when the 402 lists it beside "exact"\): \$0\.001 in the token 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 on eip155:8453/);
    for (const e of t.app.services.catalog.entries) {
      expect(text, e.url).toContain(`### GET ${e.url} (${{ paid: 'paid, $0.001', free: 'free', key: 'API key required, never charged' }[e.access]})`);
    }
    expect(text).toContain('- chain (string, required, one of ethereum, bsc, base, polygon, arbitrum, optimism, avalanche, fantom, zksync, linea, scroll, solana, 1, 56, ');
    expect(text).toContain('Example: http://127.0.0.1:3000/risk/v1/token-risk?chain=base&address=0x');
    // Paid retries without paying twice (x402 payment-identifier), and the Bazaar declaration in every 402.
    expect(text).toContain('Every 402 declares the x402 payment-identifier extension, as optional.');
    expect(text).toContain('extensions["payment-identifier"].info.id');
    expect(text).toMatch(/Resending the same PAYMENT-SIGNATURE \(same id, same payment\) returns the first answer again without a second settlement/);
    expect(text).toContain('The same id with a different payment, or on another request (another route or query), is refused with 409. A paid call answered 503 whose body says to resend the same payment may have been paid: resend the same PAYMENT-SIGNATURE after Retry-After to get its answer (never charged twice), never a new payment.');
    expect(text).toContain('extensions.bazaar');
  });
});

describe('/.well-known/agent.json', () => {
  it('is an A2A-shaped card: capabilities, security schemes with x402 terms, one skill per endpoint', async () => {
    const card = (await get('/.well-known/agent.json')).json();
    expect(card).toMatchObject({
      name: 'marketgate',
      url: 'http://127.0.0.1:3000',
      // Interface B's version, as its contract names it (interface A is 1.0.0).
      version: '1.0.0-mvp',
      capabilities: { streaming: false, pushNotifications: false },
      supportsAuthenticatedExtendedCard: false,
    });
    expect(card.description).toMatch(/no streaming, no push notifications, no webhooks, no JSON-RPC and no task endpoint/);
    expect(card.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(card.securitySchemes.x402).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      price: '$0.001',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: PAY_TO,
      // Only the origin of a configured URL is ever shown (a key may sit in its path).
      facilitator: fake.url,
    });
    expect(card.securitySchemes.x402.extensions['payment-identifier']).toMatch(/same PAYMENT-SIGNATURE[^]*first answer again[^]*409/);
    expect(card.securitySchemes.x402.extensions.bazaar).toMatch(/extensions\.bazaar/);
    const catalog = t.app.services.catalog.entries;
    expect(card.skills).toHaveLength(catalog.length);
    for (const e of catalog) {
      const skill = card.skills.find((s: { endpoint: string }) => s.endpoint === `GET ${e.url}`);
      expect(skill, e.url).toMatchObject({ access: e.access, price: e.price, name: e.def.summary });
    }
  });
});

describe('/v1/status and /health', () => {
  it('/health is live', async () => {
    const res = await get('/health');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'ok', version: '1.0.0-mvp' });
    expect((await get('/risk/health')).json().data).toMatchObject({ status: 'ok', version: '1.0.0' });
    expect((await get('/risk/v1/status')).json().data.version).toBe('1.0.0');
    expect((await get('/v1/status')).json().data.version).toBe('1.0.0-mvp');
    expect((await get('/openapi.json')).json().info.version).toBe('1.0.0-mvp');
  });

  it('lists every interface-B endpoint with access and price, and upstream health measured from real calls', async () => {
    const before = (await get('/v1/status')).json().data;
    expect(before.endpoints.map((e: { path: string }) => e.path)).toEqual(t.app.services.catalog.of('market').map((e) => e.url));
    const statusEntry = before.endpoints.find((e: { path: string }) => e.path === '/v1/status');
    expect(statusEntry).toMatchObject({ access: 'free', price: null });
    expect(before.access.x402).toMatchObject({ enabled: true, price: '$0.001', payTo: PAY_TO });
    const goplusBefore = before.upstreams.find((u: { provider: string }) => u.provider === 'goplus');
    expect(goplusBefore).toMatchObject({ status: 'unknown', last_success_at: null, last_error: null, base_url: fake.url });

    fake.route('GET /api/v1/token_security/1', { body: recorded('goplus__empty_result.json') });
    await get('/risk/v1/token-risk?chain=1&address=0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c');
    fake.route('GET /api/v1/token_security/56', { status: 500, body: 'down' });
    await get('/risk/v1/token-risk?chain=56&address=0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c');

    const goplus = (await get('/v1/status')).json().data.upstreams.find((u: { provider: string }) => u.provider === 'goplus');
    expect(goplus.status).toBe('failing');
    expect(Date.parse(goplus.last_success_at)).not.toBeNaN();
    expect(goplus.last_error).toMatchObject({ message: 'goplus answered HTTP 500' });
    expect(goplus.recent.calls).toBe(2);
    expect(goplus.recent.failures).toBe(1);
    expect(goplus.recent.latency_ms_p50).toBeGreaterThan(0);
  });
});
