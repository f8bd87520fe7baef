// Interface B's /v1/status: its endpoints as the catalog lists them, how to authenticate and pay, and the health
// this instance measures (upstreams, backends, caches). Interface A's is in risk/routes.ts.
import { z } from 'zod';
import { knownThrough, MACRO_EVENT_TYPES } from '../data/macro-calendar.ts';
import { CALENDAR_RUNNING_OUT_DAYS, runningOut } from '../analytics/macro-calendar.ts';
import { envelope } from '../upstream/envelope.ts';
import { INTERFACE_VERSION } from '../lib/version.ts';
import type { CacheHoldings } from '../metrics/metrics.ts';
import { accessSummarySchema } from '../catalog/access-summary.ts';
import { describeEndpoint, endpointSchema } from '../catalog/describe.ts';
import { defineRoute, type RouteContext } from '../catalog/route.ts';

const breakerSchema = z.object({
  state: z.enum(['closed', 'open', 'half_open']),
  consecutive_failures: z.number().int(),
  opens_after: z.number().int().describe('Consecutive failures that open the circuit (BREAKER_FAILURES)'),
  cooldown_s: z.number().describe('Seconds an open circuit fails fast before one probe (BREAKER_COOLDOWN_MS)'),
  opened_at: z.string().nullable(),
  retry_after_s: z.number().nullable(),
});

const upstreamSchema = z.object({
  provider: z.string().describe('The name used in meta.sources and { error, source }'),
  title: z.string(),
  base_url: z.string().describe('Origin of the configured base URL (scheme, host, port); a path, query or login in it is never shown'),
  docs: z.string(),
  notes: z.string().describe('Its limits and quirks'),
  status: z.enum(['ok', 'degraded', 'failing', 'unknown']).describe('From the recent calls of this process: failing = the last call failed or the circuit is open'),
  last_success_at: z.string().nullable(),
  last_error: z.object({ at: z.string(), message: z.string() }).nullable(),
  recent: z.object({
    calls: z.number().int(),
    failures: z.number().int(),
    latency_ms_p50: z.number().nullable(),
    latency_ms_max: z.number().nullable(),
  }),
  breaker: breakerSchema,
});

const backendSchema = z.object({
  status: z.enum(['ok', 'degraded']).describe('degraded: unreachable or failing; the instance serves on its fallbacks (see docs/operating/several-instances.md, "When a backend fails")'),
  since: z.string().nullable().describe('ISO-8601 time of the last change of status; null until first used'),
  reason: z.string().nullable().describe('The last error, while degraded'),
});

const cacheStoreSchema = z.object({
  entries: z.number().int(),
  bytes: z.number().int().describe('Held now: the entries\' estimated heap size'),
  max_bytes: z.number().int().describe('Its share of CACHE_MAX_BYTES'),
  evicted: z.number().int().describe('Entries dropped since start to stay within the bounds (least recently used first)'),
  expired: z.number().int().describe('Entries freed since start when their time was up'),
});

/** What the in-process caches hold: CacheHoldings as /v1/status shows it. */
function cacheReport(h: CacheHoldings) {
  const store = (s: CacheHoldings['upstream']) => ({ entries: s.entries, bytes: s.bytes, max_bytes: s.maxBytes, evicted: s.evicted, expired: s.expired });
  return { upstream: store(h.upstream), answers: store(h.answers) };
}

