// The in-process rate-limit counts (src/access/rate-limit/window-store.ts): a window per bucket from its first
// request, the time left in it, a fresh count once it ends, a read that does not count, and a bound.
import { describe, expect, it } from 'vitest';
import type { LimitCount } from '../../src/access/rate-limit/store.ts';
import { WindowStore } from '../../src/access/rate-limit/window-store.ts';

function counter(clock: { now: number }) {
  const store = new WindowStore(() => clock.now);
  const take = (method: 'incr' | 'read', key: string): LimitCount => {
    let got: LimitCount | undefined;
    store[method](key, (err, count) => {
      if (err) throw err;
      got = count;
    }, 60_000, 5);
    return got!;
  };
  return { store, incr: (key: string) => take('incr', key), read: (key: string) => take('read', key) };
}

describe('WindowStore', () => {
  it('opens a window at a bucket\'s first request and counts in it until it ends, each bucket apart', () => {
    const clock = { now: 1_000_000 };
    const c = counter(clock);
    expect(c.incr('a')).toEqual({ current: 1, ttl: 60_000 });
    clock.now += 15_000;
    expect(c.incr('a')).toEqual({ current: 2, ttl: 45_000 });
    expect(c.incr('b')).toEqual({ current: 1, ttl: 60_000 });
    expect(c.read('a')).toEqual({ current: 2, ttl: 45_000 });
    expect(c.read('a')).toEqual({ current: 2, ttl: 45_000 });
    clock.now += 45_000;
    expect(c.read('a')).toEqual({ current: 0, ttl: 0 });
    expect(c.incr('a')).toEqual({ current: 1, ttl: 60_000 });
  });

  it('forgets ended windows once per window, and never holds more than 100,000 buckets', () => {
    const clock = { now: 0 };
    const c = counter(clock);
    for (let i = 0; i < 100_050; i++) c.incr(`ip-${i}`);
    expect(c.store.size).toBe(100_000);
    expect(c.read('ip-0')).toEqual({ current: 0, ttl: 0 }); // the oldest went first
    expect(c.read('ip-100049').current).toBe(1);
    clock.now += 60_000;
    c.incr('late');
    expect(c.store.size).toBe(1);
  });
});
