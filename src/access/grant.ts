// The paywall as an invariant: a paid route's answer is delivered only to a request that holds a grant
// for that very route — a valid API key, or a payment the facilitator verified for it. Grants are made
// by the access hooks from the *matched* route (Fastify's routeOptions), never from the raw URL, and
// checked right before the handler, whatever path, method (HEAD included) or URL form the request
// used. A request that reaches a paid handler without one is refused (402 or 401) and logged as a
// defect: it fails closed.
//
// One exception to "the handler runs only with a grant", and it is kept here, beside the check: a
// *prefetch*. While the facilitator verifies a payment (150 ms or more), the x402 gate may start the
// matched route's work for that request (prefetch below), so a paid call costs one verify or one
// handler, whichever is longer, instead of both. The prefetched answer is held here, out of reach of
// everything else, and never sent by itself: the guarded handler hands it over only once the grant
// for that route exists; without one it is dropped and the request is refused as always. The work is
// given no reply to write to, so it cannot send anything either.
import type { FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import { AppError } from '../lib/errors.ts';

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

declare module 'fastify' {
  interface FastifyRequest {
    /** The matched route's catalog entry once looked up (matchedEntry); null for a route outside the catalog. */
    catalogEntry: CatalogEntry | null | undefined;
  }
}

/**
 * The catalog entry of the route Fastify matched, or undefined (404, or a route outside the catalog).
 * Looked up once per request: Fastify's routeOptions getter builds a new object on every read.
 */
export function matchedEntry(req: FastifyRequest): CatalogEntry | undefined {
  let entry = req.catalogEntry;
  if (entry === undefined) entry = req.catalogEntry = req.routeOptions.config?.catalog ?? null;
  return entry ?? undefined;
}

/** The unguarded handler of each paid route, for prefetch (the guarded one would refuse: no grant yet). */
const handlers = new WeakMap<CatalogEntry, RouteHandlerMethod>();

/** Prefetched answers, by request: readable only here, delivered only by the guarded handler. */
const held = new WeakMap<FastifyRequest, { entry: CatalogEntry; answer: Promise<unknown> }>();

/** Thrown by a prefetched handler that reaches for its reply: it then runs again, normally, once granted. */
class NoReplyInPrefetch extends Error {}

/** What a prefetched handler is given for a reply: nothing it could send with. */
const NO_REPLY = new Proxy({} as FastifyReply, {
  get() {
    throw new NoReplyInPrefetch('a prefetched handler has no reply');
  },
});

/** Wraps a paid route's handler so it cannot run, nor deliver a prefetched answer, without a grant for that route. */
export function grantRequired(entry: CatalogEntry, handler: RouteHandlerMethod, refusal: () => AppError): RouteHandlerMethod {
  if (!handlers.has(entry)) handlers.set(entry, handler);
  return function guarded(this: unknown, req: FastifyRequest, reply: FastifyReply) {
    const prefetched = req.grant?.via === 'key' ? undefined : takePrefetched(req);
    if (req.grant?.entry !== entry) {
      req.log.error({ route: entry.url, method: req.method, url: req.url, grant: req.grant?.entry.url ?? null }, 'paywall: a paid handler was reached without a grant for its route; refused');
      throw refusal();
    }
    if (prefetched?.entry === entry) {
      return prefetched.answer.catch((err: unknown) => {
        if (err instanceof NoReplyInPrefetch) return handler.call(this as never, req, reply);
        throw err;
      });
    }
    return handler.call(this as never, req, reply);
  } as RouteHandlerMethod;
}

/**
 * Starts the work of `entry` (the route this request matched) for a request whose payment is being
 * verified, and holds its answer for the guarded handler. Nothing is sent: without a grant for `entry`
 * the answer is never delivered. A failure is held like an answer (the handler's failure, once
 * granted: the payment is then cancelled as for any failed handler). Returns whether it started.
 */
export function prefetch(req: FastifyRequest, entry: CatalogEntry): boolean {
  const handler = handlers.get(entry);
  if (!handler || entry.access !== 'paid' || matchedEntry(req) !== entry || req.grant || held.has(req)) return false;
  let answer: Promise<unknown>;
  try {
    answer = Promise.resolve(handler.call(req.server as never, req, NO_REPLY));
  } catch (err) {
    answer = Promise.reject(err);
  }
  answer.catch(() => {}); // held: it fails the request only if it is ever delivered
  held.set(req, { entry, answer });
  return true;
}

/** Drops a held prefetch (the payment was refused, or never verified): its answer goes nowhere. */
export function discardPrefetch(req: FastifyRequest): void {
  held.delete(req);
}

function takePrefetched(req: FastifyRequest) {
  const prefetched = held.get(req);
  if (prefetched) held.delete(req);
  return prefetched;
}

/** For onRoute: the catalog entry a route being registered serves, if any. */
export function catalogEntryOf(route: RouteOptions): CatalogEntry | undefined {
  return (route.config as { catalog?: CatalogEntry } | undefined)?.catalog;
}

/** For onRoute: the paid catalog entry a route being registered serves, if any. */
export function paidEntryOf(route: RouteOptions): CatalogEntry | undefined {
  const entry = catalogEntryOf(route);
  return entry?.access === 'paid' ? entry : undefined;
}
