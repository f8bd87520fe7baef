// Several instances as one service, for rate limits: two app instances listening on ports share one real
// Redis, and every limiter (per API key, per client IP on free and paid routes, interface A's /risk)
// counts across both. With Redis stopped or hung, requests still answer promptly, limits stay on but count
// per instance, and /v1/status and the metrics say Redis is degraded; when Redis returns, counting is
// shared again on its own.
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.ts';
import type { Database } from '../../src/db/database.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';
import { startRedis, type TestRedis } from '../servers/redis.ts';

const LIMIT = 5;
const REDIS_TIMEOUT_MS = 250;
/** Any request, whatever Redis is doing: far above REDIS_TIMEOUT_MS, far below a hang. */
const PROMPT_MS = 1000;
const KEYS = ['key-shared', 'key-down', 'key-back', 'key-hung', 'key-unhung', 'key-usage'] as const;
const METRICS_TOKEN = 'metrics-token-for-limits';
const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';
const PRICE = '/v1/price?symbol=BTC';
const SENTIMENT = '/v1/sentiment';
const RISK = `/risk/v1/token-risk?chain=base&address=${EVM}`;

let redis: TestRedis;
let inspect: Redis;
let database: Database;
const fake = new FakeUpstream();
const apps: FastifyInstance[] = [];
const logs: string[][] = [];
const bases: string[] = [];

beforeAll(async () => {
  await fake.start();
  fake.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
  fake.route('GET /fng/', { body: recorded('alternativeme__fng.json') });
  fake.route('GET /api/v1/token_security/8453', { body: recorded('goplus__token_security_evm.json') });
  redis = await startRedis();
  // One ledger database for both (as on one DATABASE_URL), opened once: GET /v1/usage reads it.
  database = await openDatabase({ dataDir: await pgliteDataDir(), url: undefined, timeoutMs: 5000 });
  inspect = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  inspect.on('error', () => {});
  for (let i = 0; i < 2; i++) {
    const made = await makeApp({
      BINANCE_SPOT_BASE_URL: fake.url,
      COINBASE_BASE_URL: fake.url,
      ALTERNATIVE_ME_BASE_URL: fake.url,
      GOPLUS_BASE_URL: fake.url,
      API_KEYS: KEYS.join(','),
      KEY_RATE_LIMIT: String(LIMIT),
      FREE_RATE_LIMIT: String(LIMIT),
      PAID_IP_RATE_LIMIT: String(LIMIT),
      RISK_RATE_LIMIT: String(LIMIT),
      // Each test is its own client (X-Forwarded-For), so the per-IP buckets of one test never meet another's.
      TRUST_PROXY: 'true',
      METRICS_TOKEN,
      REDIS_URL: redis.url,
      REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
    }, undefined, undefined, database);
    await made.app.listen({ host: '127.0.0.1', port: 0 });
    apps.push(made.app);
    logs.push(made.logs);
    bases.push(`http://127.0.0.1:${(made.app.server.address() as AddressInfo).port}`);
  }
  await until(async () => (await redisStatuses()).every((s) => s === 'ok'));
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  inspect?.disconnect();
  await database?.close();
  await fake.stop();
  await redis?.stop();
  removeTempDirs();
});

interface Answer {
  status: number;
  ms: number;
  body: { error?: string; data?: unknown };
  data: unknown;
  retryAfter: string | null;
}

interface UsageData {
  usage: { current_minute: { requests_made: number; requests_left: number } };
}

/** One request to instance `i` as client `ip` (with API key `key` when given), timed. */
async function call(i: number, path: string, ip: string, key?: string): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${bases[i]}${path}`, { headers: { 'x-forwarded-for': ip, ...(key ? { 'x-api-key': key } : {}) } });
  const body = (await res.json()) as Answer['body'];
  return { status: res.status, ms: performance.now() - started, body, data: body.data, retryAfter: res.headers.get('retry-after') };
}

/** `n` requests alternating between the instances, starting with `first`. */
async function alternate(n: number, path: string, ip: string, key?: string, first = 0): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let k = 0; k < n; k++) answers.push(await call((first + k) % 2, path, ip, key));
  return answers;
}

let statusClient = 0;
/** Redis's block in each instance's /v1/status (each look from a new client: the status pages are limited too). */
async function redisStatuses(): Promise<string[]> {
  return Promise.all(
    [0, 1].map(async (i) => {
      const res = await call(i, '/v1/status', `10.250.${i}.${++statusClient % 250}`);
      return (res.body.data as { backends: { redis: { status: string } } }).backends.redis.status;
    }),
  );
}

async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function redisUp(i: number): Promise<number> {
  const text = await (await fetch(`${bases[i]}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(/^marketgate_backend_up\{backend="redis"\} (\d)/m.exec(text)?.[1]);
}

