// Every setting comes from the environment, is parsed here once, and the rest of the app
// only ever sees the typed result. An invalid value stops start-up with a message that names
// the variable and says what it accepts.
import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const int = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `a whole number from ${min} to ${max}`).max(max, `a whole number from ${min} to ${max}`));

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'an absolute http(s) URL')
  .transform((v) => v.replace(/\/+$/, ''));

const bool = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no'].includes(v), 'true or false')
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/**
 * TRUST_PROXY: `false` (default: use the socket address), `true` (trust every hop),
 * a hop count, or a comma-separated list of proxy IPs / CIDRs.
 */
const trustProxy = z
  .string()
  .trim()
  .transform((v, ctx): boolean | number | string[] => {
    const lower = v.toLowerCase();
    if (lower === 'false' || lower === '0' || lower === '') return false;
    if (lower === 'true') return true;
    if (/^\d+$/.test(v)) return Number(v);
    const list = v.split(',').map((s) => s.trim()).filter(Boolean);
    if (list.every((s) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(s))) return list;
    ctx.addIssue({ code: 'custom', message: 'true, false, a hop count, or a comma-separated list of IPs/CIDRs' });
    return z.NEVER;
  });

const hostname = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v) => (v === '' ? undefined : v))
  .refine((v) => v === undefined || /^[a-z0-9.-]+$/.test(v), 'a bare host name such as risk.example.com (no scheme, no port)')
  .optional();

/** Environment variable name → parser, with the default applied when the variable is unset. */
const envSchema = z.object({
  PORT: int(0, 65535).default(3000),
  HOST: z.string().trim().min(1, 'an interface address such as 127.0.0.1 or 0.0.0.0').default('127.0.0.1'),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  TRUST_PROXY: trustProxy.default(false),
  PUBLIC_BASE_URL: httpUrl.optional(),
  RISK_HOSTNAME: hostname,
  RISK_RATE_LIMIT: int(1, 1_000_000).default(60),

  UPSTREAM_CONNECT_TIMEOUT_MS: int(1, 120_000).default(3000),
  UPSTREAM_HEADERS_TIMEOUT_MS: int(1, 120_000).default(8000),
  UPSTREAM_BODY_TIMEOUT_MS: int(1, 300_000).default(15_000),
  UPSTREAM_MAX_BODY_BYTES: int(1024, 256 * 1024 * 1024).default(16 * 1024 * 1024),
  UPSTREAM_CONNECTIONS: int(1, 1024).default(16),

  CACHE_MAX_ENTRIES: int(1, 10_000_000).default(10_000),
  CACHE_TTL_TOKEN_RISK_S: int(0, 86_400).default(60),

  GOPLUS_BASE_URL: httpUrl.default('https://api.gopluslabs.io'),
  GOPLUS_ACCESS_TOKEN: optionalText,

  // interface B: access
  API_KEYS: optionalText,
  API_KEYS_FILE: z.string().trim().min(1, 'a file path').default('./data/api-keys.json'),
  API_KEYS_RELOAD_MS: int(100, 3_600_000).default(2000),
  KEY_RATE_LIMIT: int(1, 1_000_000).default(120),
  X402_ENABLED: bool.default(true),
  X402_NETWORK: z
    .string()
    .trim()
    .refine((v) => v in X402_NETWORKS || /^eip155:\d+$/.test(v), `base, base-sepolia, or a CAIP-2 id eip155:<chain id>`)
    .default('base'),
  X402_PRICE: z.string().trim().regex(/^\$\d+(\.\d+)?$/, 'a dollar price such as $0.001').default('$0.001'),
  X402_PAY_TO: z.string().trim().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address (0x + 40 hex)').optional(),
  X402_ASSET: z.string().trim().regex(/^0x[0-9a-fA-F]{40}$/, 'an ERC-20 token address (0x + 40 hex)').optional(),
  X402_FACILITATOR: z
    .string()
    .trim()
    .refine((v) => v === 'coinbase-cdp' || /^https?:\/\/\S+$/.test(v), 'coinbase-cdp or the http(s) URL of an x402 facilitator')
    .default('coinbase-cdp'),
  X402_ASSET_DECIMALS: int(0, 36).default(6),
  X402_ASSET_NAME: z.string().trim().min(1, "the token's EIP-712 domain name").optional(),
  X402_ASSET_VERSION: z.string().trim().min(1, "the token's EIP-712 domain version").default('2'),
  X402_MAX_TIMEOUT_S: int(10, 3600).default(60),
  X402_FACILITATOR_TIMEOUT_MS: int(100, 120_000).default(10_000),
  CDP_API_KEY_ID: optionalText,
  CDP_API_KEY_SECRET: optionalText,

  // interface B: exchange data
  BINANCE_SPOT_BASE_URL: httpUrl.default('https://api.binance.com'),
  BINANCE_FUTURES_BASE_URL: httpUrl.default('https://fapi.binance.com'),
  BYBIT_BASE_URL: httpUrl.default('https://api.bybit.com'),
  COINBASE_BASE_URL: httpUrl.default('https://api.exchange.coinbase.com'),
  KRAKEN_BASE_URL: httpUrl.default('https://api.kraken.com'),
  HYPERLIQUID_BASE_URL: httpUrl.default('https://api.hyperliquid.xyz'),
  YAHOO_BASE_URL: httpUrl.default('https://query1.finance.yahoo.com'),
  CACHE_TTL_PRICE_S: int(0, 86_400).default(5),
  CACHE_TTL_OHLCV_S: int(0, 86_400).default(30),
  CACHE_TTL_DERIVATIVES_S: int(0, 86_400).default(30),
  CACHE_TTL_ORDERBOOK_S: int(0, 86_400).default(2),
  CACHE_TTL_PERPDEX_S: int(0, 86_400).default(10),
});

