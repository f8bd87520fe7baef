// A route is declared once: path, description, zod schemas, price class, example. Everything
// else (registration, validation, OpenAPI, /v1/status, llms.txt, the agent card, the access
// policy) is derived from that declaration, so nothing is maintained twice.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessOf, type Access } from '../access/policy.ts';

export type InterfaceName = 'risk' | 'market';

/** Where each interface is mounted. Interface A also answers at the root of RISK_HOSTNAME. */
export const INTERFACE_BASE: Record<InterfaceName, string> = { risk: '/risk', market: '' };

export interface RouteDef<Q extends z.ZodObject = z.ZodObject> {
  /** Path below the interface base, e.g. `/v1/token-risk`. */
  path: string;
  summary: string;
  description: string;
  /** Group shown in the docs. */
  tag: string;
  query?: Q;
  /** Schema of `data` inside the success envelope (documentation; responses are not re-validated). */
  data: z.ZodType;
  /** A query that works, for llms.txt and the docs. */
  example?: Record<string, string>;
  handler: (req: FastifyRequest<{ Querystring: z.output<Q> }>, reply: FastifyReply) => Promise<unknown>;
}

/** Identity helper that keeps the query type attached to the handler. */
export function defineRoute<Q extends z.ZodObject>(def: RouteDef<Q>): RouteDef<Q> {
  return def;
}

export interface CatalogEntry {
  interface: InterfaceName;
  /** Full path as served, base included. */
  url: string;
  /** From the access policy table (src/access/policy.ts). */
  access: Access;
  /** Price of one call when paid (X402_PRICE), else null. */
  price: string | null;
  def: RouteDef;
}

/** Every route the app serves, in registration order. Built once at start-up. */
export class RouteCatalog {
  readonly entries: CatalogEntry[] = [];

  /** `price`: what one paid call costs (X402_PRICE). */
  constructor(readonly price: string) {}

  add(iface: InterfaceName, def: RouteDef): CatalogEntry {
    const url = INTERFACE_BASE[iface] + def.path;
    const access = accessOf(url);
    const entry = { interface: iface, url, access, price: access === 'paid' ? this.price : null, def };
    this.entries.push(entry);
    return entry;
  }

  of(iface: InterfaceName): CatalogEntry[] {
    return this.entries.filter((e) => e.interface === iface);
  }

  find(url: string): CatalogEntry | undefined {
    return this.entries.find((e) => e.url === url);
  }
}

/** A working request path for the route: its example query, or the bare path. */
export function examplePath(e: CatalogEntry): string {
  return e.def.example ? `${e.url}?${new URLSearchParams(e.def.example)}` : e.url;
}

const sourceMetaSchema = z
  .object({
    provider: z.string(),
    fetched_at: z.string().describe('ISO-8601 time the provider answered'),
    cached: z.boolean(),
    age_s: z.number().describe('Seconds since the provider answered'),
  })
  .meta({ id: 'SourceMeta', description: 'Where a number came from and how old it is' });

export const errorSchema = z
  .object({
    error: z.string().describe('Human-readable message'),
    source: z.string().optional().describe('Upstream provider that failed, when one did'),
  })
  .meta({ id: 'Error', description: 'Error body of every failure' });

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'A parameter is missing, malformed or out of bounds; the message names it and what is accepted',
  401: 'Missing, unknown or revoked API key (and x402 not configured)',
  402: 'Payment required: PAYMENT-REQUIRED header (x402 v2) and a JSON body with the price',
  404: 'Well-formed, but unknown to the source',
  429: 'Rate limited; see Retry-After',
  502: 'The upstream provider failed; `source` names it',
  503: 'Temporarily unavailable (e.g. the payment facilitator); `source` names it',
};

export function envelopeSchema(data: z.ZodType) {
  return z.object({
    data,
    meta: z
      .object({
        timestamp: z.string().describe('ISO-8601 time of this response'),
        sources: z.array(sourceMetaSchema),
      })
      .loose(),
  });
}

/**
 * Registers routes on an (encapsulated) Fastify context and records them in the catalog.
 * `prefix` is the context's prefix, so the catalog knows the served URL.
 */
export function mountRoutes(app: FastifyInstance, catalog: RouteCatalog, iface: InterfaceName, defs: RouteDef[]): void {
  for (const def of defs) {
    const entry = catalog.add(iface, def);
    const errors = entry.access === 'paid' ? [400, 401, 402, 404, 429, 502, 503] : [400, 404, 429, 502, 503];
    app.withTypeProvider<ZodTypeProvider>().route({
      method: 'GET',
      url: def.path,
      config: { catalog: entry },
      schema: {
        summary: def.summary,
        description: def.description,
        tags: [def.tag],
        // Paid: an API key or an x402 payment; free: nothing.
        security: entry.access === 'paid' ? [{ ApiKeyAuth: [] }, { X402Payment: [] }] : [],
        'x-access': entry.access,
        ...(entry.price ? { 'x-price': entry.price } : {}),
        ...(def.query ? { querystring: def.query } : {}),
        response: {
          200: { description: 'Success', content: { 'application/json': { schema: envelopeSchema(def.data) } } },
          ...Object.fromEntries(
            errors.map((code) => [code, { description: ERROR_DESCRIPTIONS[code], content: { 'application/json': { schema: errorSchema } } }]),
          ),
        },
      } as FastifySchema,
      handler: def.handler as never,
    });
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    catalog?: CatalogEntry;
  }
}