const statuses = (answers: Answer[]) => answers.map((a) => a.status);
const slowest = (answers: Answer[]) => Math.max(...answers.map((a) => a.ms));
const RETRY_IN = /; retry in \d+ s$/;

describe('limits counted across two instances on one Redis', () => {
  it('per API key: five calls spread over both, the sixth refused by either', async () => {
    const calls = await alternate(LIMIT, PRICE, '10.0.1.1', 'key-shared');
    expect(statuses(calls)).toEqual([200, 200, 200, 200, 200]);
    for (const i of [1, 0]) {
      const over = await call(i, PRICE, '10.0.1.2', 'key-shared'); // another IP: the key's count, not the IP's
      expect(over.status).toBe(429);
      expect(over.body.error).toMatch(new RegExp(`^rate limit exceeded: ${LIMIT} requests per minute per API key${RETRY_IN.source}`));
      expect(Number(over.retryAfter)).toBeGreaterThan(0);
      expect(Number(over.retryAfter)).toBeLessThanOrEqual(60);
    }
    // The count lives in Redis, under the server's prefix: 5 allowed + 2 refused (a window Redis said is used
    // up is refused by the instance itself, and that count reaches Redis with its next exchange).
    await until(async () => (await inspect.get('marketgate:rate-limit:market:key:env-1')) === '7');
    // Another key is not affected.
    expect((await call(1, PRICE, '10.0.1.1', 'key-back')).status).toBe(200);
  });

  it("GET /v1/usage reads the shared minute on either instance", async () => {
    expect(statuses(await alternate(3, PRICE, '10.0.5.1', 'key-usage'))).toEqual([200, 200, 200]);
    for (const i of [0, 1]) {
      const usage = await call(i, '/v1/usage', '10.0.5.1', 'key-usage');
      expect(usage.status).toBe(200);
      expect((usage.data as UsageData).usage.current_minute).toMatchObject({ requests_made: 3, requests_left: 2 });
    }
  });

  it('per client IP on a free route', async () => {
    const calls = await alternate(LIMIT, SENTIMENT, '10.0.2.1', undefined, 1);
    expect(statuses(calls)).toEqual([200, 200, 200, 200, 200]);
    for (const i of [0, 1]) {
      const over = await call(i, SENTIMENT, '10.0.2.1');
      expect(over.status).toBe(429);
      expect(over.body.error).toMatch(new RegExp(`^rate limit exceeded: ${LIMIT} requests per minute per client${RETRY_IN.source}`));
      expect(Number(over.retryAfter)).toBeGreaterThan(0);
    }
    expect((await call(0, SENTIMENT, '10.0.2.2')).status).toBe(200);
  });

  it('per client IP on a paid route without a key (before anything else is looked at)', async () => {
    // x402 is off here: a paid call without a key is a 401, but it counts against its IP first.
    expect(statuses(await alternate(LIMIT, PRICE, '10.0.3.1'))).toEqual([401, 401, 401, 401, 401]);
    const over = await call(1, PRICE, '10.0.3.1');
    expect(over.status).toBe(429);
    expect(over.body.error).toMatch(/^rate limit exceeded: 5 requests per minute per client without an API key; retry in \d+ s$/);
  });

  it("interface A's /risk limit per client IP, counted apart from interface B's", async () => {
    expect(statuses(await alternate(LIMIT, RISK, '10.0.4.1'))).toEqual([200, 200, 200, 200, 200]);
    for (const i of [1, 0]) {
      const over = await call(i, RISK, '10.0.4.1');
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ error: expect.stringMatching(/^rate limit exceeded: 5 requests per minute per client; retry in \d+ s$/) });
      expect(Number(over.retryAfter)).toBeGreaterThan(0);
    }
    // The same client's free interface-B calls are another count (both limiters' buckets are named free:<ip>).
    expect((await call(0, SENTIMENT, '10.0.4.1')).status).toBe(200);
  });
});

