// The Redis connection is set up so that Redis never makes a request wait: with Redis stopped, a command
// fails at once (no offline queue), the health turns degraded (logged once), and comes back on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendHealth } from '../../src/lib/backend-health.ts';
import { connectRedis, type RedisConnections } from '../../src/redis/client.ts';
import { memoryLog } from '../db-helpers.ts';
import { startRedis, type TestRedis } from '../servers/redis.ts';

let redis: TestRedis;
let conn: RedisConnections;
const log = memoryLog();
const reports: boolean[] = [];
const health = new BackendHealth('redis', { log, effect: 'testing', onReport: (_n, up) => reports.push(up) });

beforeAll(async () => {
  redis = await startRedis();
  conn = connectRedis(redis.url, 200, health);
  await until(() => !health.degraded && reports.includes(true));
}, 30_000);
afterAll(async () => {
  await conn?.close();
  await redis?.stop();
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the Redis connection', () => {
  it('answers commands while Redis runs', async () => {
    await conn.client.set('marketgate:test', '1');
    expect(await conn.client.get('marketgate:test')).toBe('1');
  });

  it('a stopped Redis: commands fail at once, the health is degraded once, and recovers with Redis', async () => {
    await redis.kill();
    await until(() => health.degraded);
    const started = performance.now();
    await expect(conn.client.get('marketgate:test')).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(100); // no offline queue: nothing waits for a reconnect
    expect(health.report()).toMatchObject({ status: 'degraded' });
    await redis.restart();
    await until(() => !health.degraded);
    expect(await conn.client.set('marketgate:test', '2')).toBe('OK');
    const changes = log.lines.filter((l) => /redis (unavailable|recovered)/.test(l.msg)).map((l) => l.msg.split(':')[0]);
    expect(changes).toEqual(['redis unavailable', 'redis recovered']);
  }, 30_000);

  it('a hung Redis: a command gives up after the command timeout', async () => {
    redis.pause();
    try {
      const started = performance.now();
      await expect(conn.client.get('marketgate:test')).rejects.toThrow(/timed out/i);
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      redis.resume();
    }
  });
});
