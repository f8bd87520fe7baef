// Every setting comes from the environment, is parsed here once, and the rest of the app only ever
// sees the typed result. The variables are declared as data (src/lib/env.ts): the server's own below,
// each provider's in its source descriptor (src/sources/). An invalid value stops start-up with a
// message that names the variable and says what it accepts.
import { z } from 'zod';
import { BUILT_IN_MACRO_CALENDAR, MACRO_CALENDAR_FILE_ENV, type LoadedMacroCalendar } from './data/macro-calendar.ts';
import { contactSchema } from './access/keys/key-contact.ts';
import { KEYS_ENV } from './access/keys/keys-env.ts';
import { DATABASE_ENV } from './db/env.ts';
import { PAYMENTS_ENV, paymentSettings, type PaymentSettings, type PaymentValues } from './payments/settings.ts';
import { REDIS_ENV } from './redis/env.ts';
import { STALE_ENV, type StaleSettings } from './catalog/staleness.ts';
import type { DatabaseSettings } from './db/open.ts';
import { ConfigError, env, mergeEnvSpecs, parseEnv, type EnvSpec, type EnvValues } from './lib/env.ts';
import { SOURCES, type SourceSettings } from './sources/index.ts';
import { CONNECTION_ENV } from './edge/connection-env.ts';
import type { ConnectionLimits } from './edge/connection-admission.ts';
import { TRUST_PROXY_ACCEPTED, trustProxySchema, type TrustProxy } from './edge/trust-proxy.ts';

export { ConfigError } from './lib/env.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const hostname = z
  .string()
  .toLowerCase()
  .refine((v) => /^[a-z0-9.-]+$/.test(v), 'a bare host name such as risk.example.com (no scheme, no port)');

