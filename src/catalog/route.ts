// A route is declared once: path, description, zod schemas, price class, example. Everything
// else (registration, validation, OpenAPI, /v1/status, llms.txt, the agent card, the access
// policy) is derived from that declaration, so nothing is maintained twice.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
  def: RouteDef;
}

/** Every route the app serves, in registration order. Built once at start-up. */
export class RouteCatalog {
  readonly entries: CatalogEntry[] = [];

  add(iface: InterfaceName, def: RouteDef): CatalogEntry {
    const url = INTERFACE_BASE[iface] + def.path;
    const entry = { interface: iface, url, access: accessOf(url), def };
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

const sourceMetaSchema = z.object({
  provider: z.string(),
  fetched_at: z.string().describe('ISO-8601 time the provider answered'),
  cached: z.boolean(),
  age_s: z.number().describe('Seconds since the provider answered'),
});

export const errorSchema = z
  .object({
    error: z.string().describe('Human-readable message'),
    source: z.string().optional().describe('Upstream provider that failed, when one did'),
  })
  .describe('Error');

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
        ...(def.query ? { querystring: def.query } : {}),
        response: {
          200: envelopeSchema(def.data),
          ...Object.fromEntries(errors.map((code) => [code, errorSchema])),
        },
      },
      handler: def.handler as never,
    });
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    catalog?: CatalogEntry;
  }
}
