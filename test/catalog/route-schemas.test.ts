// Every route's documented example, called through the app against the recorded world, answers 200
// with a body that is exactly what its schema documents: `data` per the route's data schema, no
// undocumented field (zod drops unknown keys, so the parsed body would differ), meta with sources.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeSchema } from '../../src/catalog/responses.ts';
import { INTERFACE_BASE, type RouteDef } from '../../src/catalog/route.ts';
import { MARKET_ROUTES } from '../../src/market/index.ts';
import { RISK_ROUTES } from '../../src/risk/routes.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { startRecordedWorld, type RecordedWorld } from '../fakes/recorded-world.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

/** Every route the app declares, with its example path. */
const ROUTES: [string, RouteDef][] = [
  ...RISK_ROUTES.map((d): [string, RouteDef] => [INTERFACE_BASE.risk + d.path, d]),
  ...MARKET_ROUTES.map((d): [string, RouteDef] => [INTERFACE_BASE.market + d.path, d]),
].map(([url, d]) => [d.example ? `${url}?${new URLSearchParams(d.example)}` : url, d]);

let world: RecordedWorld;
let t: TestApp;
beforeAll(async () => {
  world = await startRecordedWorld();
  // /v1/usage reads the database: a ready embedded one.
  t = await makeApp({ ...world.env, ...TEST_KEY_ENV, DATA_DIR: await pgliteDataDir() });
  await t.app.services.db.ready();
}, 120_000);
afterAll(async () => {
  await t.app.close();
  await world.stop();
  removeTempDirs();
});

describe('every route answers its example as its schema documents', () => {
  it('covers every route of the catalog', () => {
    expect(t.app.services.catalog.entries.map((e) => e.def).sort()).toEqual(ROUTES.map(([, d]) => d).sort());
  });

  it.each(ROUTES)('%s', async (path, def) => {
    const res = await t.app.inject({ url: path, headers: def.access === 'free' ? {} : TEST_KEY });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const parsed = envelopeSchema(def.data).safeParse(body);
    expect(parsed.error?.issues ?? [], JSON.stringify(parsed.error?.issues?.[0])).toEqual([]);
    // Nothing undocumented: parsing drops unknown keys, so the parsed body equals the body only when there are none.
    expect(parsed.data).toEqual(body);
    expect(Array.isArray(body.meta.sources)).toBe(true);
  });
});
