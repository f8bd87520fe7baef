// Rate limits counted in Redis when instances share one (REDIS_URL), so N instances behind a load balancer
// give a client its limit once, not N times, without a round trip to Redis per request. Each instance counts
// a bucket's requests itself and sends what it counted to Redis every EXCHANGE_MS (25 ms), every bucket touched
// in one pipelined round trip, learning each bucket's total over all instances in return (limit-counts.ts).
// A request is answered at once while the total it knows is far enough from the limit (shared-bucket.ts:
// a margin that covers what the other instances may count until the next exchange, at twice the rate
// measured); near the limit, for a bucket it has not counted yet, or on a view more than a second old, the
// request is counted in Redis before it is answered, exactly as when every request went to Redis. A window
// Redis says is used up is refused here until it ends. Counts live in Redis as before (one counter per
// bucket and window, `marketgate:rate-limit:<namespace>:<bucket>`). What this guarantees:
// docs/operating/several-instances.md ("Rate limits").
//
// When Redis fails (down, or hung past REDIS_TIMEOUT_MS), requests are counted in this instance's own
// WindowStore instead, and so are the counts an exchange could not deliver: limits stay on (never
// switched off), counted per instance until Redis is back, and nothing waits longer than the command
// timeout. A bucket's own window starts from the total Redis last gave (shared-bucket.ts, toLocal), and what
// was counted here meanwhile is sent to Redis once it answers again (carryBack): N instances admit at most N ×
// the limit in a window through an outage, even when Redis comes back empty. The failure goes to the Redis BackendHealth (logged once, metrics, /v1/status). While Redis is
// known degraded, requests count locally without asking it: once its connection is back the health turns
// ok (the client's 'ready') and counting is shared again; while the connection stays up but commands fail
// (a hung server), one request a second tries Redis, so a hung Redis delays one request a second, not every one.
//
// Without REDIS_URL none of this exists: the limiter counts in a WindowStore alone.
import type { Redis } from 'ioredis';
import type { LimitCount, LimitStore } from './store.ts';
import { WindowStore } from './window-store.ts';
import { EXCHANGE_MS, SharedBucket } from './shared-bucket.ts';
import type { BackendHealth } from '../../lib/backend-health.ts';
import { KEY_PREFIX } from '../../redis/client.ts';
import { RedisLimitCounts, type SharedCount } from '../../redis/limit-counts.ts';

/** While Redis is degraded but connected, how often one request may try it again (ms). */
export const RETRY_WHILE_DEGRADED_MS = 1000;

/** Most buckets one limiter keeps a view of; past it the oldest are forgotten (asked of Redis again when next used). */
const MAX_BUCKETS = 100_000;

type CountCallback = (err: Error | null, count?: LimitCount) => void;

/** Decides whether to ask Redis, and hears what each try said about it. */
class RedisGate {
  private nextTryAt = 0;

  constructor(
    private readonly client: Pick<Redis, 'status'>,
    readonly health: BackendHealth,
  ) {}

  /** Whether shouldTry would say yes now, without taking the try. */
  wouldTry(): boolean {
    return !this.health.degraded || (this.client.status === 'ready' && Date.now() >= this.nextTryAt);
  }

  shouldTry(): boolean {
    if (!this.health.degraded) return true;
    // Disconnected: a command would fail at once anyway (no offline queue); the reconnect turns the health ok.
    if (this.client.status !== 'ready') return false;
    const now = Date.now();
    if (now < this.nextTryAt) return false;
    this.nextTryAt = now + RETRY_WHILE_DEGRADED_MS;
    return true;
  }

  succeeded(): void {
    if (this.health.degraded) this.health.ok();
  }

  failed(err: unknown): void {
    this.health.failed(err);
  }
}

/**
 * The exchanges with Redis of every limiter of an instance: counts made here go in batches, every
 * EXCHANGE_MS, one pipeline for all buckets touched; a request near its limit goes at once, alone.
 */