/** The server's own variables, by section (the sections head `.env.example`). */
export const CORE_ENV_SECTIONS = {
  server: {
    PORT: env.int(0, 65535, 3000, 'TCP port to listen on.'),
    HOST: env.text('127.0.0.1', 'Interface to bind (the Dockerfile sets 0.0.0.0).', 'an interface address such as 127.0.0.1 or 0.0.0.0'),
    LOG_LEVEL: env.oneOf(LOG_LEVELS, 'info', 'Log level (pino); logs are JSON lines with a reqId.'),
    TRUST_PROXY: env.custom(
      trustProxySchema,
      'false',
      `Reverse proxies whose X-Forwarded-For names the client (the client IP of every per-IP limit): ${TRUST_PROXY_ACCEPTED}. A hop count is refused; true is accepted with a warning (any client can then choose its address unless the port is reachable through the proxy alone).`,
    ),
    REQUEST_TIMEOUT_MS: env.int(1000, 600_000, 30_000, 'A client must have sent its whole request within this long (ms), else it gets 408 (slow-client protection).'),
    PUBLIC_BASE_URL: env.optionalUrl(
      "The URL clients reach this server at: in the agent card, llms.txt and x402's resource URLs (unset: http://HOST:PORT), and as OpenAPI's server (unset: /, the origin /docs was loaded from).",
      'https://api.example.com',
    ),
    MAX_PIPELINED_REQUESTS: env.int(
      1,
      10_000,
      8,
      "Requests one connection may have waiting behind the one being answered (HTTP/1.1 pipelining): they are answered one at a time and the connection is not read meanwhile; one more closes it. Each one parsed before that is the server's time: 8 keeps a flood's cost per connection low (bench edge); browsers do not pipeline at all.",
    ),
  },
  'connections (per client IP and in all)': CONNECTION_ENV,
  'load shedding (503 with Retry-After under pressure)': {
    PRESSURE_MAX_HEAP_PERCENT: env.int(
      0,
      100,
      90,
      "Every request, /health included, is answered 503 while the JavaScript heap in use, after a full collection, is above this share of V8's heap limit (0 = not checked).",
    ),
    PRESSURE_MAX_RSS_MB: env.int(
      0,
      1_048_576,
      0,
      "Memory pressure once resident memory is above this many MB and, after a full collection, so is memory in use (the JavaScript heap and its buffers): the connections holding the most queued work are closed first, a quarter each second; only when none is left every request but /health is answered 503 (0 = not checked; set it below a container's memory limit).",
    ),
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: env.int(0, 600_000, 1000, 'Every request but /health is answered 503 while the event loop has been late by more than this on average in each of the last 3 seconds (ms; 0 = not checked).'),
    PRESSURE_RETRY_AFTER_S: env.int(1, 3600, 10, 'Retry-After of the 503s sent under pressure (seconds).'),
  },
  'interface A (token risk)': {
    RISK_HOSTNAME: env.custom(hostname, undefined, 'When set, requests with this Host reach interface A at the root too (/v1/token-risk).', {
      example: 'risk.example.com',
    }),
    RISK_RATE_LIMIT: env.int(1, 1_000_000, 60, 'Requests per minute per client IP on /risk/* (/risk/health is never limited).'),
  },
  'upstream calls': {
    UPSTREAM_DEADLINE_MS: env.int(100, 120_000, 4000, 'Total deadline of one upstream call, connect + headers + whole body (ms); a retry shares it.'),
    UPSTREAM_CONNECT_TIMEOUT_MS: env.int(1, 120_000, 3000, 'TCP/TLS connect timeout of one upstream call (ms), within the deadline.'),
    UPSTREAM_MAX_BODY_BYTES: env.int(1024, 256 * 1024 * 1024, 16 * 1024 * 1024, 'Largest upstream body accepted (bytes); larger answers fail with 502.'),
    UPSTREAM_CONNECTIONS: env.int(1, 1024, 16, 'Keep-alive connections per upstream origin.'),
    BREAKER_FAILURES: env.int(1, 1000, 5, 'Consecutive failures of one provider that open its circuit (calls then fail fast: 503 on interface B, 502 on interface A, with Retry-After).'),
    BREAKER_COOLDOWN_MS: env.int(100, 3_600_000, 30_000, 'How long an open circuit fails fast before one probe call is let through (ms).'),
    HEDGE_DELAY_MS: env.int(0, 60_000, 500, 'A fallback source is asked when the primary has not answered after this long (ms), or at once when it fails.'),
    CACHE_MAX_BYTES: env.int(
      1_048_576,
      68_719_476_736,
      67_108_864,
      "Most bytes the response cache holds (its entries' estimated heap size): three quarters for upstream answers, a quarter for the answers served again from them; the least recently used go first, expired ones are freed as they expire.",
    ),
    CACHE_MAX_ENTRIES: env.int(1, 10_000_000, 10_000, 'Most upstream answers held by the response cache, whatever their size (least recently used go first).'),
  },
  'answers served a little old while refreshed (stale-while-revalidate)': STALE_ENV,
  'interface B: access (API keys, x402, limits)': {
    ...KEYS_ENV,
    OPERATOR_CONTACT: env.custom(
      contactSchema,
      undefined,
      "How clients ask this server's operator for an API key: an email address or an http(s) URL, said in the 401 that asks for a key, /v1/status, the agent card, llms.txt and OpenAPI (unset: they say to ask this server's operator).",
      { example: 'keys@example.com' },
    ),
    KEY_RATE_LIMIT: env.int(1, 1_000_000, 120, 'Requests per minute per API key on paid routes.'),
    PAID_IP_RATE_LIMIT: env.int(1, 1_000_000, 120, 'Requests per minute per client IP on paid routes without an API key (checked before any payment is verified).'),
    FREE_RATE_LIMIT: env.int(1, 1_000_000, 60, 'Requests per minute per client IP on the free /v1 routes (/health is never limited).'),
    ...PAYMENTS_ENV,
  },
  'database (payments ledger, API keys, per-key usage)': DATABASE_ENV,
  'several instances (Redis)': REDIS_ENV,
  'data files': {
    MACRO_CALENDAR_FILE: MACRO_CALENDAR_FILE_ENV,
  },
  'metrics (Prometheus)': {
    METRICS_TOKEN: env.custom(
      z.string().regex(/^[\x21-\x7e]{16,}$/, 'at least 16 printable ASCII characters, no spaces'),
      undefined,
      'Turns on Prometheus metrics: GET /metrics answers requests with Authorization: Bearer <this token> (16+ printable characters). With this and METRICS_PORT unset, metrics are off.',
      { secret: true },
    ),
    METRICS_PORT: env.int(0, 65535, undefined, 'Serves GET /metrics on a listener of its own on this port instead of the public port (no token needed there unless METRICS_TOKEN is set).'),
    METRICS_HOST: env.text('127.0.0.1', 'Interface of the METRICS_PORT listener (0.0.0.0 to let a scraper on another host or container reach it).', 'an interface address such as 127.0.0.1 or 0.0.0.0'),
  },
} satisfies Record<string, EnvSpec>;

