// npm run docs:examples: the example answer of every route, as the route answers its own documented example
// against the recorded world (every provider a fake on 127.0.0.1 serving recorded payloads: no network), written
// to src/reference/example-answers.json. OpenAPI shows them as each operation's 200 example, so /docs shows real
// answers rather than values made up from the schema. Arrays are cut to their first three items (a shape, not a
// data set). Run it after changing what a route answers; test/reference/example-answers.test.ts checks that every
// route has one and that each still parses as the route's schema.
import { writeFileSync } from 'node:fs';
import { INTERFACE_BASE } from '../src/catalog/route.ts';
import { ENV_SPEC } from '../src/config.ts';
import { MARKET_ROUTES } from '../src/market/index.ts';
import { RISK_ROUTES } from '../src/risk/routes.ts';
import { pgliteDataDir, removeTempDirs } from '../test/db-helpers.ts';
import { startRecordedWorld } from '../test/fakes/recorded-world.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV } from '../test/helpers.ts';

const ITEMS = 3;
const cut = (v: unknown): unknown =>
  Array.isArray(v) ? v.slice(0, ITEMS).map(cut) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cut(x)])) : v;

const world = await startRecordedWorld();
const t = await makeApp({ ...world.env, ...TEST_KEY_ENV, DATA_DIR: await pgliteDataDir(), LOG_LEVEL: 'silent' });
await t.app.services.db.ready();
const answers: Record<string, unknown> = {};
try {
  for (const [iface, routes] of [['risk', RISK_ROUTES], ['market', MARKET_ROUTES]] as const) {
    for (const def of routes) {
      const url = INTERFACE_BASE[iface] + def.path;
      const res = await t.app.inject({ url: def.example ? `${url}?${new URLSearchParams(def.example)}` : url, headers: def.access === 'free' ? {} : TEST_KEY });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      answers[url] = cut(res.json());
    }
  }
} finally {
  await t.app.close();
  await world.stop();
  removeTempDirs();
}
// The fakes' origins (/v1/status names each provider's) read as the providers' own, their settings' defaults.
let text = JSON.stringify(answers, null, 2);
for (const [name, fakeUrl] of Object.entries(world.env)) {
  const real = ENV_SPEC[name]?.default;
  if (typeof real === 'string' && /^https?:/.test(real)) text = text.replaceAll(new URL(fakeUrl).origin, new URL(real).origin);
}
writeFileSync(new URL('../src/reference/example-answers.json', import.meta.url), `${text}\n`, { mode: 0o644 });
console.log(`wrote src/reference/example-answers.json (${Object.keys(answers).length} routes)`);
