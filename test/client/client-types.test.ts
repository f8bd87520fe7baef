// The typed client's types: src/client/openapi-types.ts is what openapi-typescript makes of the document the
// server serves (and of the committed openapi/openapi.json), so a route or field changed without
// `npm run client:types` (or `npm run docs`) fails here; the route names and the typed surface.
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { CLIENT_TYPES_PATH, clientTypes } from '../../scripts/client-types.ts';
import { buildApp } from '../../src/app.ts';
import { createClient, routeNames, type RouteEnvelope, type RouteQuery } from '../../src/client/index.ts';
import { loadConfig } from '../../src/config.ts';
import { tempDir } from '../db-helpers.ts';

const committed = readFileSync(CLIENT_TYPES_PATH, 'utf8');

describe('src/client/openapi-types.ts', () => {
  it('is what openapi-typescript makes of the served /openapi.json (npm run client:types)', async () => {
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: tempDir() }));
    await app.ready();
    const served = (await app.inject('/openapi.json')).json();
    await app.close();
    expect(await clientTypes(served)).toBe(committed);
  });

  it('and of the committed openapi/openapi.json', async () => {
    expect(await clientTypes(JSON.parse(readFileSync('openapi/openapi.json', 'utf8')))).toBe(committed);
  });

  it('refuses a route whose method would shadow one of the client', async () => {
    const doc = { openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/v1/call': { get: { responses: { 200: { description: 'ok' } } } } } };
    await expect(clientTypes(doc as never)).rejects.toThrow('client types: /v1/call would be named "call", which the client itself uses');
  });
});

describe('route names', () => {
  it("the path's last segment; on a collision the shorter path keeps it, the others take their first segment, whatever the order", () => {
    const paths = ['/risk/v1/status', '/v1/status', '/risk/health', '/health', '/v1/funding-oi', '/risk/v1/token-risk'];
    const expected = { '/v1/status': 'status', '/risk/v1/status': 'risk_status', '/health': 'health', '/risk/health': 'risk_health', '/v1/funding-oi': 'funding_oi', '/risk/v1/token-risk': 'token_risk' };
    expect(Object.fromEntries(routeNames(paths, 'snake'))).toEqual(expected);
    expect(Object.fromEntries(routeNames([...paths].reverse(), 'snake'))).toEqual(expected);
    expect(routeNames(paths, 'camel').get('/risk/v1/token-risk')).toBe('tokenRisk');
    expect(routeNames(['/a/x', '/b/x'], 'snake')).toEqual(new Map([['/a/x', 'x'], ['/b/x', 'b_x']]));
  });

  it('a collision the prefix cannot resolve is an error, not a silent overwrite', () => {
    expect(() => routeNames(['/x', '/risk/x', '/risk_x'], 'snake')).toThrow(/both map to "risk_x"/);
  });
});

describe('the typed surface', () => {
  it('methods and call() take each route\'s query and give its envelope', () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9' });
    expectTypeOf(client.price).parameter(0).toEqualTypeOf<RouteQuery<'/v1/price'>>();
    expectTypeOf(client.price).returns.resolves.toEqualTypeOf<RouteEnvelope<'/v1/price'>>();
    expectTypeOf<RouteEnvelope<'/v1/price'>['data']['price']>().toEqualTypeOf<number | null>();
    expectTypeOf<RouteQuery<'/v1/ohlcv'>>().toHaveProperty('symbol');
    expectTypeOf(client.call<'/risk/v1/token-risk'>).returns.resolves.toEqualTypeOf<RouteEnvelope<'/risk/v1/token-risk'>>();
    // Compile-time only (tsc checks this file): a required parameter cannot be left out, an optional query can.
    const typed = () => {
      // @ts-expect-error symbol is required
      void client.price({});
      // @ts-expect-error asset_class is crypto or equity
      void client.price({ symbol: 'BTC', asset_class: 'bond' });
      void client.gas();
      void client.sentiment({ limit: 2 });
      void client.call('/v1/anything-else', { x: 1 });
    };
    expect(typeof typed).toBe('function');
  });
});
