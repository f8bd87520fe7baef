// One shared rate-limit bucket's rules (src/access/rate-limit/shared-bucket.ts): when an instance may admit a
// request without asking Redis, when it refuses one itself, and what it learns from an exchange.
import { describe, expect, it } from 'vitest';
import { EXCHANGE_MS, MAX_VIEW_AGE_MS, MIN_MARGIN, SharedBucket } from '../../src/access/rate-limit/shared-bucket.ts';
import { WindowStore } from '../../src/access/rate-limit/window-store.ts';

const WINDOW = 60_000;
const T = 10_000_000;
const bucket = () => new SharedBucket('free:1.2.3.4', 'marketgate:rate-limit:market:free:1.2.3.4', WINDOW, new WindowStore());

describe('SharedBucket', () => {
  it('admits nothing here before Redis has told it of the window (the first request goes to Redis)', () => {
    expect(bucket().admitsHere(1000, T, 1)).toBe(false);
  });

  it('far from the limit, admits here; within the margin of it, asks Redis; once used up, refuses here', () => {
    const b = bucket();
    // 100 counted over the first 10 s of the window: 0.01 per ms across the instances.
    b.learn(T, T + 1, { count: 100, ttlMs: WINDOW - 10_000 });
    expect(b.rate).toBeCloseTo(0.01);
    expect(b.admitsHere(1000, T + 5, 1)).toBe(true);
    // The margin: MIN_MARGIN + 2 × rate × (view age + one exchange + a round trip) = 10 + ceil(2 × 0.01 × 31) = 11.
    const max = 100 + 1 + MIN_MARGIN + 1;
    expect(b.admitsHere(max, T + 5, 1)).toBe(true);
    expect(b.admitsHere(max - 1, T + 5, 1)).toBe(false);
    // What this instance counted and has not sent counts too.
    b.pending = 1;
    expect(b.admitsHere(max, T + 5, 1)).toBe(false);
    b.pending = 0;
    expect(b.refusedHere(100, T + 5)).toBe(true);
    expect(b.refusedHere(101, T + 5)).toBe(false);
  });

  it('asks Redis again when its view is old, when it holds many unsent counts, or once the window has ended', () => {
    const b = bucket();
    b.learn(T, T + 1, { count: 0, ttlMs: WINDOW });
    expect(b.admitsHere(1000, T + MAX_VIEW_AGE_MS, 1)).toBe(true);
    expect(b.admitsHere(1000, T + MAX_VIEW_AGE_MS + 1, 1)).toBe(false);
    b.pending = 1000 / 50; // UNSENT_SHARE of the limit
    expect(b.admitsHere(1000, T + 1, 1)).toBe(false);
    b.pending = 0;
    expect(b.admitsHere(1000, T + WINDOW, 1)).toBe(false);
    expect(b.refusedHere(0, T + WINDOW)).toBe(false); // a used-up window refuses only until it ends
  });

  it('learns the latest count of a window and the rate between exchanges; a new window replaces the old; a late answer about an old one is ignored', () => {
    const b = bucket();
    b.learn(T, T + 1, { count: 50, ttlMs: WINDOW - 50_000 });
    // 25 ms later 30 more across the instances: 1.2 per ms, more than the window's average.
    b.learn(T + EXCHANGE_MS, T + EXCHANGE_MS + 1, { count: 80, ttlMs: WINDOW - 50_025 });
    expect(b.shared).toBe(80);
    expect(b.rate).toBeCloseTo(30 / EXCHANGE_MS);
    expect(b.syncedAt).toBe(T + EXCHANGE_MS);
    // An answer sent earlier, arriving later, does not lower what is known.
    b.learn(T + 5, T + 40, { count: 60, ttlMs: WINDOW - 50_005 });
    expect(b.shared).toBe(80);
    // The window ends; the next one starts from Redis's count.
    const next = T + 10_001;
    b.learn(next, next + 1, { count: 3, ttlMs: WINDOW - 10 });
    expect(b.shared).toBe(3);
    expect(b.windowEnd).toBe(next + WINDOW - 10);
    // An answer about the window before is ignored.
    b.learn(T + 9_000, next + 2, { count: 999, ttlMs: 1_000 });
    expect(b.shared).toBe(3);
  });
});
