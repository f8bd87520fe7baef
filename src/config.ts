// Every setting comes from the environment, is parsed here once, and the rest of the app only ever
// sees the typed result. The variables are declared as data (src/lib/env.ts): the server's own below,
// each provider's in its source descriptor (src/sources/). An invalid value stops start-up with a
// message that names the variable and says what it accepts.
import { z } from 'zod';
import { BUILT_IN_MACRO_CALENDAR, MACRO_CALENDAR_FILE_ENV, type LoadedMacroCalendar } from './data/macro-calendar.ts';
import { X402_NETWORKS } from './payments/networks.ts';
import { contactSchema } from './access/keys/key-contact.ts';
import { KEYS_ENV } from './access/keys/keys-env.ts';
import { DATABASE_ENV } from './db/env.ts';
import { REDIS_ENV } from './redis/env.ts';
import type { DatabaseSettings } from './db/open.ts';
import { atomicAmount } from './payments/price.ts';
import { ConfigError, env, mergeEnvSpecs, parseEnv, type EnvSpec, type EnvValues } from './lib/env.ts';
import { SOURCES, type SourceSettings } from './sources/index.ts';

export { ConfigError } from './lib/env.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export { X402_NETWORKS };

/**
 * TRUST_PROXY: `false` (default: use the socket address), `true` (trust every hop),
 * a hop count, or a comma-separated list of proxy IPs / CIDRs.
 */
const trustProxy = z.string().transform((v, ctx): boolean | number | string[] => {
  const lower = v.toLowerCase();
  if (lower === 'false' || lower === '0') return false;
  if (lower === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length && list.every((s) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(s))) return list;
  ctx.addIssue({ code: 'custom', message: 'true, false, a hop count, or a comma-separated list of IPs/CIDRs' });
  return z.NEVER;
});

const hostname = z
  .string()
  .toLowerCase()
  .refine((v) => /^[a-z0-9.-]+$/.test(v), 'a bare host name such as risk.example.com (no scheme, no port)');

const evmAddress = (what: string) =>
  z
    .string()
    .regex(/^0[xX][0-9a-fA-F]{40}$/, `${what} (0x + 40 hex)`)
    .transform((v) => `0x${v.slice(2)}`);

