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
});

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
  };
}
