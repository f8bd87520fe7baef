// A short lock in one Redis (not Redlock across several): `SET key token NX PX ttl` takes it only when
// free, with a random token that says who holds it; it expires on its own if its holder dies; and it is
// released by a compare-and-delete script, so a holder whose lock expired (and was taken by another
// since) cannot delete the other's lock. Enough for what it guards here: one instance loading a cold
// cache key while the others wait; losing it (an expiry, a failover) costs one extra upstream call,
// never a wrong answer. (The `redlock` package implements the multi-primary algorithm this does not need.)
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Deletes the lock only while it still holds this token. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export class RedisLock {
  constructor(private readonly redis: Redis) {}

  /** Takes `key` for `ttlMs` when it is free: the token to release it with; null while another holds it. Rejects when Redis does. */
  async acquire(key: string, ttlMs: number): Promise<string | null> {
    const token = randomBytes(16).toString('base64url');
    const set = await this.redis.set(key, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
    return set === 'OK' ? token : null;
  }

  /** Releases `key` if `token` still holds it; false when it had expired (and perhaps been taken by another). */
  async release(key: string, token: string): Promise<boolean> {
    return (await this.redis.eval(RELEASE, 1, key, token)) === 1;
  }
}
