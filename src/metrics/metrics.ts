// The server's Prometheus metrics: one registry per app holding every metric defined here, and the
// recorders the layers below report to (the guard, the hedge, the cache), plus the calls the access
// code, the payment gate and the storage backends make (rateLimited, payment, settleLatency, backend).
//
// What is counted per request (responses by route, the request-duration histogram, cache lookups) is
// kept in plain numbers on objects made once per route, so a request costs a few additions: no label
// hashing, no string building, no allocation. Those numbers become samples only when /metrics is read.
// Everything else happens off the cached path (an upstream call, a 429, a payment) and uses prom-client
// directly.
//
// Label values are bounded and come from the code, never from a request: route templates, HTTP
// methods, provider names of the source list, fixed outcome names. No API key or key id, payer
// address, symbol or other input is ever a label.
import type { ConnectionClosedReason } from '../edge/connection-admission.ts';
import { createRequire } from 'node:module';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { CacheLayer, CacheRecorder } from '../upstream/cache.ts';
import type { BreakerState, UpstreamOutcome, UpstreamRecorder } from '../upstream/guard.ts';
import type { HedgeOutcome, HedgeRecorder } from '../upstream/hedge.ts';
import { cacheHoldingMetrics, type CacheHoldings } from './cache-holdings.ts';
import { settlingCostMetrics, type SettlingCostReader } from './settling-costs.ts';

/**
 * What became of an x402 payment: `verified` (the facilitator accepted it; the handler runs),
 * `rejected` (verification refused it: 402), `settled`, `cancelled` (the call failed, so it is not
 * settled), `settle_failed` (the facilitator refused or failed to settle), `unknown` (the settle
 * outcome could not be learned: money may or may not have moved; someone must look).
 */
export const PAYMENT_OUTCOMES = ['verified', 'rejected', 'settled', 'cancelled', 'settle_failed', 'unknown'] as const;
export type PaymentOutcome = (typeof PAYMENT_OUTCOMES)[number];

/** The rate-limit bucket a 429 came from: per key, per client on paid routes without a key, on free routes, on status pages, on /risk. */
export const RATE_LIMIT_SCOPES = ['key', 'paid', 'free', 'ref', 'risk'] as const;
export type RateLimitScope = (typeof RATE_LIMIT_SCOPES)[number];

export type { ConnectionClosedReason };

/** Storage the server depends on, whose health is reported by whoever uses it. */
export type Backend = 'redis' | 'database';

const BREAKER_STATES: readonly BreakerState[] = ['closed', 'open', 'half_open'];
const CACHE_LAYERS: readonly CacheLayer[] = ['l1', 'l2', 'coalesced'];

/** How the payments ledger's final-status writes are doing (PaymentRecords.stats()). */
export interface FinalWriteStats {
  final_write_failures: number;
  final_writes_pending: number;
  final_writes_lost: number;
}

/** The calls the payment gate makes. */
export interface PaymentMetrics {
  /** One payment on `network` (CAIP-2: eip155:8453, solana:…) reached `outcome`. */
  payment(outcome: PaymentOutcome, network: string): void;
  /** One settle call to the facilitator took `seconds`, whatever it answered. */
  settleLatency(seconds: number): void;
}

/** Records one response of a route: its status code and Fastify's `reply.elapsedTime` (ms). */
export interface ResponseRecorder {
  record(statusCode: number, elapsedMs: number): void;
}

