// Key changes announced on Redis (REDIS_URL), so every instance applies a revocation at once instead of
// at its next periodic check (API_KEYS_RELOAD_MS). Whoever wrote the change to the database announces
// it after the commit: the keys CLI when it wrote directly (DATABASE_URL), else the server whose admin
// socket the CLI used. A message only ever makes an instance stricter or sends it to the database:
// `revoked` names the hash to refuse at once (revocations are never undone), `created`/`imported` make
// it reload. Pub/sub loses what is sent while an instance is disconnected: instances reload on every
// reconnect, and the periodic check remains underneath.
import { z } from 'zod';
import { KEY_PREFIX, redisOptions } from '../../redis/client.ts';

export const KEY_CHANGES_CHANNEL = `${KEY_PREFIX}api-keys`;

const changeSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('revoked'), id: z.string(), hash: z.string().regex(/^[0-9a-f]{64}$/), version: z.number() }),
  z.object({ op: z.literal('created'), id: z.string(), version: z.number() }),
  z.object({ op: z.literal('imported'), version: z.number() }),
]);

export type KeyChange = z.infer<typeof changeSchema>;

/** The change a message announces, or undefined for anything else (ignored). */
export function parseKeyChange(message: string): KeyChange | undefined {
  try {
    const parsed = changeSchema.safeParse(JSON.parse(message));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Publishes one change from a short-lived process (the keys CLI): connects, publishes, disconnects, all
 * within `timeoutMs`. Resolves with how many instances received it; rejects when Redis cannot be reached.
 */
export async function announceOnce(url: string, timeoutMs: number, change: KeyChange): Promise<number> {
  // Loaded here: a server without REDIS_URL never loads ioredis.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { ...redisOptions(timeoutMs), lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => {}); // the rejection below says it once
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return await Promise.race([client.connect().then(() => client.publish(KEY_CHANGES_CHANNEL, JSON.stringify(change))), deadline]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
