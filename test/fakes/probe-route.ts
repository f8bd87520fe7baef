// A paid interface-B route registered only in tests: answers a fixed document, or fails as an
// upstream would when asked to, so access control can be tested apart from any provider.
import { z } from 'zod';
import { defineRoute } from '../../src/catalog/route.ts';
import { stampNow } from '../../src/upstream/cache.ts';
import { derived, envelope, sourceMeta } from '../../src/upstream/envelope.ts';
import { UpstreamError } from '../../src/lib/errors.ts';

export const probeCalls = { count: 0 };
const PROBE_UPSTREAM_ANSWER = {};

export const probeRoute = defineRoute({
  path: '/v1/test-probe',
  summary: 'Test probe',
  description: 'Test-only paid route.',
  tag: 'Test',
  access: 'paid',
  query: z.object({ fail: z.enum(['0', '1']).default('0').describe('1 = behave like a failed upstream') }),
  data: z.object({ value: z.number() }),
  handler: async (req) => {
    probeCalls.count++;
    if (req.query.fail === '1') throw new UpstreamError('probe-upstream', 'http', 'probe-upstream answered HTTP 500', { status: 500 });
    // Made like a cached provider answer (derived data, a source fresh for a minute), so the fast lane of
    // the cached path (answer-memo.ts) may remember it: it must serve it only where the route itself would.
    const fetched = stampNow();
    return envelope(derived(PROBE_UPSTREAM_ANSWER, 'probe', () => ({ value: 42 })), [sourceMeta('probe-upstream', fetched, true, fetched.ms, fetched.ms + 60_000)]);
  },
});
