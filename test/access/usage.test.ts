// Per-key usage through the real app on the embedded database: keyed calls on paid routes are counted
// (in memory, flushed in batches, flushed at shutdown), and GET /v1/usage answers the key's own limits
// and use — it needs a key, is never charged and never counts against the key's quota.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyUsage } from '../../src/access/usage-route.ts';
import { startStorage } from '../../src/app.ts';
import { envelopeSchema } from '../../src/catalog/responses.ts';
import { openDatabase } from '../../src/db/open.ts';
import { pgliteDataDir, removeTempDirs, tempDir } from '../db-helpers.ts';
import { probeRoute } from '../fakes/probe-route.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const today = () => new Date().toISOString().slice(0, 10);
let dataDir: string;
let t: TestApp;

beforeAll(async () => {
  dataDir = await pgliteDataDir();
  t = await makeApp(
    // x402 on (a facilitator that is not there): a key-only route still answers 401 without a key, never 402.
    { DATA_DIR: dataDir, API_KEYS: 'key-one,key-two', KEY_RATE_LIMIT: '6', USAGE_FLUSH_MS: '60000', X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: 'http://127.0.0.1:9', X402_FACILITATOR_TIMEOUT_MS: '200' },
    undefined,
    [probeRoute],
  );
  await t.app.services.db.ready();
}, 120_000);
afterAll(async () => {
  await t?.app.close();
  removeTempDirs();
});

const call = (url: string, key?: string) => t.app.inject({ url, headers: key ? { 'x-api-key': key } : {} });

