// Builds the real app against fake upstreams, with logs captured in memory.
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import type { RouteDef } from '../src/catalog/route.ts';
import { loadConfig } from '../src/config.ts';

export interface TestApp {
  app: FastifyInstance;
  logs: string[];
}

export async function makeApp(
  env: Record<string, string> = {},
  /** Runs before the app is ready, e.g. to add a route only the test needs. */
  before?: (app: FastifyInstance) => void | Promise<void>,
  extraMarketRoutes?: RouteDef[],
): Promise<TestApp> {
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const config = loadConfig({ LOG_LEVEL: 'info', UPSTREAM_HEADERS_TIMEOUT_MS: '400', UPSTREAM_BODY_TIMEOUT_MS: '400', ...env });
  const app = await buildApp(config, { logStream: logStream as never, extraMarketRoutes });
  await before?.(app);
  await app.ready();
  return { app, logs };
}