/** The server's own variables, by section (the sections head `.env.example`). */
export const CORE_ENV_SECTIONS = {
  server: {
    PORT: env.int(0, 65535, 3000, 'TCP port to listen on.'),
    HOST: env.text('127.0.0.1', 'Interface to bind (the Dockerfile sets 0.0.0.0).', 'an interface address such as 127.0.0.1 or 0.0.0.0'),
    LOG_LEVEL: env.oneOf(LOG_LEVELS, 'info', 'Log level (pino); logs are JSON lines with a reqId.'),
    TRUST_PROXY: env.custom(trustProxy, 'false', 'Client IP behind proxies: false, true, a hop count, or comma-separated proxy IPs/CIDRs.'),
    REQUEST_TIMEOUT_MS: env.int(1000, 600_000, 30_000, 'A client must have sent its whole request within this long (ms), else it gets 408 (slow-client protection).'),
    PUBLIC_BASE_URL: env.optionalUrl(
      "The URL clients reach this server at: in the agent card, llms.txt and x402's resource URLs (unset: http://HOST:PORT), and as OpenAPI's server (unset: /, the origin /docs was loaded from).",
      'https://api.example.com',
    ),
    MAX_PIPELINED_REQUESTS: env.int(
      1,
      10_000,
      32,
      'Requests one connection may have waiting behind the one being answered (HTTP/1.1 pipelining): they are answered one at a time and the connection is not read meanwhile; one more closes it.',
    ),
  },
  'load shedding (503 with Retry-After under pressure)': {
    PRESSURE_MAX_HEAP_PERCENT: env.int(0, 100, 90, "Every request is answered 503 while the JavaScript heap in use is above this share of V8's heap limit (0 = not checked)."),
    PRESSURE_MAX_RSS_MB: env.int(0, 1_048_576, 0, "Every request is answered 503 while the process's resident memory is above this many MB (0 = not checked; set it below a container's memory limit)."),
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: env.int(0, 600_000, 1000, 'Every request is answered 503 while the event loop has been late by more than this on average in each of the last 3 seconds (ms; 0 = not checked).'),
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
    X402_ENABLED: env.bool(true, 'x402 pay-per-call on paid routes (active only once X402_PAY_TO is set).'),
    X402_NETWORK: env.custom(
      z.string().refine((v) => v in X402_NETWORKS || /^eip155:\d+$/.test(v), 'base, base-sepolia, or a CAIP-2 id eip155:<chain id>'),
      'base',
      'base (eip155:8453), base-sepolia (eip155:84532), or any eip155:<chain id> (then X402_ASSET is required).',
    ),
    X402_PRICE: env.custom(z.string().regex(/^\$\d+(\.\d+)?$/, 'a dollar price such as $0.001'), '$0.001', 'Price of one paid call.'),
    X402_PAY_TO: env.custom(evmAddress('an EVM address'), undefined, 'Address that receives payments; while unset, paid routes need an API key.', { example: '0x...' }),
    X402_ASSET: env.custom(evmAddress('an ERC-20 token address'), undefined, 'Token paid in (default: USDC of X402_NETWORK).', { example: '0x...' }),
    X402_ASSET_DECIMALS: env.int(0, 36, 6, 'Decimals of X402_ASSET ($0.001 = 1000 units at 6).'),
    X402_ASSET_NAME: env.optionalText("EIP-712 domain name of X402_ASSET (required for a token other than the network's USDC).", 'USD Coin'),
    X402_ASSET_VERSION: env.text('2', 'EIP-712 domain version of X402_ASSET.', "the token's EIP-712 domain version"),
    X402_MAX_TIMEOUT_S: env.int(
      10,
      3600,
      60,
      'Seconds a payment authorization stays valid (maxTimeoutSeconds of every 402); an authorization valid for longer (beyond 30 s of clock skew) is refused.',
    ),
    X402_FACILITATOR_TIMEOUT_MS: env.int(100, 120_000, 10_000, 'Timeout of each facilitator verify and /supported call (ms); a facilitator that does not answer them is a 503 (nothing was taken).'),
    X402_SETTLE_TIMEOUT_MS: env.int(
      1000,
      3_600_000,
      60_000,
      "How long a settle sent to the facilitator is listened to (ms), never past the payment's authorization (validBefore); after that the chain says whether the transfer landed. A settle is never answered 'try again later'.",
    ),
    X402_RPC_URL: env.optionalUrl(
      "JSON-RPC endpoint of X402_NETWORK, where the server reads a payment's EIP-3009 authorizationState when the facilitator did not tell the outcome (default: RPC_URL_BASE on base, https://sepolia.base.org on base-sepolia; other networks: none, and such outcomes stay 'unknown' for npm run payments -- resolve).",
      'https://mainnet.base.org',
    ),
    X402_RECONCILE_INTERVAL_S: env.int(
      1,
      86_400,
      60,
      "Seconds between the server's passes over ledger rows left 'verified' or 'unknown' (a crash, a restart, an unreachable facilitator), settled or closed from what the chain says; also run at start-up.",
    ),
    X402_FACILITATOR: env.custom(
      z.string().refine((v) => v === 'coinbase-cdp' || /^https?:\/\/\S+$/.test(v), 'coinbase-cdp or the http(s) URL of an x402 facilitator'),
      'coinbase-cdp',
      'coinbase-cdp (needs CDP_API_KEY_ID/CDP_API_KEY_SECRET) or the URL of any x402 facilitator.',
    ),
    X402_PREFETCH: env.bool(
      true,
      "Start a paid route's upstream work while the facilitator verifies the payment (its answer is held, never sent, until the payment is verified); false: only after.",
    ),
    X402_BATCH_SETTLEMENT: env.bool(
      false,
      "Also offer x402 batch-settlement (one deposit, then a signed voucher per call, claimed and settled in batches) beside exact, when the facilitator's /supported lists it.",
    ),
    X402_BATCH_DEPOSIT: env.custom(
      z.string().regex(/^\$\d+(\.\d+)?$/, 'a dollar amount such as $0.10'),
      '$0.10',
      'Deposit a batch-settlement channel is asked to hold when it opens or runs dry (at least X402_PRICE; clients may cap it lower).',
    ),
    X402_BATCH_WITHDRAW_DELAY_S: env.int(900, 2_592_000, 900, "Seconds a payer's timed withdrawal of unclaimed deposit waits before it can complete (15 min to 30 days)."),
    X402_BATCH_CLAIM_INTERVAL_S: env.int(
      1,
      864_000,
      300,
      'Seconds between claim-and-settle runs; at most a third of X402_BATCH_WITHDRAW_DELAY_S, so vouchers are claimed before a withdrawal can complete.',
    ),
    X402_BATCH_AUTHORIZER_KEY: env.custom(
      z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a private key, 0x + 64 hex'),
      undefined,
      "Private key of this server's batch-settlement receiver authorizer (signs claims and refunds; holds no funds). Unset: the facilitator's advertised receiverAuthorizer signs them.",
      { secret: true },
    ),
    CDP_API_KEY_ID: env.secret('Coinbase Developer Platform API key id, for the coinbase-cdp facilitator.'),
    CDP_API_KEY_SECRET: env.secret('Coinbase Developer Platform API key secret, for the coinbase-cdp facilitator.'),
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
  trustProxy: boolean | number | string[];
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
  limits: { freePerMinute: number; paidIpPerMinute: number };
  keys: { raw: string[]; file: string; reloadMs: number; rateLimitPerMinute: number };
  /** OPERATOR_CONTACT: where clients ask for an API key (an email address or a URL); undefined = unset. */
  operatorContact: string | undefined;
  x402: {
    /** Enabled and a payee set: paid routes take x402 payments. */
    active: boolean;
    enabled: boolean;
    /** CAIP-2 network id, e.g. eip155:8453. */
    network: `eip155:${number}`;
    price: string;
    payTo: `0x${string}` | undefined;
    /** The token paid in, with what its EIP-712 domain and atomic units need. */
    asset: { address: `0x${string}`; decimals: number; name: string; version: string } | undefined;
    maxTimeoutS: number;
    /** Verify and /supported calls. */
    facilitatorTimeoutMs: number;
    /** How long a settle is listened to (within its authorization's validBefore). */
    settleTimeoutMs: number;
    /** JSON-RPC of the payment network, where unknown outcomes are read (authorizationState); undefined: not read. */
    rpcUrl: string | undefined;
    /** Seconds between passes of the ledger's reconciliation from the chain. */
    reconcileIntervalS: number;
    facilitator: 'coinbase-cdp' | string;
    /** Start the route's work while the facilitator verifies (the answer held until the grant). */
    prefetch: boolean;
    cdp: { keyId: string | undefined; keySecret: string | undefined };
    /** batch-settlement beside exact (see src/payments/batch/batch-settlement.ts). */
    batch: {
      enabled: boolean;
      /** Dollar amount a channel is asked to hold, e.g. "$0.10". */
      deposit: string;
      withdrawDelayS: number;
      claimIntervalS: number;
      /** This server's receiver-authorizer key; unset = delegate to the facilitator's. */
      authorizerKey: `0x${string}` | undefined;
    };
  };
  /** The ledger database: PGlite in DATA_DIR, or the PostgreSQL server at DATABASE_URL. */
  db: DatabaseSettings;
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
  const x402Active = e.X402_ENABLED && e.X402_PAY_TO !== undefined;
  if (x402Active && !X402_NETWORKS[e.X402_NETWORK] && !e.X402_ASSET) {
    throw new ConfigError(`invalid configuration:\n  X402_ASSET is required when X402_NETWORK=${e.X402_NETWORK} (no default USDC for that network)`);
  }
  const knownUsdc = X402_NETWORKS[e.X402_NETWORK]?.usdc.toLowerCase();
  if (x402Active && e.X402_ASSET && e.X402_ASSET.toLowerCase() !== knownUsdc && !e.X402_ASSET_NAME) {
    throw new ConfigError("invalid configuration:\n  X402_ASSET_NAME is required with a custom X402_ASSET (the token's EIP-712 domain name)");
  }
  if (x402Active && e.X402_FACILITATOR === 'coinbase-cdp' && !(e.CDP_API_KEY_ID && e.CDP_API_KEY_SECRET)) {
    throw new ConfigError(
      'invalid configuration:\n  X402_FACILITATOR=coinbase-cdp needs CDP_API_KEY_ID and CDP_API_KEY_SECRET (or set X402_FACILITATOR to a facilitator URL)',
    );
  }
  if (x402Active && e.X402_BATCH_SETTLEMENT) checkBatchSettlement(e);
  const shownHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const sources = Object.fromEntries(SOURCES.map((d) => [d.key, (d.settings as (v: unknown) => unknown)(values)])) as SourceSettings;
  const network = X402_NETWORKS[e.X402_NETWORK]?.caip2 ?? (e.X402_NETWORK as `eip155:${number}`);
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
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
    limits: { freePerMinute: e.FREE_RATE_LIMIT, paidIpPerMinute: e.PAID_IP_RATE_LIMIT },
    keys: {
      raw: (e.API_KEYS ?? '').split(',').map((k) => k.trim()).filter(Boolean),
      file: e.API_KEYS_FILE,
      reloadMs: e.API_KEYS_RELOAD_MS,
      rateLimitPerMinute: e.KEY_RATE_LIMIT,
    },
    operatorContact: e.OPERATOR_CONTACT,
    x402: {
      active: x402Active,
      enabled: e.X402_ENABLED,
      network,
      price: e.X402_PRICE,
      payTo: e.X402_PAY_TO as `0x${string}` | undefined,
      asset: resolveAsset(e),
      maxTimeoutS: e.X402_MAX_TIMEOUT_S,
      facilitatorTimeoutMs: e.X402_FACILITATOR_TIMEOUT_MS,
      settleTimeoutMs: e.X402_SETTLE_TIMEOUT_MS,
      rpcUrl: e.X402_RPC_URL ?? defaultPaymentRpc(network, sources),
      reconcileIntervalS: e.X402_RECONCILE_INTERVAL_S,
      facilitator: e.X402_FACILITATOR,
      prefetch: e.X402_PREFETCH,
      cdp: { keyId: e.CDP_API_KEY_ID, keySecret: e.CDP_API_KEY_SECRET },
      batch: {
        enabled: e.X402_BATCH_SETTLEMENT,
        deposit: e.X402_BATCH_DEPOSIT,
        withdrawDelayS: e.X402_BATCH_WITHDRAW_DELAY_S,
        claimIntervalS: e.X402_BATCH_CLAIM_INTERVAL_S,
        authorizerKey: e.X402_BATCH_AUTHORIZER_KEY as `0x${string}` | undefined,
      },
    },
    db: { dataDir: e.DATA_DIR, url: e.DATABASE_URL, timeoutMs: e.DB_TIMEOUT_MS },
    redis: { url: e.REDIS_URL, timeoutMs: e.REDIS_TIMEOUT_MS },
    usage: { flushMs: e.USAGE_FLUSH_MS },
    sources,
    macroCalendar: e.MACRO_CALENDAR_FILE ?? BUILT_IN_MACRO_CALENDAR,
    metrics: { enabled: e.METRICS_TOKEN !== undefined || e.METRICS_PORT !== undefined, token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST },
  };
}

