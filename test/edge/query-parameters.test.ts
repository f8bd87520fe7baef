// Unknown and repeated query parameters are refused on every route of both interfaces (src/edge/validator.ts):
// a 400 naming the parameter and listing the ones the route accepts, before any handler or upstream runs, and
// nothing is charged. A paid call without credentials still gets its 402 challenge first (access-control.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../../src/catalog/route.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

const accepted = (e: CatalogEntry) => Object.keys(e.def.query?.shape ?? {});
const withParam = (e: CatalogEntry, extra: string) => `${e.url}?${new URLSearchParams(e.def.example ?? {})}${e.def.example ? '&' : ''}${extra}`;

describe('x402 off, with an API key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp({ ...TEST_KEY_ENV, FREE_RATE_LIMIT: '100000', RISK_RATE_LIMIT: '100000' });
  });
  afterAll(() => t.app.close());

  it('every route, both interfaces: an unknown parameter is a 400 naming it and listing the accepted ones', async () => {
    const entries = t.app.services.catalog.entries;
    expect(entries.length).toBeGreaterThan(25);
    for (const e of entries) {
      const res = await t.app.inject({ url: withParam(e, 'bogus=1'), headers: TEST_KEY });
      expect(res.statusCode, e.url).toBe(400);
      const names = accepted(e);
      expect(res.json(), e.url).toEqual({
        error: names.length
          ? `unknown query parameter 'bogus': this route accepts ${names.join(', ')}`
          : "unknown query parameter 'bogus': this route takes no query parameters",
      });
    }
  });

  it('every route with parameters: one given twice is a 400 saying so', async () => {
    for (const e of t.app.services.catalog.entries.filter((e) => e.def.example)) {
      const [name, value] = Object.entries(e.def.example!)[0]!;
      const res = await t.app.inject({ url: withParam(e, `${name}=${encodeURIComponent(value)}`), headers: TEST_KEY });
      expect(res.statusCode, e.url).toBe(400);
      expect(res.json(), e.url).toEqual({ error: `query parameter '${name}' was given 2 times; give it once` });
    }
  });

  it('days=10&days=20, the earnings calendar\'s from=…, a misspelt timeframe: each named, with what was meant when it is close', async () => {
    const twice = await t.app.inject({ url: '/v1/macro-calendar?days=10&days=20' });
    expect(twice.json()).toEqual({ error: "query parameter 'days' was given 2 times; give it once" });
    const from = await t.app.inject({ url: '/v1/earnings-calendar?from=2026-13-01', headers: TEST_KEY });
    expect(from.statusCode).toBe(400);
    expect(from.json()).toEqual({ error: "unknown query parameter 'from': this route accepts date, days" });
    const typo = await t.app.inject({ url: '/v1/ohlcv?symbol=BTC&timefrane=1h&Limit=5', headers: TEST_KEY });
    expect(typo.json()).toEqual({
      error: "unknown query parameters 'timefrane' (did you mean 'timeframe'?), 'Limit' (did you mean 'limit'?): this route accepts symbol, timeframe, limit, asset_class",
    });
    const both = await t.app.inject({ url: '/v1/macro-calendar?days=1&days=2&x=1' });
    expect(both.json()).toEqual({ error: "unknown query parameter 'x': this route accepts days, type; query parameter 'days' was given 2 times; give it once" });
  });

  it('the indexes (/ and /risk) take no parameters either; a request without any is answered as before', async () => {
    for (const url of ['/?x=1', '/risk?x=1', '/risk/?x=1']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ error: "unknown query parameter 'x': this route takes no query parameters" });
    }
    expect((await t.app.inject({ url: '/v1/status' })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/v1/macro-calendar?days=10' })).statusCode).toBe(200);
  });

  it('no key on a paid route: the 401 comes first (access is checked before parameters)', async () => {
    const res = await t.app.inject({ url: '/v1/price?symbol=BTC&bogus=1' });
    expect(res.statusCode).toBe(401);
  });
});

describe('x402 on', () => {
  const facilitator = new FakeUpstream();
  let t: TestApp;
  beforeAll(async () => {
    await facilitator.start();
    facilitator.route('GET /supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
    t = await makeApp({ X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: facilitator.url });
  });
  afterAll(async () => {
    await t.app.close();
    await facilitator.stop();
  });

  it('no credentials and an unknown parameter: the 402 challenge, as for any parameter problem (it takes nothing)', async () => {
    const res = await t.app.inject({ url: '/v1/price?symbol=BTC&bogus=1' });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ error: 'payment required', price: '$0.001' });
  });

  it('with a payment: a 400 before the payment is looked at; the facilitator is never asked, nothing is charged', async () => {
    const res = await t.app.inject({ url: '/v1/price?symbol=BTC&bogus=1', headers: { 'payment-signature': 'not even decodable' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^unknown query parameter 'bogus'/);
    expect(res.headers['payment-response']).toBeUndefined();
    expect(facilitator.calls('/verify')).toHaveLength(0);
    expect(facilitator.calls('/settle')).toHaveLength(0);
  });
});
