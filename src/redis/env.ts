// Redis's variables (several instances acting as one service), declared as data like the others and listed
// by config.ts; kept apart so the operator CLIs can read exactly these.
import { env, urlWithScheme } from '../lib/env.ts';

const redisUrl = urlWithScheme(['redis:', 'rediss:'], 'a redis:// or rediss:// URL');

export const REDIS_ENV = {
  REDIS_URL: env.custom(
    redisUrl,
    undefined,
    'Redis (or Valkey) shared by several instances: rate limits, the second cache level, key revocations, payment identifiers. Unset: each process alone (the embedded default). Needs no persistence.',
    { secret: true, example: 'redis://127.0.0.1:6379' },
  ),
  REDIS_TIMEOUT_MS: env.int(
    10,
    10_000,
    250,
    'Longest any Redis command may take, and the connect timeout (ms): past it the instance carries on without Redis (per-instance limits, its own cache) rather than make a request wait.',
  ),
};