const CORE_ENV = mergeEnvSpecs(Object.values(CORE_ENV_SECTIONS)) as UnionOfSections;
type UnionOfSections = (typeof CORE_ENV_SECTIONS)[keyof typeof CORE_ENV_SECTIONS] extends infer U
  ? { [K in U extends unknown ? keyof U : never]: U extends Record<K, infer V> ? V : never }
  : never;

/** Every variable the server reads: its own and every source's. */
export const ENV_SPEC: EnvSpec = mergeEnvSpecs([CORE_ENV, ...SOURCES.map((s) => s.env)]);

export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  logLevel: LogLevel;
  trustProxy: TrustProxy;
  /** Connection limits, per client and in all (src/edge/connection-admission.ts). */
  connections: ConnectionLimits;
  requestTimeoutMs: number;
  /** Requests one connection may have waiting behind the one being answered (src/edge/pipelining.ts). */
  maxPipelinedRequests: number;
  /** Load shedding (src/edge/pressure.ts): thresholds, 0 = not checked. */
  pressure: { maxHeapPercent: number; maxRssBytes: number; maxEventLoopDelayMs: number; retryAfterS: number };
  /** Used in generated docs and the agent card; derived from HOST/PORT when unset. */
  publicBaseUrl: string;
  /** PUBLIC_BASE_URL as given; unset, OpenAPI names the server relatively ('/', the docs' own origin). */
  publicBaseUrlGiven: string | undefined;
  risk: { hostname: string | undefined; rateLimitPerMinute: number };
  upstream: {
    deadlineMs: number;
    connectTimeoutMs: number;
    maxBodyBytes: number;
    connections: number;
    breakerFailures: number;
    breakerCooldownMs: number;
    hedgeDelayMs: number;
  };
  cache: { maxEntries: number; maxBytes: number };
  /** Per staleness setting, seconds past the TTL its routes' answers may be served while refreshed (src/catalog/staleness.ts). */
  staleness: StaleSettings;
  limits: { freePerMinute: number; paidIpPerMinute: number };
  keys: { raw: string[]; file: string; reloadMs: number; rateLimitPerMinute: number };
  /** OPERATOR_CONTACT: where clients ask for an API key (an email address or a URL); undefined = unset. */
  operatorContact: string | undefined;
  /** x402 (src/payments/settings.ts). */
  x402: PaymentSettings;
  /** The ledger database: PGlite in DATA_DIR, or the PostgreSQL server at DATABASE_URL; how long a read waits for it to open. */
  db: DatabaseSettings & { openWaitMs: number };
  /** Redis shared by several instances; url undefined = this process alone. */
  redis: { url: string | undefined; timeoutMs: number };
  usage: { flushMs: number };
  /** Each source's settings (base URLs, keys, TTLs), by source key; see src/sources/. */
  sources: SourceSettings;
  /** The macro calendar's dates: MACRO_CALENDAR_FILE's, validated, or the shipped file's. */
  macroCalendar: LoadedMacroCalendar;
  /** Prometheus metrics: on when a token or a port of their own is set. */
  metrics: { enabled: boolean; token: string | undefined; port: number | undefined; host: string };
}

type CoreValues = EnvValues<typeof CORE_ENV>;

