// Discovery by agents: what catalogs and agent tools read, checked with their own code.
// - Every paid route's 402 carries the x402 Bazaar extension, valid by @x402/extensions' validators
//   and by x402scan's (@agentcash/discovery), and agreeing with the route's OpenAPI parameters.
// - An invalid declaration stops start-up.
// - @agentcash/discovery (what x402scan reads first) finds every paid operation with its price and
//   every free one as free, from a listening server.
import type { AddressInfo } from 'node:net';
import { discoverOriginSchema, checkEndpointSchema, validatePaymentRequiredDetailed } from '@agentcash/discovery';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec, type DiscoveryExtension } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envelopeSchema } from '../../src/catalog/responses.ts';
import { defineRoute, examplePath, type CatalogEntry } from '../../src/catalog/route.ts';
import { envelope } from '../../src/upstream/envelope.ts';
import { boundedInt } from '../../src/params/query.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const PAY_TO = '0x1111111111111111111111111111111111111111';
const fake = new FakeUpstream();
const x402Env = () => ({ X402_NETWORK: 'base', X402_PAY_TO: PAY_TO, X402_FACILITATOR: `${fake.url}/facilitator` });
let t: TestApp;
let origin: string;
beforeAll(async () => {
  await fake.start();
  fake.route('GET /facilitator/supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
  t = await makeApp(x402Env());
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t.app.close();
  await fake.stop();
});

const paid = () => t.app.services.catalog.entries.filter((e) => e.access === 'paid');

/** The 402 of a route's example call, decoded from its PAYMENT-REQUIRED header. */
async function challenge(e: CatalogEntry) {
  const res = await t.app.inject({ url: examplePath(e) });
  expect(res.statusCode, e.url).toBe(402);
  const header = String(res.headers['payment-required']);
  return { header, required: decodePaymentRequiredHeader(header) };
}

/** Every number in a JSON value; with `keys`, only those under one of these keys. */
function numbersUnder(value: unknown, keys?: string[]): number[] {
  if (Array.isArray(value)) return value.flatMap((v) => numbersUnder(v, keys));
  if (value === null || typeof value !== 'object') return typeof value === 'number' && !keys ? [value] : [];
  return Object.entries(value).flatMap(([k, v]) => numbersUnder(v, keys?.includes(k) ? undefined : keys));
}

/** What a parameter says, in the keywords OpenAPI and JSON Schema share. */
const facts = (s: Record<string, unknown>) => ({ type: s.type, enum: s.enum, default: s.default, minimum: s.minimum, maximum: s.maximum, pattern: s.pattern });

describe('x402 Bazaar extension on every 402', () => {
  it('every paid route declares it, valid by the package validators and by x402scan', async () => {
    expect(paid().length).toBeGreaterThanOrEqual(20);
    for (const e of paid()) {
      const { required } = await challenge(e);
      const bazaar = required.extensions?.bazaar as DiscoveryExtension;
      expect(bazaar, e.url).toBeDefined();
      expect(validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>), e.url).toEqual({ valid: true });
      expect(validateDiscoveryExtension(bazaar), e.url).toEqual({ valid: true });
      // The method comes from the registered bazaarResourceServerExtension; without it the declaration fails validation.
      expect(bazaar.info.input).toMatchObject({ type: 'http', method: 'GET' });
      // x402scan's own check of a 402 (input and output schemas present, accepts well-formed).
      const scan = validatePaymentRequiredDetailed(required);
      expect(scan.issues, e.url).toEqual([]);
      expect(scan.valid).toBe(true);
      expect(required.resource).toMatchObject({ url: `http://127.0.0.1:3000${e.url}`, serviceName: 'marketgate', tags: [e.def.tag] });
    }
  });

  it("its input is the route's query parameters as OpenAPI lists them, with the route's example typed", async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    for (const e of paid()) {
      const { required } = await challenge(e);
      const bazaar = required.extensions!.bazaar as DiscoveryExtension & { schema: { properties: { input: { properties: { queryParams: Record<string, any> } } } } };
      const schema = bazaar.schema.properties.input.properties.queryParams;
      const params: Record<string, any>[] = doc.paths[e.url].get.parameters ?? [];
      expect(Object.keys(schema.properties).sort(), e.url).toEqual(params.map((p) => p.name).sort());
      expect((schema.required ?? []).sort(), e.url).toEqual(params.filter((p) => p.required).map((p) => p.name).sort());
      for (const p of params) {
        expect(facts(schema.properties[p.name]), `${e.url} ${p.name}`).toEqual(facts(p.schema));
        expect(schema.properties[p.name].description, `${e.url} ${p.name}`).toBe(p.description);
      }
      expect(Object.keys((bazaar.info.input as { queryParams: object }).queryParams), e.url).toEqual(Object.keys(e.def.example ?? {}));
    }
    const ohlcv = (await challenge(paid().find((e) => e.url === '/v1/ohlcv')!)).required.extensions!.bazaar as DiscoveryExtension;
    expect(ohlcv.info.input).toEqual({ type: 'http', method: 'GET', queryParams: { symbol: 'ETH', timeframe: '1h', limit: 24 } });
  });

  it("its output example is the route's documented answer shape, and holds no market number", async () => {
    for (const e of paid()) {
      const { required } = await challenge(e);
      const output = (required.extensions!.bazaar as DiscoveryExtension).info.output as { type: string; example: { data: unknown; meta: unknown } };
      expect(output.type).toBe('json');
      // Exactly the documented envelope: parsing drops nothing and rejects nothing.
      expect(envelopeSchema(e.def.data).parse(output.example), e.url).toEqual(output.example);
      expect(output.example.meta).toEqual({ timestamp: 'string', sources: [] });
      // A minimal example: a number only where the schema allows no null, and then 0 or the schema's own bound or constant.
      const schema = (required.extensions!.bazaar as { schema: object }).schema;
      const bounds = new Set([0, ...numbersUnder(schema, ['minimum', 'maximum', 'const', 'enum'])]);
      expect(numbersUnder(output.example).filter((n) => !bounds.has(n)), e.url).toEqual([]);
    }
    const price = (await challenge(paid().find((e) => e.url === '/v1/price')!)).required.extensions!.bazaar as DiscoveryExtension;
    expect(price.info.output).toEqual({
      type: 'json',
      example: { data: { symbol: 'string', venue_symbol: 'string', asset_class: 'crypto', price: null, currency: null, as_of: null }, meta: { timestamp: 'string', sources: [] } },
    });
  });

  it('keeps the PAYMENT-REQUIRED header under 10 KB (clients echo it in PAYMENT-SIGNATURE; Node refuses a head over 16 KB)', async () => {
    const sizes = await Promise.all(paid().map(async (e) => (await challenge(e)).header.length));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10 * 1024);
  });

  it('with signed offers (X402_SIGNING_KEY) under 11 KB: an offer adds about 2 KB (batch settlement, a second option, another 1.5 KB)', async () => {
    const signed = await makeApp({ ...x402Env(), X402_SIGNING_KEY: `0x${'5a'.repeat(32)}` });
    try {
      const sizes = await Promise.all(
        paid().map(async (e) => {
          const res = await signed.app.inject({ url: examplePath(e) });
          const header = String(res.headers['payment-required']);
          expect(decodePaymentRequiredHeader(header).extensions?.['offer-receipt'], e.url).toBeDefined();
          return header.length;
        }),
      );
      expect(Math.max(...sizes)).toBeLessThanOrEqual(11 * 1024);
    } finally {
      await signed.app.close();
    }
  });

  it('a route whose declaration is invalid stops start-up, naming the route', async () => {
    // The example contradicts the schema: "many" is no integer.
    const contradictory = defineRoute({
      path: '/v1/test-contradictory-example',
      summary: 'Test route whose example contradicts its schema',
      description: 'Test only.',
      tag: 'Test',
      access: 'paid',
      query: z.object({ n: boundedInt(1, 10, 5, 'A count') }),
      data: z.object({ n: z.number() }),
      example: { n: 'many' },
      handler: async (req) => envelope({ n: req.query.n }, []),
    });
    await expect(makeApp(x402Env(), undefined, [contradictory])).rejects.toThrow(
      /invalid x402 Bazaar discovery declarations[^]*GET \/v1\/test-contradictory-example[^]*queryParams\/n/,
    );
    // Without x402 there is no 402 to declare anything in: the same routes start.
    const off = await makeApp({}, undefined, [contradictory]);
    await off.app.close();
  });
});