export class LimitExchange {
  private readonly counts: RedisLimitCounts;
  readonly gate: RedisGate;
  private queue: SharedBucket[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending = false;
  private closed = false;
  /** A round trip to Redis, ms, as lately measured (part of the margin). */
  rttMs = 1;

  constructor(redis: { client: Redis; health: BackendHealth }) {
    this.counts = new RedisLimitCounts(redis.client);
    this.gate = new RedisGate(redis.client, redis.health);
  }

  /** `bucket` has counts to send: they go with the next exchange. */
  enqueue(bucket: SharedBucket): void {
    if (!bucket.queued) {
      bucket.queued = true;
      this.queue.push(bucket);
    }
    this.schedule();
  }

  /** Adds `add` to the bucket's count in Redis now (0: reads it), learning the total; rejects when Redis does (the counts are then the caller's). */
  async now(bucket: SharedBucket, add: number): Promise<SharedCount> {
    const sentAt = Date.now();
    bucket.sending += add;
    try {
      const got = await this.counts.add(bucket.key, add, bucket.windowMs);
      this.measured(sentAt);
      bucket.learn(sentAt, Date.now(), got);
      this.gate.succeeded();
      return got;
    } finally {
      bucket.sending -= add;
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.exchange();
    }, EXCHANGE_MS);
    this.timer.unref();
  }

  /** One round trip for every bucket's unsent counts (one exchange at a time: a slow one delays the next). */
  private exchange(): void {
    if (this.sending) return this.schedule();
    const batch = this.queue;
    this.queue = [];
    const now = Date.now();
    const sent: { bucket: SharedBucket; add: number }[] = [];
    for (const bucket of batch) {
      bucket.queued = false;
      // Counts of a window that has ended are not carried into the next one.
      if (now >= bucket.windowEnd) bucket.pending = 0;
      if (bucket.pending === 0) continue;
      sent.push({ bucket, add: bucket.pending });
      bucket.sending += bucket.pending;
      bucket.pending = 0;
    }
    if (sent.length === 0) return;
    const undelivered = (s: { bucket: SharedBucket; add: number }) => s.bucket.toLocal(s.add);
    if (!this.gate.shouldTry()) {
      for (const s of sent) (s.bucket.sending -= s.add), undelivered(s);
      return;
    }
    this.sending = true;
    const sentAt = Date.now();
    this.counts
      .addAll(sent.map((s) => ({ key: s.bucket.key, add: s.add, windowMs: s.bucket.windowMs })))
      .then(
        (replies) => {
          this.measured(sentAt);
          const at = Date.now();
          replies.forEach((reply, i) => {
            const s = sent[i]!;
            s.bucket.sending -= s.add;
            if (reply instanceof Error) {
              this.gate.failed(reply);
              undelivered(s);
            } else {
              s.bucket.learn(sentAt, at, reply);
            }
          });
          if (replies.some((r) => !(r instanceof Error))) this.gate.succeeded();
        },
        (err: unknown) => {
          this.gate.failed(err);
          for (const s of sent) (s.bucket.sending -= s.add), undelivered(s);
        },
      )
      .finally(() => {
        this.sending = false;
        if (this.queue.length > 0) this.schedule();
      });
  }

  private measured(sentAt: number): void {
    this.rttMs = 0.8 * this.rttMs + 0.2 * (Date.now() - sentAt);
  }
}

/** One limiter's buckets, counted as above under `marketgate:rate-limit:<namespace>:`. */
class SharedLimitStore implements LimitStore {
  private readonly buckets = new Map<string, SharedBucket>();
  private readonly local = new WindowStore();
  /** Buckets counted in `local` since Redis failed: their counts are carried back to Redis once it answers. */
  private readonly countingHere = new Set<SharedBucket>();
  private readonly prefix: string;
  private nextSweep = 0;
  /** What incrNow answers (read before the next call, as WindowStore's). */
  private readonly last: LimitCount = { current: 0, ttl: 0 };

  constructor(
    private readonly exchange: LimitExchange,
    namespace: string,
  ) {
    this.prefix = `${KEY_PREFIX}rate-limit:${namespace}:`;
  }

