// Rate-limit counts in Redis, shared by the instances (src/access/rate-limit/redis-store.ts decides when to
// ask): one counter per bucket and window under `marketgate:rate-limit:<namespace>:<bucket>`, the window
// opened by the first count that reaches Redis (PEXPIRE of the window's length), as @fastify/rate-limit's
// Redis store counts. An instance adds what it has counted since it last asked (one request, or a batch of
// them) and learns the total of every instance and the time left in the window, in one script; a batch for
// many buckets goes in one pipeline, one round trip.
import type { Redis } from 'ioredis';

/**
 * ARGV[1] requests to add (0: only read, without opening a window), ARGV[2] the window (ms). Returns the
 * count and the window's time left in ms (-2: no window open). A counter found without a time to live (left
 * by anything) is given one, so no count lives for ever.
 */
const ADD = `
local n = tonumber(ARGV[1])
local c
if n > 0 then c = redis.call('INCRBY', KEYS[1], n) else c = tonumber(redis.call('GET', KEYS[1]) or '0') end
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {c, ttl}`;

/** A bucket's count in Redis after an exchange, and ms left in its window (0: none open). */
export interface SharedCount {
  count: number;
  ttlMs: number;
}

/** One bucket's part of an exchange: its key, what to add, and its window. */
export interface CountToAdd {
  key: string;
  add: number;
  windowMs: number;
}

type WithLimitCommand = Redis & { marketgateLimitAdd(key: string, add: number, windowMs: number): Promise<[number, number]> };

const counted = ([count, ttl]: [number, number]): SharedCount => ({ count: Number(count), ttlMs: Math.max(0, Number(ttl)) });

export class RedisLimitCounts {
  private readonly redis: WithLimitCommand;

  constructor(redis: Redis) {
    // A script known by its SHA: ioredis sends it whole once per connection (and again after NOSCRIPT, as
    // after a Redis restart), then EVALSHA.
    if (!('marketgateLimitAdd' in redis)) redis.defineCommand('marketgateLimitAdd', { numberOfKeys: 1, lua: ADD });
    this.redis = redis as WithLimitCommand;
  }

  /** Adds `add` to `key`'s count (0: reads it); rejects when Redis does. */
  async add(key: string, add: number, windowMs: number): Promise<SharedCount> {
    return counted(await this.redis.marketgateLimitAdd(key, add, windowMs));
  }

  /** The same for many buckets in one pipeline (one round trip): per bucket its count, or the error Redis gave. */
  async addAll(batch: readonly CountToAdd[]): Promise<(SharedCount | Error)[]> {
    const pipeline = this.redis.pipeline() as unknown as WithLimitCommand & { exec(): Promise<[Error | null, unknown][] | null> };
    for (const b of batch) void pipeline.marketgateLimitAdd(b.key, b.add, b.windowMs);
    const replies = await pipeline.exec();
    if (replies === null) throw new Error('the Redis pipeline was not run');
    return replies.map(([err, reply]) => err ?? counted(reply as [number, number]));
  }
}