describe('@agentcash/discovery (what x402scan reads first) against a listening server', () => {
  it('finds every paid operation with its price in USD over x402, and every free one as free', async () => {
    const found = await discoverOriginSchema({ target: origin });
    expect(found.found).toBe(true);
    if (!found.found) return;
    const catalog = t.app.services.catalog.entries;
    expect(found.endpoints.map((r) => `${r.method} ${r.path}`).sort()).toEqual(catalog.map((e) => `GET ${e.url}`).sort());
    for (const e of catalog) {
      const route = found.endpoints.find((r) => r.path === e.url)!;
      if (e.access === 'paid') {
        // Paid by x402, or with an API key instead (the operation's security lists the key).
        expect(route, e.url).toMatchObject({ authMode: 'apiKey+paid', price: '0.001 USD', pricingMode: 'fixed', currency: 'USD', protocols: ['x402'] });
      } else if (e.access === 'key') {
        // Key-only (/v1/usage): an API key, never a payment.
        expect(route.authMode, e.url).toBe('apiKey');
        expect(route.price, e.url).toBeUndefined();
      } else {
        expect(route.authMode, e.url).toBe('unprotected');
        expect(route.price, e.url).toBeUndefined();
      }
    }
    expect(found.guidance).toMatch(/PAYMENT-SIGNATURE/);
    expect(found.guidance).toMatch(/payment-identifier/);
  });

  it("probing a paid endpoint with its example finds the x402 terms and the Bazaar schemas in the live 402", async () => {
    const e = paid().find((x) => x.url === '/v1/price')!;
    const checked = await checkEndpointSchema({ url: `${origin}${e.url}`, probe: true, sampleInputBody: e.def.example });
    expect(checked.found).toBe(true);
    if (!checked.found) return;
    const get = checked.advisories.find((a) => a.method === 'GET')!;
    expect(get.paymentOptions).toEqual([expect.objectContaining({ protocol: 'x402', version: 2, network: 'eip155:8453', amount: '1000', payTo: PAY_TO })]);
    expect(Object.keys((get.inputSchema as { properties: object }).properties)).toEqual(['symbol', 'asset_class']);
    expect(get.outputSchema).toMatchObject({ type: 'object', properties: { data: expect.any(Object), meta: expect.any(Object) } });
  });

  it('with x402 off, paid operations carry no payment info: they take an API key only', async () => {
    const off = await makeApp();
    try {
      const doc = (await off.app.inject({ url: '/openapi.json' })).json();
      for (const e of off.app.services.catalog.entries) {
        const op = doc.paths[e.url].get;
        expect(op['x-payment-info'], e.url).toBeUndefined();
        expect(op['x-access']).toBe(e.access);
      }
      expect(doc.info['x-guidance']).toMatch(/not configured on this server/);
    } finally {
      await off.app.close();
    }
  });
});
