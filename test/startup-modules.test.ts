// What start-up loads: the heavy libraries only a few routes or options need are loaded when first
// needed, not when the server starts (npm run bench:startup measures what that buys). A new static
// import of one of them from a module the server loads at start-up fails here. And RouteDef.prepare,
// which loads what a route's parameter checks need before its first request is checked.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../src/catalog/route.ts';
import { envelope } from '../src/upstream/envelope.ts';
import { makeApp } from './helpers.ts';

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), 'mg-modules-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The npm packages loaded once the app, built from `env`, is ready. */
async function packagesAtStart(env: Record<string, string>): Promise<string[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/startup/loaded-packages.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: '', PORT: '0', DATA_DIR: dataDir, ...env },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as string[];
}

/**
 * Loaded when needed: viem (on-chain routes), the x402 SDK (x402 on), ioredis (REDIS_URL), prom-client
 * (metrics on), the database drivers and undici (after listening: the database in the background, PGlite
 * on a worker thread; undici in the background or by the first upstream call); Fastify's default
 * compilers (Ajv, fast-json-stringify) never, ours replace them.
 */
const LOADED_WHEN_NEEDED = [
  'viem',
  '@x402/core',
  '@x402/evm',
  '@x402/extensions',
  '@coinbase/x402',
  'ioredis',
  'prom-client',
  'undici',
  'ajv',
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  '@electric-sql/pglite',
  'pg',
];

describe('start-up', () => {
  it('with the defaults loads none of the libraries that only some routes or options need', async () => {
    const loaded = await packagesAtStart({});
    // What every start needs (the recording works).
    expect(loaded).toEqual(expect.arrayContaining(['fastify', 'zod', 'lru-cache']));
    expect(loaded.filter((p) => LOADED_WHEN_NEEDED.includes(p))).toEqual([]);
  }, 60_000);

  it('with x402 on loads the x402 SDK (its route declarations are checked at start-up), still not the rest', async () => {
    const x402On = { X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: 'http://127.0.0.1:9', X402_FACILITATOR_TIMEOUT_MS: '200' };
    const loaded = await packagesAtStart({ ...x402On, X402_BATCH_SETTLEMENT: 'false' });
    expect(loaded).toEqual(expect.arrayContaining(['@x402/core', '@x402/evm', '@x402/extensions']));
    // viem only with batch settlement (its vouchers) or an on-chain route; the CDP SDK only for its facilitator.
    expect(loaded.filter((p) => ['viem', 'ioredis', 'prom-client', '@electric-sql/pglite', 'pg', '@coinbase/x402'].includes(p))).toEqual([]);
    // Batch settlement is installed by default (X402_BATCH_SETTLEMENT=auto: offered once the facilitator lists it): viem with it.
    const batch = await packagesAtStart(x402On);
    expect(batch.filter((p) => ['viem', 'ioredis', 'prom-client', '@electric-sql/pglite', 'pg', '@coinbase/x402'].includes(p))).toEqual(['viem']);
  }, 60_000);
});

describe("a route's prepare (what its parameter checks need, loaded on first use)", () => {
  it('holds the first requests until it has run once, before their parameters are checked; later requests pass at once', async () => {
    let loaded = false;
    let prepared = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A check that can only be made once prepare has run (as with viem's ENS normaliser).
    const endsInEth = (v: string) => {
      if (!loaded) throw new Error('checked before prepare');
      return v.endsWith('.eth');
    };
    const route = defineRoute({
      path: '/v1/test-prepared',
      summary: 'test',
      description: 'test',
      tag: 'test',
      access: 'free',
      query: z.object({ name: z.string().refine(endsInEth, 'must end in .eth') }),
      data: z.object({ name: z.string() }),
      prepare: async () => {
        prepared++;
        await gate;
        loaded = true;
      },
      handler: async (req) => envelope({ name: req.query.name }, []),
    });
    const { app } = await makeApp({}, undefined, [route]);
    try {
      const first = Promise.all([app.inject({ url: '/v1/test-prepared?name=vitalik.eth' }), app.inject({ url: '/v1/test-prepared?name=nope' })]);
      await new Promise((r) => setTimeout(r, 50));
      expect(loaded).toBe(false); // both still waiting
      release();
      const [ok, bad] = await first;
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().data).toEqual({ name: 'vitalik.eth' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toMatch(/name.*must end in \.eth/);
      expect((await app.inject({ url: '/v1/test-prepared?name=again.eth' })).statusCode).toBe(200);
      expect(prepared).toBe(1);
    } finally {
      await app.close();
    }
  });
});