describe('when Redis fails', () => {
  it('stopped: requests answer promptly, limits count per instance, status degraded (logged once); restarted: shared again', async () => {
    const logged = logs.map((l) => l.length);
    await redis.kill();
    try {
      // Limits stay on, each instance counting alone: five on instance 0, the sixth refused there, yet
      // instance 1 has counted none of them and allows five more.
      const first = [];
      for (let k = 0; k <= LIMIT; k++) first.push(await call(0, PRICE, '10.1.1.8', 'key-down'));
      expect(statuses(first)).toEqual([200, 200, 200, 200, 200, 429]);
      const second = [];
      for (let k = 0; k <= LIMIT; k++) second.push(await call(1, PRICE, '10.1.1.9', 'key-down'));
      expect(statuses(second)).toEqual([200, 200, 200, 200, 200, 429]);
      expect(second[LIMIT]!.body.error).toMatch(/^rate limit exceeded: 5 requests per minute per API key; retry in \d+ s$/);
      expect(Number(second[LIMIT]!.retryAfter)).toBeGreaterThan(0);
      // GET /v1/usage still answers, with this instance's own count of the minute.
      const usage = await call(1, '/v1/usage', '10.1.1.9', 'key-down');
      expect(usage.status).toBe(200);
      expect((usage.data as UsageData).usage.current_minute).toMatchObject({ requests_made: 5, requests_left: 0 });
      const risk = await alternate(2 * LIMIT + 1, RISK, '10.1.2.1');
      expect(statuses(risk).filter((s) => s === 429)).toEqual([429]); // 5 + 5 allowed, then the 11th (instance 0's sixth)
      expect(risk[2 * LIMIT]!.status).toBe(429);
      expect(slowest([...first, ...second, usage, ...risk])).toBeLessThan(PROMPT_MS);

      expect(await redisStatuses()).toEqual(['degraded', 'degraded']);
      expect([await redisUp(0), await redisUp(1)]).toEqual([0, 0]);
      for (const [i, lines] of logs.entries()) {
        expect(lines.slice(logged[i]).filter((l) => l.includes('redis unavailable'))).toHaveLength(1);
      }
    } finally {
      await redis.restart();
    }
    // ioredis reconnects on its own (backing off to 2 s between tries).
    await until(async () => (await redisStatuses()).every((s) => s === 'ok'));
    expect([await redisUp(0), await redisUp(1)]).toEqual([1, 1]);
    // Shared again: alternating, the sixth is refused (counting per instance, all seven would pass). The
    // restarted Redis is empty, so key-back's one call of the first test is forgotten.
    const calls = await alternate(LIMIT + 2, PRICE, '10.1.3.1', 'key-back', 1);
    expect(statuses(calls)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    await until(async () => (await inspect.get('marketgate:rate-limit:market:key:env-3')) === '7');
  }, 60_000);

  it('hung (SIGSTOP): every request answers within REDIS_TIMEOUT_MS and a margin, limits count per instance; resumed: shared again', async () => {
    redis.pause();
    try {
      // Alternating: instance 0's sixth call (the 11th) is the first refused; instance 1 counted five.
      const calls = await alternate(2 * LIMIT + 1, PRICE, '10.2.1.1', 'key-hung');
      expect(statuses(calls)).toEqual([...Array(2 * LIMIT).fill(200), 429]);
      expect(slowest(calls)).toBeLessThan(PROMPT_MS);
      const risk = await alternate(2 * LIMIT + 1, RISK, '10.2.2.1', undefined, 1);
      expect(statuses(risk)).toEqual([...Array(2 * LIMIT).fill(200), 429]);
      expect(slowest(risk)).toBeLessThan(PROMPT_MS);
      expect(await redisStatuses()).toEqual(['degraded', 'degraded']);
    } finally {
      redis.resume();
    }
    // The connection never dropped: a request tries Redis again at most once a second, and its success
    // turns the health ok (the status pages are limited too, so looking at them is such a request).
    await until(async () => (await redisStatuses()).every((s) => s === 'ok'));
    const calls = await alternate(LIMIT + 1, PRICE, '10.2.3.1', 'key-unhung');
    expect(statuses(calls)).toEqual([200, 200, 200, 200, 200, 429]);
  }, 60_000);
});
