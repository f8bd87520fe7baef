// Every provider of the source list, served every way an upstream can fail: the answer is a 502 or 503
// naming the provider, never a 200, and never later than the deadline (plus a small margin).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { SOURCES, urlVariables } from '../../src/sources/index.ts';
import { loadViem } from '../../src/sources/viem.ts';
import { FakeUpstream, type FakeReply } from '../fakes/fake-upstream.ts';
import { SWEEP_CALLS, SWEEP_EXPECTED, sweepEnv, sweepRoute } from '../fakes/sweep.ts';
import { makeApp } from '../helpers.ts';

const DEADLINE_MS = 300;
/** Timer and scheduling slack on a loaded 2-core machine. */
const MARGIN_MS = 400;

const FAULTS: [name: string, reply: FakeReply, expected: RegExp][] = [
  ['never answers', { hang: true }, /did not answer within 300 ms/],
  ['resets the connection', { reset: true }, /closed the connection before answering/],
  ['answers HTTP 500', { status: 500, body: 'oops' }, /answered HTTP 500/],
  ['answers HTTP 503 (retried once)', { status: 503, body: 'busy' }, /answered HTTP 503/],
  ['answers HTTP 429', { status: 429, body: 'slow down', headers: { 'retry-after': '7' } }, /is rate limiting this server \(HTTP 429\); retry in 7 s/],
  ['answers an HTML page', { body: '<!DOCTYPE html><html><body>Access denied</body></html>', headers: { 'content-type': 'text/html' } }, /returned HTML instead of JSON/],
  ['answers truncated JSON', { body: '{"data":[1,2', headers: { 'content-type': 'application/json' } }, /not valid JSON/],
  ['closes in the middle of the body', { body: { filler: 'x'.repeat(2000) }, truncateAt: 100 }, /sent a truncated body/],
  ['drifts from the documented shape', { body: { unexpected: true } }, /unexpected response shape/],
  ['sends a huge body', { hugeBytes: 3 * 1024 * 1024 }, /response exceeded 1048576 bytes/],
  ['trickles its headers', { trickleHeadersMs: 50 }, /did not answer within 300 ms/],
  ['trickles its body', { trickleBodyMs: 50 }, /did not answer within 300 ms/],
];

const fake = new FakeUpstream();
let app: FastifyInstance;

beforeAll(async () => {
  await fake.start();
  const baseUrls = Object.fromEntries(
    SOURCES.flatMap((s) => urlVariables(s).map((name) => [name, fake.url])),
  );
  ({ app } = await makeApp({ ...baseUrls, ...sweepEnv(DEADLINE_MS), UPSTREAM_DEADLINE_MS: String(DEADLINE_MS), UPSTREAM_MAX_BODY_BYTES: String(1024 * 1024), FREE_RATE_LIMIT: '100000' }, undefined, [sweepRoute]));
  // viem loads on first use (start-up leaves it out): loaded here, so its one-time load is not timed as the provider's answer.
  await loadViem();
});
afterAll(async () => {
  await app.close();
  await fake.stop();
});
beforeEach(() => {
  fake.reset();
  app.services.cache.clear();
  app.services.guard.reset();
});

describe('fault sweep', () => {
  it('has a sweep call for every provider of the source list', () => {
    for (const s of SOURCES) expect(SWEEP_CALLS[s.name], `no sweep call for ${s.name}: add one to test/fakes/sweep.ts`).toBeTypeOf('function');
  });

  describe.each(SOURCES.map((s) => s.name))('%s', (provider) => {
    it.each(FAULTS)('%s → 502/503 naming it, within the deadline', async (fault, reply, usual) => {
      const expected = SWEEP_EXPECTED[provider]?.[fault] ?? usual;
      fake.otherwise(reply);
      const started = performance.now();
      const res = await app.inject({ url: `/v1/test-sweep?provider=${encodeURIComponent(provider)}` });
      const elapsed = performance.now() - started;
      expect([502, 503], res.body).toContain(res.statusCode);
      expect(res.json()).toEqual({ error: expect.stringMatching(expected), source: provider });
      expect(elapsed).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      if (res.statusCode === 503) expect(res.headers['retry-after']).toBeDefined();
    });
  });
});
