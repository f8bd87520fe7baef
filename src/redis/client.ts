// The Redis connections of an instance (REDIS_URL): one for commands, one for subscriptions (a connection
// in subscriber mode takes no other command). Set up so that Redis can never make a request wait: no
// offline queue (a command while disconnected fails at once instead of queueing until the connect
// timeout; fastify-rate-limit issue #84), one try per command, a short command and connect timeout, and
// reconnection in the background forever. Every part that uses Redis has a fallback for when a command
// fails, and the BackendHealth says when Redis is degraded.
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import type { BackendHealth } from '../lib/backend-health.ts';

export interface RedisConnections {
  /** Commands (GET, SET, EVAL, PUBLISH, …). */
  readonly client: Redis;
  /** Subscribes `handler` to `channel`; resubscribed after every reconnect by ioredis itself. */
  subscribe(channel: string, handler: (message: string) => void): Promise<void>;
  /**
   * Called after every reconnect of the command connection, and of the subscriber connection (pub/sub
   * drops messages while disconnected: whoever relies on them re-reads what they announce).
   */
  onReconnect(handler: () => void): void;
  close(): Promise<void>;
}

/** Every key this server writes starts with this, so one Redis can be shared with other applications. */
export const KEY_PREFIX = 'marketgate:';

export function redisOptions(timeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(timeoutMs, 100),
    commandTimeout: timeoutMs,
    // Reconnect forever, backing off to 2 s: recovery is automatic.
    retryStrategy: (times) => Math.min(100 * times, 2000),
    // A READONLY replica after a failover: reconnect to find the primary.
    reconnectOnError: (err) => /READONLY/.test(err.message),
    lazyConnect: false,
  };
}

/** ioredis, required when an instance connects rather than at every start-up (~0.08 s of CPU; Redis is optional). */
const loadIoredis = () => createRequire(import.meta.url)('ioredis') as typeof import('ioredis');

export function connectRedis(url: string, timeoutMs: number, health: BackendHealth): RedisConnections {
  const { Redis } = loadIoredis();
  const client = new Redis(url, redisOptions(timeoutMs));
  let subscriber: Redis | undefined;
  const handlers = new Map<string, (message: string) => void>();
  const reconnectHandlers: (() => void)[] = [];
  let everReady = false;

  client.on('ready', () => {
    health.ok();
    if (everReady) for (const h of reconnectHandlers) h();
    everReady = true;
  });
  // ioredis emits 'error' on every failed attempt; the health logs the change once.
  client.on('error', (err) => health.failed(err));
  client.on('close', () => {
    if (everReady) health.failed(new Error('connection to Redis closed'));
  });

  return {
    client,
    async subscribe(channel, handler) {
      if (!subscriber) {
        // Only subscriptions go here, never a request's command: it may queue while Redis is away.
        subscriber = new Redis(url, { ...redisOptions(timeoutMs), enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
        subscriber.on('error', () => {}); // the command connection reports the health
        subscriber.on('message', (ch: string, message: string) => handlers.get(ch)?.(message));
        let subscriberEverReady = false;
        subscriber.on('ready', () => {
          if (subscriberEverReady) for (const h of reconnectHandlers) h();
          subscriberEverReady = true;
        });
      }
      handlers.set(channel, handler);
      // Not awaited: while Redis is down the subscription is made when it connects (and again after every reconnect).
      void subscriber.subscribe(channel).catch(() => {});
    },
    onReconnect(handler) {
      reconnectHandlers.push(handler);
    },
    async close() {
      client.disconnect();
      subscriber?.disconnect();
    },
  };
}