/** x402 networks by short name → CAIP-2 id and that network's USDC. */
export const X402_NETWORKS: Record<string, { caip2: `eip155:${number}`; usdc: `0x${string}`; usdcName: string }> = {
  base: { caip2: 'eip155:8453', usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', usdcName: 'USD Coin' },
  'base-sepolia': { caip2: 'eip155:84532', usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', usdcName: 'USDC' },
};

export type Env = z.output<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  logLevel: (typeof LOG_LEVELS)[number];
  trustProxy: boolean | number | string[];
  /** Used in generated docs and the agent card; derived from HOST/PORT when unset. */
  publicBaseUrl: string;
  risk: { hostname: string | undefined; rateLimitPerMinute: number; cacheTtlS: number };
  upstream: {
    connectTimeoutMs: number;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    maxBodyBytes: number;
    connections: number;
  };
  cache: { maxEntries: number };
  goplus: { baseUrl: string; accessToken: string | undefined };
  keys: { raw: string[]; file: string; reloadMs: number; rateLimitPerMinute: number };
  x402: {
    enabled: boolean;
    /** CAIP-2 network id, e.g. eip155:8453. */
    network: `eip155:${number}`;
    price: string;
    payTo: `0x${string}` | undefined;
    /** The token paid in, with what its EIP-712 domain and atomic units need. */
    asset: { address: `0x${string}`; decimals: number; name: string; version: string } | undefined;
    maxTimeoutS: number;
    facilitatorTimeoutMs: number;
    facilitator: 'coinbase-cdp' | string;
    cdp: { keyId: string | undefined; keySecret: string | undefined };
  };
  sources: {
    binanceSpot: string;
    binanceFutures: string;
    bybit: string;
    coinbase: string;
    kraken: string;
    hyperliquid: string;
    yahoo: string;
  };
  /** Cache TTL per kind of data, seconds. */
  ttl: { price: number; ohlcv: number; derivatives: number; orderbook: number; perpdex: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment once. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings count as unset so `FOO=` in an env file means "use the default".
  const present = Object.fromEntries(
    Object.keys(envSchema.shape)
      .map((k) => [k, env[k]] as const)
      .filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? '?');
      return `${name}=${JSON.stringify(env[name] ?? '')} is invalid: expected ${i.message}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
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
  const shownHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://${shownHost}:${e.PORT}`,
    risk: { hostname: e.RISK_HOSTNAME, rateLimitPerMinute: e.RISK_RATE_LIMIT, cacheTtlS: e.CACHE_TTL_TOKEN_RISK_S },
    upstream: {
      connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: e.UPSTREAM_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: e.UPSTREAM_BODY_TIMEOUT_MS,
      maxBodyBytes: e.UPSTREAM_MAX_BODY_BYTES,
      connections: e.UPSTREAM_CONNECTIONS,
    },
    cache: { maxEntries: e.CACHE_MAX_ENTRIES },
    goplus: { baseUrl: e.GOPLUS_BASE_URL, accessToken: e.GOPLUS_ACCESS_TOKEN },
    keys: {
      raw: (e.API_KEYS ?? '').split(',').map((k) => k.trim()).filter(Boolean),
      file: e.API_KEYS_FILE,
      reloadMs: e.API_KEYS_RELOAD_MS,
      rateLimitPerMinute: e.KEY_RATE_LIMIT,
    },
    x402: {
      enabled: e.X402_ENABLED,
      network: X402_NETWORKS[e.X402_NETWORK]?.caip2 ?? (e.X402_NETWORK as `eip155:${number}`),
      price: e.X402_PRICE,
      payTo: e.X402_PAY_TO as `0x${string}` | undefined,
      asset: resolveAsset(e),
      maxTimeoutS: e.X402_MAX_TIMEOUT_S,
      facilitatorTimeoutMs: e.X402_FACILITATOR_TIMEOUT_MS,
      facilitator: e.X402_FACILITATOR,
      cdp: { keyId: e.CDP_API_KEY_ID, keySecret: e.CDP_API_KEY_SECRET },
    },
    sources: {
      binanceSpot: e.BINANCE_SPOT_BASE_URL,
      binanceFutures: e.BINANCE_FUTURES_BASE_URL,
      bybit: e.BYBIT_BASE_URL,
      coinbase: e.COINBASE_BASE_URL,
      kraken: e.KRAKEN_BASE_URL,
      hyperliquid: e.HYPERLIQUID_BASE_URL,
      yahoo: e.YAHOO_BASE_URL,
    },
    ttl: {
      price: e.CACHE_TTL_PRICE_S,
      ohlcv: e.CACHE_TTL_OHLCV_S,
      derivatives: e.CACHE_TTL_DERIVATIVES_S,
      orderbook: e.CACHE_TTL_ORDERBOOK_S,
      perpdex: e.CACHE_TTL_PERPDEX_S,
    },
  };
}

/** X402_ASSET when set; else the USDC of a known network (USDC: 6 decimals, EIP-712 version 2). */
function resolveAsset(e: Env): Config['x402']['asset'] {
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
