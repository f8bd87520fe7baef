// Interface B's own reference routes in the catalog: /health and /v1/status (both free).
import { z } from 'zod';
import type { UpstreamClient } from '../http/upstream.ts';
import { envelope } from '../http/envelope.ts';
import type { ProviderInfo } from '../sources/index.ts';
import { VERSION } from '../version.ts';
import type { AccessSummary } from './access-summary.ts';
import { describeEndpoint } from './params.ts';
import { defineRoute, type RouteCatalog, type RouteDef } from './route.ts';

export interface StatusContext {
  catalog: RouteCatalog;
  upstream: UpstreamClient;
  providers: ProviderInfo[];
  access: AccessSummary;
  startedAt: number;
}

/** `/health` of an interface: 200 with status, service name, version and uptime while the process serves. */
export function healthRoute(service: string, tag: string, startedAt: number): RouteDef {
  return defineRoute({
    path: '/health',
    summary: `Liveness of marketgate ${service}`,
    description: 'Answers 200 while the process serves requests.',
    tag,
    data: z.object({ status: z.literal('ok'), service: z.string(), version: z.string(), uptime_s: z.number() }),
    handler: async () =>
      envelope({ status: 'ok' as const, service: `marketgate ${service}`, version: VERSION, uptime_s: Math.round((Date.now() - startedAt) / 1000) }, []),
  }) as RouteDef;
}

export function statusRoutes(ctx: StatusContext): RouteDef[] {
  const health = healthRoute('market data', 'Reference', ctx.startedAt);

  const status = defineRoute({
    path: '/v1/status',
    summary: 'Catalog and upstream health',
    description:
      'Every market-data endpoint with its parameters, free or paid and price, how to authenticate and pay, ' +
      'and per-upstream health measured by the server (last success, last error, recent latency).',
    tag: 'Reference',
    data: z.object({
      name: z.string(),
      version: z.string(),
      endpoints: z.array(z.object({ path: z.string(), access: z.enum(['free', 'paid']), price: z.string().nullable() }).loose()),
      access: z.object({}).loose(),
      upstreams: z.array(z.object({ provider: z.string(), base_url: z.string(), status: z.string() }).loose()),
    }),
    handler: async () => {
      const health = ctx.upstream.healthReport();
      return envelope(
        {
          name: 'marketgate market data',
          version: VERSION,
          endpoints: ctx.catalog.of('market').map(describeEndpoint),
          access: ctx.access,
          upstreams: ctx.providers.map((p) => ({
            provider: p.name,
            title: p.title,
            base_url: p.baseUrl,
            ...(health[p.name] ?? { status: 'unknown', last_success_at: null, last_error: null, recent: { calls: 0, failures: 0, latency_ms_p50: null, latency_ms_max: null } }),
          })),
        },
        [],
      );
    },
  });

  return [health, status] as RouteDef[];
}