/**
 * A voucher is only money once claimed, and a payer's timed withdrawal completes after the withdraw delay:
 * claim runs at most a third of that delay apart meet any withdrawal at least twice before it completes.
 */
function checkBatchSettlement(e: CoreValues): void {
  if (e.X402_BATCH_CLAIM_INTERVAL_S * 3 > e.X402_BATCH_WITHDRAW_DELAY_S) {
    throw new ConfigError(
      `invalid configuration:\n  X402_BATCH_CLAIM_INTERVAL_S=${e.X402_BATCH_CLAIM_INTERVAL_S} must be at most a third of X402_BATCH_WITHDRAW_DELAY_S=${e.X402_BATCH_WITHDRAW_DELAY_S} (vouchers must be claimed before a payer's withdrawal can complete)`,
    );
  }
  const decimals = resolveAsset(e)?.decimals ?? 6;
  let deposit: bigint;
  let price: bigint;
  try {
    deposit = BigInt(atomicAmount(e.X402_BATCH_DEPOSIT, decimals));
    price = BigInt(atomicAmount(e.X402_PRICE, decimals));
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  X402_BATCH_DEPOSIT=${e.X402_BATCH_DEPOSIT}: ${(err as Error).message}`);
  }
  if (deposit < price) {
    throw new ConfigError(`invalid configuration:\n  X402_BATCH_DEPOSIT=${e.X402_BATCH_DEPOSIT} must be at least X402_PRICE=${e.X402_PRICE}`);
  }
}

/** The RPC the chain routes use for Base (RPC_URL_BASE); Base Sepolia's public RPC; none for other networks. */
function defaultPaymentRpc(network: string, sources: SourceSettings): string | undefined {
  if (network === X402_NETWORKS.base!.caip2) return sources.rpcBase.baseUrl;
  if (network === X402_NETWORKS['base-sepolia']!.caip2) return 'https://sepolia.base.org';
  return undefined;
}

/** X402_ASSET when set; else the USDC of a known network (USDC: 6 decimals, EIP-712 version 2). */
function resolveAsset(e: CoreValues): Config['x402']['asset'] {
  const known = X402_NETWORKS[e.X402_NETWORK];
  if (e.X402_ASSET) {
    const isKnownUsdc = known && e.X402_ASSET.toLowerCase() === known.usdc.toLowerCase();
    return {
      address: e.X402_ASSET as `0x${string}`,
      decimals: e.X402_ASSET_DECIMALS,
      // Checked at load: a token other than a known USDC must name its EIP-712 domain.
      name: e.X402_ASSET_NAME ?? (isKnownUsdc ? known.usdcName : ''),
      version: e.X402_ASSET_VERSION,
    };
  }
  return known ? { address: known.usdc, decimals: 6, name: known.usdcName, version: '2' } : undefined;
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
