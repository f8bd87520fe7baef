// A route is declared once: path, words, access (free or paid), zod schemas of its query and of its
// `data`, and an example. Registration, validation, the access policy, OpenAPI, /v1/status, llms.txt
// and the agent card are all derived from that declaration, so nothing is maintained twice. The
// handler is typed to return the envelope of its documented `data`, and a test checks every route's
// example answer against that schema.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Envelope } from '../upstream/envelope.ts';
import { NO_QUERY } from '../edge/validator.ts';
import type { RouteContext } from './context.ts';

export type InterfaceName = 'risk' | 'market';
/** free: anyone; paid: an API key or an x402 payment; key: an API key, never charged (/v1/usage). */
export type Access = 'free' | 'paid' | 'key';

/** Where each interface is mounted. Interface A also answers at the root of RISK_HOSTNAME. */
export const INTERFACE_BASE: Record<InterfaceName, string> = { risk: '/risk', market: '' };

export type RouteRequest<Q extends z.ZodObject> = FastifyRequest<{ Querystring: z.output<Q> }>;

export interface RouteDef<Q extends z.ZodObject = z.ZodObject, D extends z.ZodType = z.ZodType> {
  /** Path below the interface base, e.g. `/v1/token-risk`. */
  path: string;
  summary: string;
  description: string;
  /** Group shown in the docs. */
  tag: string;
  /** free: anyone; paid: an API key or an x402 payment; key: an API key is required, nothing is charged. */
  access: Access;
  query?: Q;
  /** Schema of `data` inside the success envelope. */
  data: D;
  /** A query that works, for llms.txt, the docs and the route-schema test. */
  example?: Record<string, string>;
  /** false for liveness probes, which are never rate-limited. Default true. */
  rateLimited?: boolean;
  /** A page about the service (status), not data: rate-limited in a bucket of its own, apart from the data routes. */
  reference?: boolean;
  /**
   * What the route's parameter checks need loaded before its first request is validated: a library kept
   * out of start-up (viem's ENS normaliser). The first requests wait for it; later ones pass at once.
   */
  prepare?: () => Promise<unknown>;
  handler: (req: RouteRequest<Q>, ctx: RouteContext) => Promise<Envelope<z.output<D>>>;
}

/** Identity helper that ties the handler's query and return types to the declared schemas. */
export function defineRoute<Q extends z.ZodObject, D extends z.ZodType>(def: RouteDef<Q, D>): RouteDef {
  return def as unknown as RouteDef;
}

export interface CatalogEntry {
  interface: InterfaceName;
  /** Full path as served, base included. */
  url: string;
  /** OpenAPI operationId: what client generators and agent tools name the call (see operationId). */
  operationId: string;
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
    const entry = { interface: iface, url, operationId: operationId(iface, def.path), access: def.access, price: def.access === 'paid' ? this.price : null, def };
    const clash = this.entries.find((e) => e.operationId === entry.operationId);
    if (clash) throw new Error(`${url} and ${clash.url} would share the operationId ${entry.operationId}`);
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

/**
 * `get` and the route's path in camel case, without the version segment: /v1/price → getPrice,
 * /v1/long-short-ratio → getLongShortRatio, /risk/v1/token-risk → getTokenRisk. Interface A's other
 * routes say "risk" (/risk/health → getRiskHealth), so they do not clash with interface B's.
 * Stable as long as the path is: client generators and agent tools name the call by it.
 */
export function operationId(iface: InterfaceName, path: string): string {
  const words = path.split(/[/-]/).filter((w) => w && !/^v\d+$/.test(w));
  if (iface === 'risk' && !words.includes('risk')) words.unshift('risk');
  return `get${words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}`;
}

/** What x402 discovery (x402scan, @agentcash/discovery) reads from a paid operation: the price in USD and the protocol. */
export function paymentInfo(price: string) {
  return { price: { mode: 'fixed', amount: price.replace(/^\$/, ''), currency: 'USD' }, protocols: [{ x402: {} }] };
}

/** A working request path for the route: its example query, or the bare path. */
export function examplePath(e: CatalogEntry): string {
  return e.def.example ? `${e.url}?${new URLSearchParams(e.def.example)}` : e.url;
}

export const sourceMetaSchema = z
  .object({
    provider: z.string(),
    fetched_at: z.string().describe('ISO-8601 time the provider answered'),
    cached: z.boolean(),
    age_s: z.number().describe('Seconds since the provider answered'),
    error: z
      .string()
      .optional()
      .describe("Present when this source failed and the answer was made without it (token risk: the chain's RPC); fetched_at is then when it was tried"),
  })
  .meta({ id: 'SourceMeta', description: 'Where a number came from and how old it is' });

export const errorSchema = z
  .object({
    error: z.string().describe('Human-readable message'),
    source: z.string().optional().describe('Upstream provider that failed, when one did'),
  })
  .meta({ id: 'Error', description: 'Error body of every failure' });

/** The 402 body: the price in words beside the machine-readable PAYMENT-REQUIRED header. */
export const paymentRequiredSchema = z
  .object({
    error: z.string().describe('"payment required", or "payment rejected: <reason>"'),
    reason: z.string().optional().describe('Why a payment was rejected (replay, underpayment, expired, ...)'),
    price: z.string().describe('Price of one call, e.g. $0.001'),
    network: z.string().describe('CAIP-2 network id, e.g. eip155:8453'),
    asset: z.string().describe('Token contract paid in'),
    payTo: z.string().describe('Address that receives the payment'),
    accepts: z.array(z.object({}).loose()).describe('The x402 v2 payment requirements, as in the PAYMENT-REQUIRED header'),
  })
  .meta({ id: 'PaymentRequired', description: 'x402 payment challenge' });

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'A parameter is missing, malformed, out of bounds, given twice, or not one this operation takes; the message names it and what is accepted',
  401: 'Unknown or revoked API key; no credentials while x402 is not configured; or no API key on a route that needs one',
  404: 'Well-formed, but unknown to the source',
  429: 'Rate limited; see Retry-After',
  502: 'The upstream provider failed; `source` names it',
  503: 'Temporarily unavailable: the provider is paused after repeated failures or is limiting us, the payment facilitator is down, or the database is unavailable; `source` names it; see Retry-After',
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
 * The error statuses a route documents. Interface A's published contract lists 400, 429 and 502 (a
 * provider limiting us or paused is a 502 there, with Retry-After); interface B adds 401 on paid
 * routes, 404 for what a source does not know, and 503 for "try again later".
 */
