// The paywall as an invariant: a paid route's handler runs only for a request that holds a grant for
// that very route — a valid API key, or a payment the facilitator verified for it. Grants are made
// by the access hooks from the *matched* route (Fastify's routeOptions), never from the raw URL, and
// checked right before the handler, whatever path, method (HEAD included) or URL form the request
// used. A request that reaches a paid handler without one is refused (402 or 401) and logged as a
// defect: it fails closed.
import type { FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import { AppError } from '../http/errors.ts';

export interface Grant {
  /** The route the grant is for: the catalog entry of the matched route. */
  entry: CatalogEntry;
  via: 'key' | 'x402';
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the access hooks once a key or a verified payment covers the matched paid route. */
    grant: Grant | null;
  }
}

/** The catalog entry of the route Fastify matched, or undefined (404, or a route outside the catalog). */
export function matchedEntry(req: FastifyRequest): CatalogEntry | undefined {
  return req.routeOptions.config?.catalog;
}

/** Wraps a paid route's handler so it cannot run without a grant for that route. */
export function grantRequired(entry: CatalogEntry, handler: RouteHandlerMethod, refusal: () => AppError): RouteHandlerMethod {
  return function guarded(this: unknown, req: FastifyRequest, reply: FastifyReply) {
    if (req.grant?.entry !== entry) {
      req.log.error({ route: entry.url, method: req.method, url: req.url, grant: req.grant?.entry.url ?? null }, 'paywall: a paid handler was reached without a grant for its route; refused');
      throw refusal();
    }
    return handler.call(this as never, req, reply);
  } as RouteHandlerMethod;
}

/** For onRoute: the paid catalog entry a route being registered serves, if any. */
export function paidEntryOf(route: RouteOptions): CatalogEntry | undefined {
  const entry = (route.config as { catalog?: CatalogEntry } | undefined)?.catalog;
  return entry?.access === 'paid' ? entry : undefined;
}
