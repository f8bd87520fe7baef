// `/health` of an interface: the liveness route both interfaces mount first.
import { z } from 'zod';
import { envelope } from '../upstream/envelope.ts';
import { defineRoute, type RouteDef } from './route.ts';

/** `/health` of an interface: 200 with status, service name, version and uptime while the process serves; never rate-limited. */
export function healthRoute(service: string, tag: string, version: string): RouteDef {
  return defineRoute({
    path: '/health',
    summary: `Liveness of marketgate ${service}`,
    description: 'Answers 200 while the process serves requests. Never rate-limited (a liveness probe).',
    tag,
    access: 'free',
    rateLimited: false,
    reference: true,
    data: z.object({ status: z.literal('ok'), service: z.string(), version: z.string(), uptime_s: z.number() }),
    handler: async (_req, ctx) =>
      envelope({ status: 'ok' as const, service: `marketgate ${service}`, version, uptime_s: Math.round((Date.now() - ctx.startedAt) / 1000) }, []),
  });
}