export interface Metrics extends PaymentMetrics {
  /** False when metrics are off (no METRICS_TOKEN, no METRICS_PORT): every call below does nothing. */
  readonly enabled: boolean;
  /** For the guard (calls, latency, breaker state) and the hedged fallbacks. */
  readonly upstream: UpstreamRecorder & HedgeRecorder;
  /** For the response cache (hits by layer, misses). */
  readonly cache: CacheRecorder;
  /** A request was refused with 429 by the limiter of `scope`. */
  rateLimited(scope: RateLimitScope): void;
  /** `name` answered (`up`) or failed (down) when last used or checked. */
  backend(name: Backend, up: boolean): void;
  /** Where the payments ledger's write health is read when /metrics is scraped (its counts are the ledger's own). */
  paymentRecordWrites(stats: () => FinalWriteStats): void;
  /** Where what the caches hold is read when /metrics is scraped. */
  cacheHoldings(stats: () => CacheHoldings): void;
  /** Where what settling payments costs is read (the ledger) when /metrics is scraped. */
  settlingCosts(read: SettlingCostReader): void;
  /** A connection was closed by the server's own bounds (connection-admission.ts, pipelining.ts). */
  connectionClosed(reason: ConnectionClosedReason): void;
  /** The series a route's responses go to; made once per route and method, when the route is registered. */
  route(url: string, method: string): ResponseRecorder;
  /** The series of requests that matched no route (unknown paths, other methods, malformed URLs). */
  unmatched(method: string): ResponseRecorder;
  /** The Prometheus text exposition of every metric. */
  exposition(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsOptions {
  /** Provider names of the source list: their breaker gauges exist (closed) before their first call. */
  providers: readonly string[];
  version: string;
  /** The CAIP-2 networks payments are offered on: their payment counters exist (at 0) before the first payment. */
  paymentNetworks?: readonly string[];
}

export const METRIC_PREFIX = 'marketgate_';
export type { CacheHoldings };

/** Upper bounds of the request-duration buckets, seconds: a cached answer takes well under a millisecond, an upstream deadline seconds. */
export const REQUEST_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const REQUEST_BUCKETS_MS = REQUEST_BUCKETS_S.map((s) => s * 1000);
const UPSTREAM_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const SETTLE_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** One histogram series kept in plain numbers: a count per bucket (not cumulative; the last is above every bound) and the sum, ms. */
class DurationSeries {
  readonly counts = new Float64Array(REQUEST_BUCKETS_MS.length + 1);
  sumMs = 0;

  observe(ms: number): void {
    let i = 0;
    while (i < REQUEST_BUCKETS_MS.length && ms > REQUEST_BUCKETS_MS[i]!) i++;
    this.counts[i] = this.counts[i]! + 1;
    this.sumMs += ms;
  }
}

const STATUS_CLASSES = ['', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** The responses of one route and method, by status class (index 1-5), each with its durations. */
class RouteSeries implements ResponseRecorder {
  readonly byClass: (DurationSeries | undefined)[] = [undefined, undefined, undefined, undefined, undefined, undefined];

  constructor(
    readonly route: string,
    readonly method: string,
  ) {}

  record(statusCode: number, elapsedMs: number): void {
    const c = statusCode >= 100 && statusCode < 600 ? (statusCode / 100) | 0 : 5;
    (this.byClass[c] ??= new DurationSeries()).observe(elapsedMs);
  }
}

/** Cache lookups in plain numbers (the cached path), read at scrape time. */
class CacheCounts implements CacheRecorder {
  l1 = 0;
  l2 = 0;
  coalesced = 0;
  misses = 0;

  hit(layer: CacheLayer): void {
    if (layer === 'l1') this.l1++;
    else if (layer === 'l2') this.l2++;
    else this.coalesced++;
  }

  miss(): void {
    this.misses++;
  }
}

/** Methods Node's parser accepts are many; the ones that matter here are named, the rest fold into `other`. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const UNMATCHED_ROUTE = 'unmatched';

/** prom-client, required only when metrics are on (they are off by default), not at every start-up. */
const loadPromClient = () => createRequire(import.meta.url)('prom-client') as typeof import('prom-client');

class PrometheusMetrics implements Metrics {
  readonly enabled = true;
  private readonly prom = loadPromClient();
  readonly registry = new this.prom.Registry();
  readonly contentType = this.registry.contentType;
  readonly cache = new CacheCounts();
  readonly upstream: UpstreamRecorder & HedgeRecorder;
  private readonly routes = new Map<string, RouteSeries>();
  private readonly rateLimits: Counter<'scope'>;
  private readonly payments: Counter<'outcome' | 'network'>;
  private readonly settle: Histogram;
  private readonly backends: Gauge<'backend'>;
  private ledgerStats: () => FinalWriteStats = () => ({ final_write_failures: 0, final_writes_pending: 0, final_writes_lost: 0 });
  private holdings: (() => CacheHoldings) | undefined;
  readonly settlingCosts: (read: SettlingCostReader) => void;
  private readonly connectionsClosed: Counter;

  constructor(options: MetricsOptions) {
    const { Counter, Gauge, Histogram, collectDefaultMetrics } = this.prom;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    new Gauge({ name: `${METRIC_PREFIX}build_info`, help: 'Always 1; the version of the running server.', labelNames: ['version'], registers }).set({ version: options.version }, 1);

    const counts = this.cache;
    new Counter({
      name: `${METRIC_PREFIX}cache_hits_total`,
      help: 'Lookups answered without a new upstream call: by the in-process cache (l1), the shared cache in Redis (l2), or by joining a load already in flight in this instance or, through Redis, in another (coalesced).',
      labelNames: ['layer'],
      registers,
      collect() {
        this.reset();
        for (const layer of CACHE_LAYERS) this.inc({ layer }, counts[layer]);
      },
    });
    new Counter({
      name: `${METRIC_PREFIX}cache_misses_total`,
      help: 'Lookups that made an upstream call (not cached, expired, or too old for the caller; with Redis, counted once the shared cache could not answer).',
      registers,
      collect() {
        this.reset();
        this.inc(counts.misses);
      },
    });

    cacheHoldingMetrics(this.prom, METRIC_PREFIX, registers, () => this.holdings?.());
    this.settlingCosts = settlingCostMetrics(this.prom, METRIC_PREFIX, registers);
    this.connectionsClosed = new Counter({
      name: `${METRIC_PREFIX}connections_closed_total`,
      help: 'Connections the server refused or closed for its own bounds: too_many_connections (MAX_CONNECTIONS), too_many_from_ip (MAX_CONNECTIONS_PER_IP), too_many_pending_from_ip (MAX_PENDING_CONNECTIONS_PER_IP), too_many_new_from_ip (NEW_CONNECTIONS_PER_IP_PER_S), first_byte_timeout (nothing sent within FIRST_BYTE_TIMEOUT_MS), pipelining (more requests waiting than MAX_PIPELINED_REQUESTS), write_stalled (its client stopped reading an answer), memory_pressure (the most queued work, closed first under memory pressure).',
      labelNames: ['reason'],
      registers,
    });

    const calls = new Counter({
      name: `${METRIC_PREFIX}upstream_calls_total`,
      help: 'Upstream calls by provider and outcome: ok, not_found, a failure kind (timeout, reset, network, truncated, http, provider, rate_limited, malformed, schema, too_large), circuit_open (refused by the breaker, no request made) or error (a defect).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    const callSeconds = new Histogram({
      name: `${METRIC_PREFIX}upstream_call_duration_seconds`,
      help: 'Duration of upstream calls that were made (every outcome but circuit_open), retries and the whole body included.',
      labelNames: ['provider'],
      buckets: UPSTREAM_BUCKETS_S,
      registers,
    });
    const breakers = new Gauge({
      name: `${METRIC_PREFIX}upstream_breaker_state`,
      help: "1 for the state each provider's circuit breaker is in (closed, open, half_open), 0 for the others. An open breaker stays open until the first call after its cool-down.",
      labelNames: ['provider', 'state'],
      registers,
    });
    const hedges = new Counter({
      name: `${METRIC_PREFIX}upstream_hedges_total`,
      help: 'Fallback venue asked: failover (the primary failed; the fallback served), hedge_won (the primary was slow; the fallback served), primary_won, failed.',
      labelNames: ['provider', 'fallback', 'outcome'],
      registers,
    });
    const breaker = (provider: string, state: BreakerState) => {
      for (const s of BREAKER_STATES) breakers.set({ provider, state: s }, s === state ? 1 : 0);
    };
    this.upstream = {
      call(provider: string, outcome: UpstreamOutcome, seconds: number | null) {
        calls.inc({ provider, outcome });
        if (seconds !== null) callSeconds.observe({ provider }, seconds);
      },
      breaker,
      hedge(primary: string, fallback: string, outcome: HedgeOutcome) {
        hedges.inc({ provider: primary, fallback, outcome });
      },
    };
    for (const provider of options.providers) breaker(provider, 'closed');

    this.rateLimits = new Counter({ name: `${METRIC_PREFIX}rate_limited_total`, help: 'Requests refused with 429, by limiter scope: key, paid, free, ref (status pages), risk.', labelNames: ['scope'], registers });
    for (const scope of RATE_LIMIT_SCOPES) this.rateLimits.inc({ scope }, 0);
    this.payments = new Counter({
      name: `${METRIC_PREFIX}payments_total`,
      help: 'x402 payments by outcome (verified, rejected, settled, cancelled, settle_failed, unknown: settle outcome not learned, check by hand) and CAIP-2 network.',
      labelNames: ['outcome', 'network'], registers,
    });
    for (const network of options.paymentNetworks ?? []) for (const outcome of PAYMENT_OUTCOMES) this.payments.inc({ outcome, network }, 0);
    this.settle = new Histogram({ name: `${METRIC_PREFIX}payment_settle_duration_seconds`, help: 'Duration of settle calls to the x402 facilitator.', buckets: SETTLE_BUCKETS_S, registers });
    this.backends = new Gauge({ name: `${METRIC_PREFIX}backend_up`, help: '1 when the backend (redis, database) answered when last used or checked, 0 when it failed.', labelNames: ['backend'], registers });

    // A payment's final status (settled, cancelled, …) that the ledger could not write is retried in the
    // background and never fails the payer's answer: these say so where an alert can see it.
    const ledger = () => this.ledgerStats();
    const ledgerCounter = (name: string, help: string, stat: keyof FinalWriteStats) =>
      new Counter({
        name: `${METRIC_PREFIX}${name}`,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(ledger()[stat]);
        },
      });
    ledgerCounter(
      'payment_ledger_write_failures_total',
      "Failed attempts to write a payment's final status to the ledger (each is retried in the background; the payer's answer is unaffected).",
      'final_write_failures',
    );
    new Gauge({
      name: `${METRIC_PREFIX}payment_ledger_writes_pending`,
      help: 'Final payment statuses waiting for a retry to be written to the ledger.',
      registers,
      collect() {
        this.set(ledger().final_writes_pending);
      },
    });
    ledgerCounter(
      'payment_ledger_writes_lost_total',
      'Final payment statuses given up on (logged in full as LOST at error level: record them with npm run payments -- resolve).',
      'final_writes_lost',
    );
  }

  paymentRecordWrites(stats: () => FinalWriteStats): void {
    this.ledgerStats = stats;
  }

  cacheHoldings(stats: () => CacheHoldings): void {
    this.holdings = stats;
  }
  connectionClosed(reason: ConnectionClosedReason): void {
    this.connectionsClosed.inc({ reason });
  }

  rateLimited(scope: RateLimitScope): void {
    this.rateLimits.inc({ scope });
  }

  payment(outcome: PaymentOutcome, network: string): void {
    this.payments.inc({ outcome, network });
  }

  settleLatency(seconds: number): void {
    this.settle.observe(seconds);
  }

  backend(name: Backend, up: boolean): void {
    this.backends.set({ backend: name }, up ? 1 : 0);
  }

  route(url: string, method: string): ResponseRecorder {
    const key = `${method} ${url}`;
    let series = this.routes.get(key);
    if (!series) this.routes.set(key, (series = new RouteSeries(url, method)));
    return series;
  }

  unmatched(method: string): ResponseRecorder {
    return this.route(UNMATCHED_ROUTE, KNOWN_METHODS.has(method) ? method : 'other');
  }

  async exposition(): Promise<string> {
    return (await this.registry.metrics()) + '\n' + this.requestFamilies();
  }

  /** The per-request families, written from the plain numbers of each route's series. */
  private requestFamilies(): string {
    const total = `${METRIC_PREFIX}http_requests_total`;
    const duration = `${METRIC_PREFIX}http_request_duration_seconds`;
    const counts: string[] = [
      `# HELP ${total} Responses sent, by route template (unmatched: no route), method and status class.`,
      `# TYPE ${total} counter`,
    ];
    const histogram: string[] = [
      `# HELP ${duration} Time from the request's arrival to its response being sent, by route template, method and status class.`,
      `# TYPE ${duration} histogram`,
    ];
    for (const series of this.routes.values()) {
      series.byClass.forEach((d, c) => {
        if (!d) return;
        const labels = `route="${escapeLabel(series.route)}",method="${escapeLabel(series.method)}",status_class="${STATUS_CLASSES[c]}"`;
        let cumulative = 0;
        REQUEST_BUCKETS_S.forEach((le, i) => {
          cumulative += d.counts[i]!;
          histogram.push(`${duration}_bucket{${labels},le="${le}"} ${cumulative}`);
        });
        cumulative += d.counts[REQUEST_BUCKETS_S.length]!;
        histogram.push(`${duration}_bucket{${labels},le="+Inf"} ${cumulative}`, `${duration}_sum{${labels}} ${d.sumMs / 1000}`, `${duration}_count{${labels}} ${cumulative}`);
        counts.push(`${total}{${labels}} ${cumulative}`);
      });
    }
    return `${counts.join('\n')}\n\n${histogram.join('\n')}\n`;
  }
}

/** A label value in the text format: backslash, double quote and line feed escaped. */
const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

const NOTHING: ResponseRecorder = { record() {} };

/** Metrics off: every recorder does nothing, and nothing is collected. */
export const NO_METRICS: Metrics = {
  enabled: false,
  upstream: { call() {}, breaker() {}, hedge() {} },
  cache: { hit() {}, miss() {} },
  rateLimited() {},
  payment() {},
  settleLatency() {},
  backend() {},
  paymentRecordWrites() {},
  cacheHoldings() {},
  settlingCosts() {},
  connectionClosed() {},
  route: () => NOTHING,
  unmatched: () => NOTHING,
  exposition: async () => '',
  contentType: 'text/plain; version=0.0.4; charset=utf-8',
};

/** The app's metrics: Prometheus ones when `enabled`, else the no-op set. */
export function createMetrics(enabled: boolean, options: MetricsOptions): Metrics {
  return enabled ? new PrometheusMetrics(options) : NO_METRICS;
}