/** Parses the environment once. Throws ConfigError naming every bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const values = parseEnv(ENV_SPEC, source);
  const e = values as unknown as CoreValues;
  const shownHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const sources = Object.fromEntries(SOURCES.map((d) => [d.key, (d.settings as (v: unknown) => unknown)(values)])) as SourceSettings;
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    connections: {
      maxConnections: e.MAX_CONNECTIONS,
      maxPerIp: e.MAX_CONNECTIONS_PER_IP,
      maxPendingPerIp: e.MAX_PENDING_CONNECTIONS_PER_IP,
      firstByteMs: e.FIRST_BYTE_TIMEOUT_MS,
      newPerIpPerS: e.NEW_CONNECTIONS_PER_IP_PER_S,
    },
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    maxPipelinedRequests: e.MAX_PIPELINED_REQUESTS,
    pressure: {
      maxHeapPercent: e.PRESSURE_MAX_HEAP_PERCENT,
      maxRssBytes: e.PRESSURE_MAX_RSS_MB * 1_048_576,
      maxEventLoopDelayMs: e.PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
      retryAfterS: e.PRESSURE_RETRY_AFTER_S,
    },
    publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://${shownHost}:${e.PORT}`,
    publicBaseUrlGiven: e.PUBLIC_BASE_URL,
    risk: { hostname: e.RISK_HOSTNAME, rateLimitPerMinute: e.RISK_RATE_LIMIT },
    upstream: {
      deadlineMs: e.UPSTREAM_DEADLINE_MS,
      connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      maxBodyBytes: e.UPSTREAM_MAX_BODY_BYTES,
      connections: e.UPSTREAM_CONNECTIONS,
      breakerFailures: e.BREAKER_FAILURES,
      breakerCooldownMs: e.BREAKER_COOLDOWN_MS,
      hedgeDelayMs: e.HEDGE_DELAY_MS,
    },
    cache: { maxEntries: e.CACHE_MAX_ENTRIES, maxBytes: e.CACHE_MAX_BYTES },
    staleness: Object.fromEntries(Object.keys(STALE_ENV).map((name) => [name, e[name as keyof StaleSettings]])) as StaleSettings,
    limits: { freePerMinute: e.FREE_RATE_LIMIT, paidIpPerMinute: e.PAID_IP_RATE_LIMIT },
    keys: {
      raw: (e.API_KEYS ?? '').split(',').map((k) => k.trim()).filter(Boolean),
      file: e.API_KEYS_FILE,
      reloadMs: e.API_KEYS_RELOAD_MS,
      rateLimitPerMinute: e.KEY_RATE_LIMIT,
    },
    operatorContact: e.OPERATOR_CONTACT,
    x402: paymentSettings(values as unknown as PaymentValues, sources.rpcBase.baseUrl),
    db: { dataDir: e.DATA_DIR, url: e.DATABASE_URL, timeoutMs: e.DB_TIMEOUT_MS, openWaitMs: e.DB_OPEN_WAIT_MS },
    redis: { url: e.REDIS_URL, timeoutMs: e.REDIS_TIMEOUT_MS },
    usage: { flushMs: e.USAGE_FLUSH_MS },
    sources,
    macroCalendar: e.MACRO_CALENDAR_FILE ?? BUILT_IN_MACRO_CALENDAR,
    metrics: { enabled: e.METRICS_TOKEN !== undefined || e.METRICS_PORT !== undefined, token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST },
  };
}

/** Every URL the configuration holds (upstreams, facilitator, databases): their secret parts are kept out of logs and pages. */
export function configuredUrls(config: Config): string[] {
  const found: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (typeof value === 'string') {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) found.push(value);
    } else if (value && typeof value === 'object' && depth < 6) {
      for (const v of Object.values(value)) walk(v, depth + 1);
    }
  };
  walk(config, 0);
  return found;
}

/** Hosts that only this machine can reach: advertising http://HOST:PORT is then right. */
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/**
 * The start-up warning for a server reachable from other machines whose public URL is unknown: the agent
 * card, llms.txt, OpenAPI's examples and every 402's resource URL then advertise a loopback address.
 */
export function publicBaseUrlWarning(config: Config): string | undefined {
  if (config.publicBaseUrlGiven || LOOPBACK.test(config.host)) return undefined;
  return (
    `PUBLIC_BASE_URL is unset while listening on ${config.host}: the agent card, llms.txt and the x402 resource URLs advertise ` +
    `${config.publicBaseUrl}, which other machines cannot reach. Set PUBLIC_BASE_URL to the URL clients use (https://api.example.com).`
  );
}