export const marketStatus = defineRoute({
  path: '/v1/status',
  summary: 'Catalog and upstream health',
  description:
    'Every market-data endpoint with its parameters, free or paid and price, how to authenticate and pay, and per-upstream health ' +
    'measured by the server: last success, last error, recent latency, and the circuit breaker (state, failures, retry-after).',
  tag: 'Reference',
  access: 'free',
  reference: true,
  data: z.object({
    name: z.string(),
    version: z.string(),
    endpoints: z.array(endpointSchema),
    access: accessSummarySchema,
    upstreams: z.array(upstreamSchema),
    calendar: z
      .object({
        file: z.string().describe('MACRO_CALENDAR_FILE, or "built-in" for the file shipped with the release'),
        known_through: z
          .object({ fomc: z.string().nullable(), cpi: z.string().nullable(), jobs: z.string().nullable() })
          .describe("Date of the calendar's last event of each type (YYYY-MM-DD): /v1/macro-calendar knows nothing later"),
        running_out: z
          .array(
            z.object({
              type: z.enum(MACRO_EVENT_TYPES),
              known_through: z.string().nullable(),
              days_left: z.number().int().min(0).max(CALENDAR_RUNNING_OUT_DAYS).describe("Days from today's New York date to known_through; 0: none left"),
            }),
          )
          .describe(`The kinds of event with fewer than ${CALENDAR_RUNNING_OUT_DAYS} days of dates left (empty when none): the operator adds the next dates (MACRO_CALENDAR_FILE)`),
      })
      .describe('The dates behind /v1/macro-calendar'),
    backends: z
      .object({
        database: backendSchema.extend({ kind: z.enum(['pglite', 'postgres']).describe('pglite: embedded in DATA_DIR; postgres: the server at DATABASE_URL') }),
        redis: backendSchema.nullable().describe('null when REDIS_URL is unset (this process alone)'),
      })
      .describe('The backends this instance can serve without for a while: degraded since when, and why'),
    cache: z
      .object({
        upstream: cacheStoreSchema.describe('Upstream answers (three quarters of CACHE_MAX_BYTES)'),
        answers: cacheStoreSchema.describe('Answers served again from them while fresh, the fast lane (a quarter of CACHE_MAX_BYTES)'),
      })
      .describe("What this instance's in-process cache holds, within CACHE_MAX_BYTES"),
    batch_settlement: z
      .object({
        mode: z.enum(['auto', 'true', 'false', 'drain']).describe('X402_BATCH_SETTLEMENT'),
        state: z
          .enum(['offered', 'not_offered', 'draining', 'drained'])
          .describe(
            "offered: in every 402 beside exact; not_offered: the facilitator does not list it (or was not asked yet); draining: no longer offered, open channels still owe vouchers or a settlement; drained: none owes anything (X402_BATCH_SETTLEMENT=false is safe)",
          ),
        owing_channels: z.number().int().min(0).nullable().describe('Channels holding vouchers not yet claimed, at the last claim-and-settle run; null before the first'),
      })
      .nullable()
      .describe('x402 batch settlement on this instance; null when it is not installed (X402_BATCH_SETTLEMENT=false, or x402 off)'),
  }),
  handler: async (_req, ctx) => {
    const health = ctx.guard.report();
    return envelope(
      {
        name: 'marketgate market data',
        version: INTERFACE_VERSION.market,
        endpoints: ctx.catalog.of('market').map(describeEndpoint),
        access: ctx.access,
        upstreams: ctx.providers.map((p) => ({
          provider: p.name,
          title: p.title,
          base_url: p.baseUrl,
          docs: p.docs,
          notes: p.notes,
          ...(health[p.name] ?? unmeasured(ctx.config.upstream)),
        })),
        calendar: {
          file: ctx.config.macroCalendar.file ?? 'built-in',
          known_through: knownThrough(ctx.config.macroCalendar.calendar),
          running_out: runningOut(ctx.config.macroCalendar.calendar, Date.now()),
        },
        backends: {
          database: { kind: ctx.config.db.url ? ('postgres' as const) : ('pglite' as const), ...ctx.backends.database.report() },
          redis: ctx.backends.redis?.report() ?? null,
        },
        cache: cacheReport(ctx.caches()),
        batch_settlement: batchReport(ctx.batchSettlement()),
      },
      [],
    );
  },
});

function batchReport(b: ReturnType<RouteContext['batchSettlement']>) {
  return b && { mode: b.mode, state: b.state, owing_channels: b.owing };
}

/** A provider not called yet: nothing measured, circuit closed. */
function unmeasured(u: { breakerFailures: number; breakerCooldownMs: number }) {
  return {
    status: 'unknown' as const,
    last_success_at: null,
    last_error: null,
    recent: { calls: 0, failures: 0, latency_ms_p50: null, latency_ms_max: null },
    breaker: { state: 'closed' as const, consecutive_failures: 0, opens_after: u.breakerFailures, cooldown_s: u.breakerCooldownMs / 1000, opened_at: null, retry_after_s: null },
  };
}
