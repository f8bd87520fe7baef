// One rate-limit bucket as an instance sees it when the count is shared in Redis (redis-store.ts): the
// total Redis gave at the last exchange, what this instance has counted since, and how fast the bucket's
// count grows across all instances. From these it decides whether a request may be counted here and
// answered at once, or must be counted in Redis first. The rules and the accuracy they give are in
// docs/operating/several-instances.md ("Rate limits").
import type { SharedCount } from '../../redis/limit-counts.ts';
import type { WindowStore } from './window-store.ts';

/** How often the counts made here are sent to Redis, all buckets in one round trip (ms). */
export const EXCHANGE_MS = 25;

/** Requests kept in hand below the limit, whatever the rate: a limit up to this is counted in Redis for every request. */
export const MIN_MARGIN = 10;

/**
 * The margin covers what the other instances may count between two exchanges at this many times the rate
 * measured: a rate that doubles within one exchange is still within it.
 */
export const RATE_SAFETY = 2;

/** A view of the shared count older than this is not acted on: the next request asks Redis (ms). */
export const MAX_VIEW_AGE_MS = 1000;

/** At most this share of the limit is counted here and not yet in Redis, per bucket (so per instance). */
export const UNSENT_SHARE = 1 / 50;

export class SharedBucket {
  /** The count of every instance as Redis gave it at the last exchange. */
  shared = 0;
  /** When the exchange that gave `shared` was sent (epoch ms): the view's age counts from then. */
  syncedAt = 0;
  /** Where the window ends: the exchange's send time + the time Redis said was left (a little early, never late). */
  windowEnd = 0;
  /** Requests counted here (admitted or refused) and not sent yet. */
  pending = 0;
  /** Sent in an exchange not answered yet. */
  sending = 0;
  /** Requests per ms of all instances together, as the last exchanges measured it. */
  rate = 0;
  /** In the exchange's queue. */
  queued = false;
  /**
   * While Redis fails: the count Redis had given for the window this instance's own one started from, and when that
   * window began; undefined while the bucket counts in Redis.
   */
  private seed: { count: number; start: number } | undefined;

  constructor(
    /** The bucket's name in its limiter (`key:<id>`, `free:<ip>`). */
    readonly name: string,
    /** Its counter in Redis. */
    readonly key: string,
    readonly windowMs: number,
    /** Where its counts go when Redis does not take them: the instance's own windows. */
    readonly local: WindowStore,
    /** The buckets that count in `local` now (Redis failed): their counts go to Redis once it answers again. */
    private readonly countingHere?: Set<SharedBucket>,
  ) {}

  /** Whether it counts in the instance's own window (Redis failed) and has counts to carry back. */
  get countsHere(): boolean {
    return this.seed !== undefined;
  }

  /**
   * Counts `n` in the instance's own window (Redis did not take them). The first time, that window starts from the
   * total Redis last gave and ends with Redis's window, so through an outage the instances together admit at most
   * N × the limit in a window, not N × the limit on top of what Redis had counted.
   */
  toLocal(n: number, now = Date.now()): void {
    if (this.seed === undefined) {
      const count = now < this.windowEnd ? this.shared : 0;
      this.seed = { count, start: count > 0 ? this.local.seed(this.name, count, this.windowMs, this.windowEnd) : 0 };
      this.countingHere?.add(this);
    }
    this.local.add(this.name, n, this.windowMs);
  }

  /**
   * Redis answers again: what this instance counted on its own meanwhile (not the seed) is sent with the next
   * exchange, so a Redis that restarted empty learns it (and one that kept its counts, the requests it missed).
   * Returns whether there is anything to send.
   */
  backToShared(): boolean {
    const seed = this.seed;
    this.seed = undefined;
    const { current, start } = this.local.take(this.name, this.windowMs);
    const carried = current - (seed && seed.start !== 0 && start === seed.start ? seed.count : 0);
    if (carried <= 0) return false;
    this.pending += carried;
    // Its own window's end: the counts are not dropped as those of an ended window before they are sent.
    if (start + this.windowMs > this.windowEnd) this.windowEnd = start + this.windowMs;
    return true;
  }

  /** Everything counted in this window that this instance knows of. */
  get known(): number {
    return this.shared + this.sending + this.pending;
  }

  /**
   * Whether one more request may be admitted here without asking Redis: the view is recent, its window
   * open, this instance holds few unsent counts, and after this request the limit is more than the margin
   * away. (A window already used up is refused without asking: see refusedHere.)
   */
  admitsHere(max: number, now: number, rttMs: number): boolean {
    if (now >= this.windowEnd || now - this.syncedAt > MAX_VIEW_AGE_MS) return false;
    if (this.pending + this.sending >= Math.max(1, Math.floor(max * UNSENT_SHARE))) return false;
    // What the other instances may have counted since the view, at up to RATE_SAFETY × the measured rate,
    // until this instance's next exchange has been answered.
    const margin = MIN_MARGIN + Math.ceil(RATE_SAFETY * this.rate * (now - this.syncedAt + EXCHANGE_MS + rttMs));
    return this.known + 1 + margin <= max;
  }

  /** The window is used up (counts only grow within a window): refused here until it ends. */
  refusedHere(max: number, now: number): boolean {
    return now < this.windowEnd && this.known >= max;
  }

  /** What Redis said after an exchange sent at `sentAt` (epoch ms). */
  learn(sentAt: number, now: number, { count, ttlMs }: SharedCount): void {
    if (ttlMs <= 0) return; // no window open (a read of a counter Redis does not hold): nothing to learn
    const end = sentAt + ttlMs;
    const half = this.windowMs / 2;
    // Over the window so far; a window a moment old counts as one exchange long, so its rate is not infinite.
    const average = count / Math.max(EXCHANGE_MS, this.windowMs - ttlMs);
    if (now >= this.windowEnd || end > this.windowEnd + half) {
      // A new window (the last one ended, or Redis lost the counter and opened another).
      this.shared = count;
      this.windowEnd = end;
      this.syncedAt = sentAt;
      this.rate = average;
      return;
    }
    if (end < this.windowEnd - half) return; // an answer about a window already replaced
    const since = sentAt - this.syncedAt;
    // Between two exchanges at least half an interval apart: the rate of late; closer, too few requests to tell.
    const recent = since >= EXCHANGE_MS / 2 && count > this.shared ? (count - this.shared) / since : 0;
    this.rate = since >= EXCHANGE_MS / 2 ? Math.max(average, recent) : Math.max(this.rate, average);
    if (count > this.shared) this.shared = count;
    if (sentAt > this.syncedAt) this.syncedAt = sentAt;
    if (end < this.windowEnd) this.windowEnd = end;
  }
}
