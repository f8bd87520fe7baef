// The limiter's step in an access hook (src/access/rate-limit/rate-limit.ts): an in-process count is decided at once
// (no promise), a store that answers later (Redis) through a promise, and afterLimit turns either into
// the hook's next step — the route, an answer of its own, or the 429 / the store's failure.
import { describe, expect, it } from 'vitest';
import type { FastifyReply } from 'fastify';
import { afterLimit, RateLimiter } from '../../src/access/rate-limit/rate-limit.ts';
import type { LimitStore } from '../../src/access/rate-limit/store.ts';
import { WindowStore } from '../../src/access/rate-limit/window-store.ts';
import { AppError } from '../../src/lib/errors.ts';

function fakeReply() {
  const headers: Record<string, unknown> = {};
  const reply = { header: (k: string, v: unknown) => ((headers[k] = v), reply) };
  return { reply: reply as unknown as FastifyReply, headers };
}

const LIMIT = { scope: 'free', max: 2, per: 'per client' };

describe('RateLimiter.check', () => {
  it('in process: null while within the limit, then the 429 with its headers, at once', () => {
    const refused: string[] = [];
    const limiter = new RateLimiter(new WindowStore(() => 1_000_000), (scope) => refused.push(scope));
    const { reply, headers } = fakeReply();
    expect(limiter.check('free:a', LIMIT, reply)).toBeNull();
    expect(limiter.check('free:a', LIMIT, reply)).toBeNull();
    const third = limiter.check('free:a', LIMIT, reply);
    expect(third).toBeInstanceOf(AppError);
    expect((third as AppError).statusCode).toBe(429);
    expect((third as AppError).message).toBe('rate limit exceeded: 2 requests per minute per client; retry in 60 s');
    expect(headers).toEqual({ 'x-ratelimit-limit': 2, 'x-ratelimit-remaining': 0, 'x-ratelimit-reset': 60, 'retry-after': 60 });
    expect(refused).toEqual(['free']);
    expect(limiter.check('free:b', LIMIT, reply)).toBeNull(); // another bucket counts apart
  });

  it('a store that answers later: a promise of the same verdicts; its failure rejects', async () => {
    const local = new WindowStore(() => 1_000_000);
    let fail = false;
    const later: LimitStore = {
      incr: (key, cb, windowMs, max) => setImmediate(() => (fail ? cb(new Error('redis down')) : local.incr(key, cb, windowMs, max))),
      read: (key, cb, windowMs, max) => local.read(key, cb, windowMs, max),
    };
    const limiter = new RateLimiter(later, () => {});
    const { reply } = fakeReply();
    const first = limiter.check('free:a', LIMIT, reply);
    expect(first).toBeInstanceOf(Promise);
    await expect(first).resolves.toBeNull();
    await limiter.check('free:a', LIMIT, reply);
    await expect(limiter.check('free:a', LIMIT, reply)).resolves.toMatchObject({ statusCode: 429 });
    fail = true;
    await expect(limiter.check('free:a', LIMIT, reply)).rejects.toThrow('redis down');
  });
});

describe('afterLimit', () => {
  const run = async (verdict: Parameters<typeof afterLimit>[0], answers: boolean) => {
    const calls: string[] = [];
    await new Promise<void>((resolve) => {
      const done = (err?: Error) => (calls.push(err ? `done(${err.message})` : 'done()'), resolve());
      afterLimit(verdict, 'req', 'reply', (req, reply) => (calls.push(`admitted(${req}, ${reply})`), answers && resolve(), answers), done);
    });
    return calls;
  };

  it('admitted: the hook answers itself, or lets the route run', async () => {
    expect(await run(null, true)).toEqual(['admitted(req, reply)']);
    expect(await run(null, false)).toEqual(['admitted(req, reply)', 'done()']);
    expect(await run(Promise.resolve(null), false)).toEqual(['admitted(req, reply)', 'done()']);
  });

  it('refused or failed: done(err), and nothing is answered', async () => {
    expect(await run(new AppError(429, 'limited'), true)).toEqual(['done(limited)']);
    expect(await run(Promise.resolve(new AppError(429, 'limited')), true)).toEqual(['done(limited)']);
    expect(await run(Promise.reject(new Error('redis down')), true)).toEqual(['done(redis down)']);
  });
});