function errorStatuses(def: RouteDef, iface: InterfaceName): number[] {
  const limited = def.rateLimited !== false;
  if (iface === 'risk') return limited ? [400, 429, 502] : [400, 502];
  if (def.access === 'paid') return [400, 401, 404, 429, 502, 503];
  if (def.access === 'key') return [400, 401, 429, 503];
  return limited ? [400, 404, 429, 502, 503] : [400, 404, 502, 503];
}

/** Interface A's 502 covers "try again later" too: its contract has no 503. */
const RISK_502 = 'The upstream provider failed, is limiting us, or is paused after repeated failures (then with Retry-After); `source` names it';

/** The status codes a route documents; a 401 says how to get a key (`howToGetKey`, from OPERATOR_CONTACT). */
function responses(def: RouteDef, iface: InterfaceName, howToGetKey: string) {
  const errors = errorStatuses(def, iface);
  const describe = (code: number) =>
    iface === 'risk' && code === 502 ? RISK_502 : code === 401 ? `${ERROR_DESCRIPTIONS[401]}. ${howToGetKey}` : ERROR_DESCRIPTIONS[code];
  const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });
  return {
    200: { description: 'Success', ...json(envelopeSchema(def.data)) },
    ...(def.access === 'paid' ? { 402: { description: 'Payment required: PAYMENT-REQUIRED header (x402 v2) and this body', ...json(paymentRequiredSchema) } } : {}),
    ...Object.fromEntries(errors.map((code) => [code, { description: describe(code), ...json(errorSchema) }])),
  };
}

/**
 * Registers routes on an (encapsulated) Fastify context and records them in the catalog.
 * The context's prefix must be the interface's base, so the catalog knows the served URL.
 */
export function mountRoutes(app: FastifyInstance, ctx: RouteContext, iface: InterfaceName, defs: readonly RouteDef[]): void {
  for (const def of defs) {
    const entry = ctx.catalog.add(iface, def);
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
        // Only when payments are on: without X402_PAY_TO a paid route takes an API key and nothing else.
        ...(entry.price && ctx.access.x402.enabled ? { 'x-payment-info': paymentInfo(entry.price) } : {}),
        // Declared for every route (NO_QUERY when it takes none): a parameter it does not take is a 400 (validator.ts).
        querystring: def.query ?? NO_QUERY,
        response: responses(def, iface, ctx.access.api_key.how_to_get),
      } as FastifySchema,
      ...(def.prepare ? { onRequest: preparedOnce(def.prepare) } : {}),
      // A GET answer made only of fresh cached provider answers is remembered, to be served again as it is.
      handler: async (req) => {
        const answer = await def.handler(req as never, ctx);
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
