// The short Redis lock of cross-instance single-flight (src/redis/lock.ts), against a real redis-server:
// one holder at a time, released only by its own token, and gone on its own when its holder dies.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLock } from '../../src/redis/lock.ts';
import { startRedis, type TestRedis } from '../servers/redis.ts';

let redis: TestRedis;
let a: Redis;
let b: Redis;

beforeAll(async () => {
  redis = await startRedis();
  // Two connections, as two instances would have.
  [a, b] = [new Redis(redis.url), new Redis(redis.url)];
}, 30_000);
afterAll(async () => {
  a?.disconnect();
  b?.disconnect();
  await redis?.stop();
});

describe('RedisLock', () => {
  it('one holder at a time: the second is refused until the first releases', async () => {
    const first = new RedisLock(a);
    const second = new RedisLock(b);
    const token = await first.acquire('marketgate:test-lock:1', 10_000);
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await second.acquire('marketgate:test-lock:1', 10_000)).toBeNull();
    expect(await a.get('marketgate:test-lock:1')).toBe(token);
    expect(await first.release('marketgate:test-lock:1', token!)).toBe(true);
    expect(await a.exists('marketgate:test-lock:1')).toBe(0);
    const next = await second.acquire('marketgate:test-lock:1', 10_000);
    expect(next).not.toBeNull();
    expect(next).not.toBe(token);
    await second.release('marketgate:test-lock:1', next!);
  });

  it('another token does not release it', async () => {
    const lock = new RedisLock(a);
    const token = await lock.acquire('marketgate:test-lock:2', 10_000);
    expect(await new RedisLock(b).release('marketgate:test-lock:2', 'not-the-token')).toBe(false);
    expect(await b.get('marketgate:test-lock:2')).toBe(token);
    expect(await lock.release('marketgate:test-lock:2', token!)).toBe(true);
    expect(await lock.release('marketgate:test-lock:2', token!)).toBe(false); // twice: nothing left to release
  });

  it('expires on its own; a holder whose lock expired cannot release the next holder\'s', async () => {
    const dead = new RedisLock(a);
    const stale = await dead.acquire('marketgate:test-lock:3', 150);
    expect(await b.pttl('marketgate:test-lock:3')).toBeGreaterThan(0);
    expect(await b.pttl('marketgate:test-lock:3')).toBeLessThanOrEqual(150);
    await new Promise((r) => setTimeout(r, 300));
    const live = new RedisLock(b);
    const token = await live.acquire('marketgate:test-lock:3', 10_000);
    expect(token).not.toBeNull();
    expect(await dead.release('marketgate:test-lock:3', stale!)).toBe(false);
    expect(await a.get('marketgate:test-lock:3')).toBe(token);
  });
});
