// Types for @fastify/rate-limit's Redis store (a plain CommonJS file without declarations), which the
// shared rate-limit store (redis-store.ts) uses. It implements `read` (the count without counting,
// same arguments as `incr`), which the plugin's published types leave out.

declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit';
  import type { Redis } from 'ioredis';
  /** Counts with one Lua script (INCR, PEXPIRE on a window's first hit, else PTTL) under `key` + bucket. */
  interface RedisStore extends FastifyRateLimitStore {
    read: FastifyRateLimitStore['incr'];
    child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): RedisStore;
  }
  const RedisStore: new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string) => RedisStore;
  export default RedisStore;
}
