// Mounting a list of declared routes on a Fastify context: each is recorded in the catalog, given its schemas
// (the query, validated by the edge's validator; the answers, documented by OpenAPI) and its handler, whose
// GET answers made only of fresh cached provider answers are remembered to be served again (answer-memo.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { NO_QUERY } from '../edge/validator.ts';
import { paymentInfo, responses } from './responses.ts';
import type { CatalogEntry, InterfaceName, RouteContext, RouteDef } from './route.ts';

/**
 * Registers routes on an (encapsulated) Fastify context and records them in the catalog.
 * The context's prefix must be the interface's base, so the catalog knows the served URL.
 */
export function mountRoutes(app: FastifyInstance, ctx: RouteContext, iface: InterfaceName, defs: readonly RouteDef[]): void {
  for (const def of defs) {
    const entry = ctx.catalog.add(iface, def);
    // A route that declares a staleness reads its sources through a cache that serves answers that much past their TTL.
    const routeCtx = entry.maxStaleS ? { ...ctx, sources: ctx.sourcesServingStale(entry.maxStaleS) } : ctx;
    app.withTypeProvider<ZodTypeProvider>().route({
      method: 'GET',
      url: def.path,
      config: { catalog: entry },
      schema: {
        summary: def.summary,
        description: def.description,
        tags: [def.tag],
        // Paid: an API key or an x402 payment; key: an API key; free: nothing.
        security: entry.access === 'paid' ? [{ ApiKeyAuth: [] }, { X402Payment: [] }] : entry.access === 'key' ? [{ ApiKeyAuth: [] }] : [],
        operationId: entry.operationId,
        'x-access': entry.access,
        ...(entry.price ? { 'x-price': entry.price } : {}),
        // Seconds past its cache TTL an answer may be served while it is refreshed (stale-while-revalidate).
        ...(entry.maxStaleS !== null ? { 'x-max-stale-s': entry.maxStaleS } : {}),
        // Only when payments are on: without X402_PAY_TO a paid route takes an API key and nothing else.
        ...(entry.price && ctx.access.x402.enabled ? { 'x-payment-info': paymentInfo(entry.price, ctx.access.x402.networks) } : {}),
        // Declared for every route (NO_QUERY when it takes none): a parameter it does not take is a 400 (validator.ts).
        querystring: def.query ?? NO_QUERY,
        response: responses(def, iface, ctx.access.api_key.how_to_get),
      } as FastifySchema,
      ...(def.prepare ? { onRequest: preparedOnce(def.prepare) } : {}),
      // A GET answer made only of fresh cached provider answers is remembered, to be served again as it is.
      handler: async (req) => {
        const answer = await def.handler(req as never, routeCtx);
        if (req.method === 'GET') ctx.answers.remember(entry.url, req.url, answer);
        return answer;
      },
    });
  }
}

/** An onRequest hook that holds requests until `prepare` has succeeded once, then passes them straight on. */
function preparedOnce(prepare: () => Promise<unknown>) {
  let ready = false;
  let pending: Promise<unknown> | undefined;
  return (_req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    if (ready) return done();
    pending ??= prepare().then(() => (ready = true));
    pending.then(
      () => done(),
      (err: Error) => {
        pending = undefined;
        done(err);
      },
    );
  };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    catalog?: CatalogEntry;
  }
}