describe('GET /v1/usage', () => {
  it('needs a valid key: 401 without one (not 402, though x402 is on), 401 for an unknown key', async () => {
    const none = await call('/v1/usage');
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ error: "an API key is required (x-api-key header). API keys are free: ask this server's operator for one." });
    expect(none.headers['payment-required']).toBeUndefined();
    const bad = await call('/v1/usage', 'nope');
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toEqual({ error: 'invalid or revoked API key' });
  });

  it("answers the key's real use this minute, today and this month, and is itself never counted", async () => {
    for (let i = 0; i < 3; i++) expect((await call('/v1/test-probe', 'key-one')).statusCode).toBe(200);
    expect((await call('/v1/test-probe?fail=maybe', 'key-one')).statusCode).toBe(400); // accepted, then a bad parameter: counted
    expect((await call('/v1/test-probe', 'key-two')).statusCode).toBe(200);

    const res = await call('/v1/usage', 'key-one');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(envelopeSchema(keyUsage.data).parse(body)).toEqual(body); // exactly the documented shape
    const now = new Date();
    expect(body.data).toEqual({
      key_id: 'env-1',
      limits: { requests_per_minute: 6, requests_per_day: null, requests_per_month: null },
      usage: {
        current_minute: { requests_made: 4, requests_left: 2, resets_at: expect.any(String) },
        current_day: {
          date: today(),
          requests_made: 4,
          requests_left: null,
          resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
          by_route: { '/v1/test-probe': 4 },
        },
        current_month: { month: today().slice(0, 7), requests_made: 4, requests_left: null, resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString() },
      },
    });
    const resetIn = Date.parse(body.data.usage.current_minute.resets_at) - Date.now();
    expect(resetIn).toBeGreaterThan(50_000);
    expect(resetIn).toBeLessThanOrEqual(60_000);

    // Asking again and again costs the key nothing: its paid quota (6/min) still has exactly 2 calls left.
    for (let i = 0; i < 4; i++) expect((await call('/v1/usage', 'key-one')).statusCode).toBe(200);
    expect((await call('/v1/usage', 'key-one')).json().data.usage.current_minute).toMatchObject({ requests_made: 4, requests_left: 2 });
    expect((await call('/v1/test-probe', 'key-one')).statusCode).toBe(200);
    expect((await call('/v1/test-probe', 'key-one')).statusCode).toBe(200);
    expect((await call('/v1/test-probe', 'key-one')).statusCode).toBe(429);
    // /v1/usage has a limiter of its own (the same size, another count): the 7th call this minute is refused.
    expect((await call('/v1/usage', 'key-one')).statusCode).toBe(429);
    // The other key is unaffected.
    expect((await call('/v1/usage', 'key-two')).json().data.usage.current_day).toMatchObject({ requests_made: 1, by_route: { '/v1/test-probe': 1 } });
  });

  it('flushes in batches to the database: one row per key, day and route; /v1/usage has none', async () => {
    const written = await t.app.services.usage.flush();
    expect(written).toBe(2); // key-one and key-two on /v1/test-probe (the 429 was not counted)
    const rows = await t.app.services.db.use((db) => db.query('SELECT key_id, day, route, calls FROM key_usage ORDER BY key_id'));
    expect(rows).toEqual([
      { key_id: 'env-1', day: today(), route: '/v1/test-probe', calls: 6 },
      { key_id: 'env-2', day: today(), route: '/v1/test-probe', calls: 1 },
    ]);
    // The answer is the same once flushed (nothing counted twice).
    expect((await call('/v1/usage', 'key-two')).json().data.usage.current_day.requests_made).toBe(1);
  });

  it('503 with source "database" when the database cannot be reached', async () => {
    const locked = tempDir();
    writeFileSync(join(locked, 'pglite.lock'), `${process.ppid}\n`);
    const down = await makeApp({ DATA_DIR: locked, API_KEYS: 'k' });
    const res = await down.app.inject({ url: '/v1/usage', headers: { 'x-api-key': 'k' } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: `database unavailable: ${join(locked, 'pglite.lock')} is held by process ${process.ppid}`, source: 'database' });
    await down.app.close();
  });

  it('two apps on one database (as instances on one DATABASE_URL): counts flushed by the timer, seen by the other; closing one leaves it open', async () => {
    const shared = await t.app.services.db.ready();
    const other = await makeApp({ API_KEYS: 'key-one,key-two', USAGE_FLUSH_MS: '200' }, undefined, [probeRoute], shared);
    await other.app.services.db.ready();
    expect((await other.app.inject({ url: '/v1/test-probe', headers: { 'x-api-key': 'key-two' } })).statusCode).toBe(200);
    // Written by the other app's own flush timer (USAGE_FLUSH_MS), nobody asking.
    await expect.poll(async () => shared.query("SELECT calls FROM key_usage WHERE key_id = 'env-2'"), { timeout: 5000, interval: 100 }).toEqual([{ calls: 2 }]);
    expect(other.app.services.usage.unflushed).toBe(0);
    expect((await call('/v1/usage', 'key-two')).json().data.usage.current_day.requests_made).toBe(2);
    await other.app.close();
    expect(await shared.query("SELECT calls FROM key_usage WHERE key_id = 'env-2'")).toEqual([{ calls: 2 }]);
  });

  it('what is not flushed yet is written when the server shuts down', async () => {
    expect((await call('/v1/test-probe', 'key-two')).statusCode).toBe(200);
    expect(t.app.services.usage.unflushed).toBe(1);
    await t.app.close();
    const db = await openDatabase({ dataDir, url: undefined, timeoutMs: 5000 });
    try {
      expect(await db.query("SELECT calls FROM key_usage WHERE key_id = 'env-2'")).toEqual([{ calls: 3 }]);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe('GET /v1/usage right after start-up', () => {
  it('answers 200 while the embedded database is still opening (it waits for it, up to DB_OPEN_WAIT_MS), not 503 at DB_TIMEOUT_MS', async () => {
    // As the server starts: listen, then the database opens in the background (PGlite takes about a second, far
    // longer than this DB_TIMEOUT_MS), and the first request comes at once.
    const fresh = await makeApp({ DATA_DIR: await pgliteDataDir(), API_KEYS: 'key-cold', DB_TIMEOUT_MS: '100' });
    try {
      await fresh.app.listen({ host: '127.0.0.1', port: 0 });
      await startStorage(fresh.app);
      expect(fresh.app.services.db.state).toBe('opening');
      const res = await fresh.app.inject({ url: '/v1/usage', headers: { 'x-api-key': 'key-cold' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ key_id: 'env-1', usage: { current_day: { requests_made: 0 } } });
      expect(fresh.app.services.db.state).toBe('open');
    } finally {
      await fresh.app.close();
    }
  }, 120_000);
});
