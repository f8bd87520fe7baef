// A route is declared once: path, words, access (free or paid), zod schemas of its query and of its
// `data`, and an example. Registration, validation, the access policy, OpenAPI, /v1/status, llms.txt
// and the agent card are all derived from that declaration, so nothing is maintained twice. The
// handler is typed to return the envelope of its documented `data`, and a test checks every route's
// example answer against that schema.
//
// A handler is given the route context: the shared services, made once by buildApp. The declaration, the
// catalog of entries it makes and that context refer to each other, so they are declared here together.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { LoadedMacroCalendar } from '../data/macro-calendar.ts';
import type { UsageCounter } from '../db/usage.ts';
import type { AnswerMemo } from '../edge/answer-memo.ts';
import type { BackendHealth } from '../lib/backend-health.ts';
import type { CacheHoldings, Metrics } from '../metrics/metrics.ts';
import type { CryptoListings } from '../sources/crypto-listings.ts';
import type { ProviderInfo, Sources, SourceSettings } from '../sources/index.ts';
import type { UpstreamGuard } from '../upstream/guard.ts';
import type { Envelope } from '../upstream/envelope.ts';
import type { AccessSummary } from './access-summary.ts';
import type { StaleSetting, StaleSettings } from './staleness.ts';

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
   * The setting that says how long past their cache TTL its upstream answers may still be served at once while
   * they are refreshed (stale-while-revalidate, staleness.ts). Unset: never past the TTL (on-chain state).
   */
  maxStale?: StaleSetting;
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
  /** Seconds past the TTL an answer may be served while refreshed (its `maxStale` setting's value), else null. */
  maxStaleS: number | null;
  def: RouteDef;
}

/** Every route the app serves, in registration order. Built once at start-up. */
export class RouteCatalog {
  readonly entries: CatalogEntry[] = [];

  /** `price`: what one paid call costs (X402_PRICE); `staleness`: the values of the routes' staleness settings (none: routes never serve stale). */
  constructor(
    readonly price: string,
    private readonly staleness?: StaleSettings,
  ) {}

  add(iface: InterfaceName, def: RouteDef): CatalogEntry {
    const url = INTERFACE_BASE[iface] + def.path;
    const maxStaleS = def.maxStale && this.staleness ? this.staleness[def.maxStale] : null;
    const entry = { interface: iface, url, operationId: operationId(iface, def.path), access: def.access, price: def.access === 'paid' ? this.price : null, maxStaleS, def };
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

/** A working request path for the route: its example query, or the bare path. */
export function examplePath(e: CatalogEntry): string {
  return e.def.example ? `${e.url}?${new URLSearchParams(e.def.example)}` : e.url;
}

export interface RouteContext {
  /** The settings handlers read (see RouteSettings). */
  config: RouteSettings;
  sources: Sources;
  /**
   * The same sources, their cached answers served up to `maxStaleS` past their TTL while refreshed (made once
   * per value): what the handler of a route that declares `maxStale` is given as `sources` (mount.ts).
   */
  sourcesServingStale(maxStaleS: number): Sources;
  /** Which base assets the venues list as crypto (the default of a symbol without asset_class). */
  cryptoListings: CryptoListings;
  /** Health and breaker state of every provider (/v1/status). */
  guard: UpstreamGuard;
  /** The app's metrics (the no-op set when they are off): the hedged fallbacks report to it. */
  metrics: Metrics;
  providers: ProviderInfo[];
  catalog: RouteCatalog;
  /** How to authenticate and pay, as the reference outputs describe it. */
  access: AccessSummary;
  /** Answers served again while their sources are fresh (the cached path's fast lane; answer-memo.ts). */
  answers: AnswerMemo;
  /** Per-key usage (/v1/usage reads it). */
  usage: UsageCounter;
  /**
   * A key's count in the rate limiter's current window for paid calls, and ms until that window ends, read
   * without counting (/v1/usage). The limiter is access's (above this core): it is handed in as this function.
   */
  keyMinute(keyId: string): Promise<{ current: number; ttl: number }>;
  /** Health of the database, and of Redis when REDIS_URL is set (/v1/status). */
  backends: { database: BackendHealth; redis: BackendHealth | undefined };
  /** What the in-process caches hold now (/v1/status). */
  caches(): CacheHoldings;
  /** Where x402 batch settlement stands (/v1/status); null when it is not installed (X402_BATCH_SETTLEMENT=false, x402 off). */
  batchSettlement(): { mode: 'auto' | 'true' | 'false' | 'drain'; state: 'offered' | 'not_offered' | 'draining' | 'drained'; owing: number | null } | null;
  /** Epoch ms the app was built (uptime). */
  startedAt: number;
}

/**
 * The settings route handlers read: a part of the server's Config. config.ts composes every module's settings
 * (payments' among them, which stand above this core), so the core names what its routes use, and buildApp
 * hands it the whole Config as this.
 */
export interface RouteSettings {
  /** Where clients reach the server (the reference documents). */
  publicBaseUrl: string;
  upstream: { deadlineMs: number; hedgeDelayMs: number; breakerFailures: number; breakerCooldownMs: number };
  risk: { rateLimitPerMinute: number };
  keys: { rateLimitPerMinute: number };
  limits: { freePerMinute: number };
  /** The ledger database: the embedded one unless a URL is set. */
  db: { url: string | undefined };
  macroCalendar: LoadedMacroCalendar;
  sources: SourceSettings;
}
