// Builds the real app against fake upstreams, with logs captured in memory.
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { RouteDef } from '../src/catalog/route.ts';
import { loadConfig } from '../src/config.ts';
import type { Database } from '../src/db/database.ts';
import { loadHttpLibrary } from '../src/upstream/http-client.ts';
import { SOURCES, urlVariables } from '../src/sources/index.ts';
import { FakeUpstream } from './fakes/fake-upstream.ts';

/**
 * Every source's base URLs point at a closed local port unless a test gives its own, so no test can
 * reach the internet by accident (an unset one would be the provider's public URL).
 */
export const OFFLINE_BASE_URLS: Record<string, string> = Object.fromEntries(
  SOURCES.flatMap((s) => urlVariables(s).map((name) => [name, 'http://127.0.0.1:9'])),
);

/**
 * The upstream deadline of test apps: a fake that answers later counts as not answering. Generous, because
 * the fake answers from this same process: on a loaded 2-core machine a first call (cold code, a process
 * that gets a third of a core) took over 400 ms, the deadline this once was, and failed as a timeout.
 */
export const TEST_DEADLINE_MS = 2000;

/** How long a fake waits to answer a call that must time out: well past TEST_DEADLINE_MS. */
export const PAST_DEADLINE_MS = TEST_DEADLINE_MS + 3000;

export interface TestApp {
  app: FastifyInstance;
  logs: string[];
}

export async function makeApp(
  env: Record<string, string> = {},
  /** Runs before the app is ready, e.g. to add a route only the test needs. */
  before?: (app: FastifyInstance) => void | Promise<void>,
  extraMarketRoutes?: RouteDef[],
  /** An open database the app uses (and leaves open) instead of opening its own; one per test file is enough. */
  database?: Database,
): Promise<TestApp> {
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  // Each app its own DATA_DIR (created only if the app opens its database), never the repository's ./data,
  // and a key file to import only when the test names one (never the repository's ./data/api-keys.json).
  const dataDir = join(tmpdir(), `mg-data-${randomUUID()}`);
  const config = loadConfig({
    LOG_LEVEL: 'info',
    // A test process's event loop is shared by its apps and the test's own work (a local EVM node, several
    // apps starting): its delay says nothing about one app's load. test/edge/pressure.test.ts sets what it checks.
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
    // Every test client is 127.0.0.1 unless it binds another address: one client to the per-client connection
    // limits, which a test firing hundreds of fresh connections (test/access/paywall.test.ts) would meet.
    // test/edge/connection-admission.test.ts sets what it checks.
    NEW_CONNECTIONS_PER_IP_PER_S: '1000000',
    MAX_PENDING_CONNECTIONS_PER_IP: '10000',
    MAX_CONNECTIONS_PER_IP: '10000',
    UPSTREAM_DEADLINE_MS: String(TEST_DEADLINE_MS),
    // A fallback venue is asked when the primary fails, not while it is merely slow (the hedge): tests of the
    // hedge set their own delay. (Past the deadline, as the default 500 ms was past the 400 ms deadline before.)
    HEDGE_DELAY_MS: String(TEST_DEADLINE_MS + 1000),
    DATA_DIR: dataDir,
    API_KEYS_FILE: join(dataDir, 'api-keys.json'),
    ...OFFLINE_BASE_URLS,
    ...env,
  });
  const app = await buildApp(config, { logStream: logStream as never, extraMarketRoutes, database });
  await before?.(app);
  await app.ready();
  // The server loads its HTTP library in the background once it listens (src/server.ts): loaded here too,
  // so a test's first upstream call is not slower than the others (a hedge's delay would count it).
  await loadHttpLibrary();
  return { app, logs };
}

/** The API key the paid-route tests send, and the env that makes it valid with a per-key limit no test reaches. */
export const TEST_KEY = { 'x-api-key': 'test-key' };
export const TEST_KEY_ENV = { API_KEYS: 'test-key', KEY_RATE_LIMIT: '100000' };

export interface FakeUpstreamAppOptions {
  /** Headers `get` sends when the test names none; none by default. */
  headers?: Record<string, string>;
}

export interface FakeUpstreamsApp<Name extends string> {
  /** The fake upstreams, by name; each is listening once `beforeAll` has run. */
  readonly fakes: Record<Name, FakeUpstream>;
  /** The app of this file; there from `beforeAll` on. */
  readonly app: FastifyInstance;
  readonly logs: string[];
  /** `GET url` through `app.inject`, with the default headers unless the test gives its own. */
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/**
 * One app per test file against fake upstreams, with the vitest hooks registered here: `beforeAll`
 * starts the fakes and builds the app with `env(urls)`; `afterEach` clears the fakes' routes and
 * requests and the app's cache, so every test starts clean; `afterAll` closes the app, then the fakes.
 * Call it at the top level of the file.
 */
export function useFakeUpstreamApps<Name extends string>(
  names: readonly Name[],
  env: (urls: Record<Name, string>) => Record<string, string> | Promise<Record<string, string>>,
  options: FakeUpstreamAppOptions = {},
): FakeUpstreamsApp<Name> {
  const fakes = Object.fromEntries(names.map((name) => [name, new FakeUpstream()])) as Record<Name, FakeUpstream>;
  const all = names.map((name) => fakes[name]);
  let t: TestApp | undefined;
  const started = (): TestApp => {
    if (!t) throw new Error('the test app is built in beforeAll: use it inside a test or a hook');
    return t;
  };

  beforeAll(async () => {
    await Promise.all(all.map((fake) => fake.start()));
    t = await makeApp(await env(Object.fromEntries(names.map((name) => [name, fakes[name].url])) as Record<Name, string>));
  });
  afterAll(async () => {
    await t?.app.close();
    await Promise.all(all.map((fake) => fake.stop()));
  });
  afterEach(() => {
    for (const fake of all) fake.reset();
    t?.app.services.cache.clear();
    t?.app.services.guard.reset();
  });

  return {
    fakes,
    get app() {
      return started().app;
    },
    get logs() {
      return started().logs;
    },
    get: (url, headers = options.headers ?? {}) => started().app.inject({ method: 'GET', url, headers }),
  };
}

export interface FakeUpstreamApp extends Omit<FakeUpstreamsApp<'fake'>, 'fakes'> {
  /** The fake upstream; listening once `beforeAll` has run. */
  readonly fake: FakeUpstream;
}

/** {@link useFakeUpstreamApps} with a single fake upstream, whose URL `env` gets. */
export function useFakeUpstreamApp(env: (fakeUrl: string) => Record<string, string>, options: FakeUpstreamAppOptions = {}): FakeUpstreamApp {
  const t = useFakeUpstreamApps(['fake'], (urls) => env(urls.fake), options);
  return {
    fake: t.fakes.fake,
    get app() {
      return t.app;
    },
    get logs() {
      return t.logs;
    },
    get: t.get,
  };
}