  /** Counted and answered here (see the top of this file), or undefined: ask incr, which counts in Redis first. */
  incrNow(name: string, windowMs: number, max: number): Readonly<LimitCount> | undefined {
    const gate = this.exchange.gate;
    if (gate.health.degraded) return gate.wouldTry() ? undefined : this.counting(name, windowMs).incrNow(name, windowMs);
    if (this.countingHere.size > 0) this.carryBack();
    const bucket = this.buckets.get(name);
    if (bucket === undefined) return undefined;
    const now = Date.now();
    if (!bucket.refusedHere(max, now) && !bucket.admitsHere(max, now, this.exchange.rttMs)) return undefined;
    bucket.pending++;
    if (!bucket.queued) this.exchange.enqueue(bucket);
    this.last.current = bucket.known;
    this.last.ttl = bucket.windowEnd - now;
    return this.last;
  }

  /** Counts one more in Redis (with what this instance has counted and not sent), and answers with the total. */
  incr(name: string, cb: CountCallback, windowMs: number, _max: number): void {
    if (!this.exchange.gate.shouldTry()) return this.counting(name, windowMs).incr(name, cb, windowMs);
    if (this.countingHere.size > 0) this.carryBack();
    const bucket = this.bucketOf(name, windowMs);
    if (Date.now() >= bucket.windowEnd) bucket.pending = 0; // counts of an ended window
    const add = bucket.pending + 1;
    bucket.pending = 0;
    this.exchange.now(bucket, add).then(
      (got) => cb(null, { current: got.count, ttl: got.ttlMs }),
      (err: unknown) => {
        this.exchange.gate.failed(err);
        bucket.toLocal(add - 1);
        this.local.incr(name, cb, windowMs);
      },
    );
  }

  /** The count without counting this request: GET /v1/usage's current minute (this instance's unsent counts sent with it). */
  read(name: string, cb: CountCallback, windowMs: number, _max: number): void {
    if (!this.exchange.gate.shouldTry()) return this.counting(name, windowMs).read(name, cb, windowMs);
    if (this.countingHere.size > 0) this.carryBack();
    const bucket = this.bucketOf(name, windowMs);
    if (Date.now() >= bucket.windowEnd) bucket.pending = 0;
    const add = bucket.pending;
    bucket.pending = 0;
    this.exchange.now(bucket, add).then(
      (got) => cb(null, { current: got.count, ttl: got.ttlMs }),
      (err: unknown) => {
        this.exchange.gate.failed(err);
        bucket.toLocal(add);
        this.local.read(name, cb, windowMs);
      },
    );
  }

  private bucketOf(name: string, windowMs: number): SharedBucket {
    let bucket = this.buckets.get(name);
    if (bucket === undefined) {
      const now = Date.now();
      if (now >= this.nextSweep) this.sweep(now, windowMs);
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value as string);
      this.buckets.set(name, (bucket = new SharedBucket(name, this.prefix + name, windowMs, this.local, this.countingHere)));
    }
    return bucket;
  }

  /** The instance's own windows, for a request counted while Redis fails (its bucket's window seeded from Redis's last count). */
  private counting(name: string, windowMs: number): WindowStore {
    this.bucketOf(name, windowMs).toLocal(0);
    return this.local;
  }

  /** Redis answers again: the counts made here meanwhile go to it with the next exchange. */
  private carryBack(): void {
    for (const bucket of this.countingHere) if (bucket.backToShared() && !bucket.queued) this.exchange.enqueue(bucket);
    this.countingHere.clear();
  }

  /** Forgets the buckets whose window has ended and that have nothing to send, once per window. */
  private sweep(now: number, windowMs: number): void {
    this.nextSweep = now + windowMs;
    for (const [name, b] of this.buckets) if (now >= b.windowEnd && b.pending === 0 && b.sending === 0 && !b.queued && !b.countsHere) this.buckets.delete(name);
  }
}

/**
 * The store of one limiter, counting in Redis under `marketgate:rate-limit:<namespace>:` (each limiter its
 * own namespace, as each has its own count without Redis) through the instance's exchange, falling back
 * to per-instance counting as described above.
 */
export function sharedLimitStore(exchange: LimitExchange, namespace: string): LimitStore {
  return new SharedLimitStore(exchange, namespace);
}
