import { trustProxyWarning } from '../src/edge/trust-proxy.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, ENV_SPEC, loadConfig } from '../src/config.ts';
import { explainConfigError, loadEnvFile, unknownEnvFileNames } from '../src/lib/env.ts';
import { VERSION } from '../src/lib/version.ts';

describe('config', () => {
  it('starts on embedded defaults with no variables at all', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, host: '127.0.0.1', logLevel: 'info', trustProxy: false, publicBaseUrl: 'http://127.0.0.1:3000' });
    expect(c.sources.goplus).toEqual({ baseUrl: 'https://api.gopluslabs.io', accessToken: undefined, ttlS: 60 });
    expect(c.risk).toEqual({ hostname: undefined, rateLimitPerMinute: 60 });
    expect(c.sources.binanceSpot).toEqual({ baseUrl: 'https://api.binance.com', ttl: { price: 5, ohlcv: 30, orderbook: 2, listings: 21600 } });
    expect(c.upstream).toMatchObject({ deadlineMs: 4000, breakerFailures: 5, breakerCooldownMs: 30_000, hedgeDelayMs: 500 });
  });

  it.each([
    ['PORT', 'abc', /PORT="abc" is invalid: expected a whole number from 0 to 65535/],
    ['PORT', '70000', /PORT="70000" is invalid: expected a whole number from 0 to 65535/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL="loud" is invalid: expected one of fatal, error, warn, info, debug, trace, silent/],
    ['TRUST_PROXY', 'maybe?', /TRUST_PROXY="maybe\?" is invalid: expected 'maybe\?' is neither an address nor a range: false, true, or a comma-separated list of proxy addresses, CIDR ranges and the names loopback/],
    // Fastify 5 reads a hop count as "trust no proxy": every client behind the proxy would be one client.
    ['TRUST_PROXY', '1', /TRUST_PROXY="1" is invalid: expected a hop count \(1\) is not accepted: .* Write the proxy's address instead: 127\.0\.0\.1 \(a proxy on this host\), loopback, a CIDR range/],
    ['TRUST_PROXY', '10.0.0.0/33', /TRUST_PROXY="10\.0\.0\.0\/33" is invalid: expected '10\.0\.0\.0\/33' is neither an address nor a range/],
    ['GOPLUS_BASE_URL', 'ftp://x', /GOPLUS_BASE_URL="ftp:\/\/x" is invalid: expected an absolute http\(s\) URL/],
    ['RISK_RATE_LIMIT', '0', /RISK_RATE_LIMIT="0" is invalid/],
    ['RISK_HOSTNAME', 'https://risk.example.com', /RISK_HOSTNAME=.* is invalid: expected a bare host name/],
    ['X402_EXACT_VERIFY', 'sometimes', /X402_EXACT_VERIFY="sometimes" is invalid: expected one of local, facilitator/],
  ])('%s=%s stops start-up naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('X402_EXACT_VERIFY: local by default (a first-seen exact payment is checked here), facilitator when asked', () => {
    expect(loadConfig({}).x402.exactVerify).toBe('local');
    expect(loadConfig({ X402_EXACT_VERIFY: 'facilitator' }).x402.exactVerify).toBe('facilitator');
  });

  it('parses TRUST_PROXY forms', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(loadConfig({ TRUST_PROXY: 'loopback,uniquelocal,fe80::/10' }).trustProxy).toEqual(['loopback', 'uniquelocal', 'fe80::/10']);
  });

  it('warns at start-up that TRUST_PROXY=true lets any client choose its address', () => {
    expect(trustProxyWarning(loadConfig({ TRUST_PROXY: 'true' }).trustProxy)).toMatch(/^TRUST_PROXY=true believes any X-Forwarded-For: unless this port is reachable through the proxy alone, any client can choose its own address/);
    expect(trustProxyWarning(loadConfig({ TRUST_PROXY: '127.0.0.1' }).trustProxy)).toBeUndefined();
  });

  it('every variable the config reads (its own and each source descriptor\'s) is in .env.example with its default', () => {
    const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
    const listed = new Map([...example.matchAll(/^(#\s*)?([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[2], { commented: !!m[1], value: m[3] }]));
    const names = Object.keys(ENV_SPEC);
    expect(names).toEqual(expect.arrayContaining(['PORT', 'GOPLUS_BASE_URL', 'BINANCE_SPOT_BASE_URL', 'CACHE_TTL_PRICE_S', 'UPSTREAM_DEADLINE_MS']));
    for (const name of names) {
      const v = ENV_SPEC[name]!;
      expect(listed.get(name), name).toEqual(v.default !== undefined && !v.secret ? { commented: false, value: v.default } : { commented: true, value: expect.any(String) });
    }
    expect([...listed.keys()].sort()).toEqual([...names].sort());
  });

  it('a source variable is parsed by the descriptor that declares it', () => {
    const c = loadConfig({ BINANCE_SPOT_BASE_URL: 'http://127.0.0.1:9/', CACHE_TTL_PRICE_S: '7', GOPLUS_ACCESS_TOKEN: 'tok' });
    expect(c.sources.binanceSpot).toEqual({ baseUrl: 'http://127.0.0.1:9', ttl: { price: 7, ohlcv: 30, orderbook: 2, listings: 21600 } });
    expect(c.sources.coinbase.ttl.price).toBe(7);
    expect(c.sources.goplus.accessToken).toBe('tok');
    expect(() => loadConfig({ CACHE_TTL_PRICE_S: '-1' })).toThrow('CACHE_TTL_PRICE_S="-1" is invalid: expected a whole number from 0 to 86400');
    expect(() => loadConfig({ CDP_API_KEY_SECRET: '' })).not.toThrow();
  });

  it('VERSION matches package.json', () => {
    expect(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version).toBe(VERSION);
  });
});

describe('.env (loadEnvFile)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-dotenv-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fills in what the environment does not set; the environment wins, even an empty value', () => {
    const file = join(dir, 'a.env');
    writeFileSync(file, '# a comment\nLOG_LEVEL=error\nFREE_RATE_LIMIT="7"\nPORT=1\nHOST=\nexport_not=x y\n');
    const target: NodeJS.ProcessEnv = { PORT: '0', HOST: '' };
    const loaded = loadEnvFile(file, target);
    expect(loaded?.path).toBe(file);
    expect(loaded?.names).toEqual(['FREE_RATE_LIMIT', 'LOG_LEVEL', 'export_not']);
    expect(target).toEqual({ PORT: '0', HOST: '', LOG_LEVEL: 'error', FREE_RATE_LIMIT: '7', export_not: 'x y' });
    expect(loadConfig(target)).toMatchObject({ port: 0, host: '127.0.0.1', logLevel: 'error', limits: { freePerMinute: 7 } });
  });

  it('a bad value from the file stops start-up naming the variable and the file', () => {
    const file = join(dir, 'b.env');
    writeFileSync(file, 'FREE_RATE_LIMIT=abc\n');
    const target: NodeJS.ProcessEnv = {};
    const loaded = loadEnvFile(file, target);
    let error: unknown;
    try {
      loadConfig(target);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(explainConfigError(error as ConfigError, loaded)).toBe(
      `invalid configuration:\n  FREE_RATE_LIMIT="abc" is invalid: expected a whole number from 1 to 1000000\n  (FREE_RATE_LIMIT set in ${file}; the environment overrides it)`,
    );
  });

  it('ENV_FILE names another file; ENV_FILE empty reads none', () => {
    const file = join(dir, 'c.env');
    writeFileSync(file, 'LOG_LEVEL=warn\n');
    const target: NodeJS.ProcessEnv = { ENV_FILE: file };
    expect(loadEnvFile(undefined, target)).toEqual({ path: file, names: ['LOG_LEVEL'], given: ['LOG_LEVEL'] });
    expect(target.LOG_LEVEL).toBe('warn');
    const none: NodeJS.ProcessEnv = { ENV_FILE: '' };
    expect(loadEnvFile(undefined, none)).toBeUndefined();
    expect(none).toEqual({ ENV_FILE: '' });
  });

  it('a name no setting declares is a warning naming it and the nearest setting; known names and Node\'s own are not', () => {
    const file = join(dir, 'typo.env');
    writeFileSync(file, 'PROT=3999\nLOG_LEVEL=warn\nNODE_ENV=production\nFREE_RATE_LIMT=5\nSOMETHING_ELSE=1\n');
    const loaded = loadEnvFile(file, { LOG_LEVEL: 'info' })!;
    expect(loaded.given).toEqual(['FREE_RATE_LIMT', 'LOG_LEVEL', 'NODE_ENV', 'PROT', 'SOMETHING_ELSE']);
    expect(unknownEnvFileNames(loaded, ENV_SPEC)).toBe(
      `${file} sets FREE_RATE_LIMT (did you mean FREE_RATE_LIMIT?), PROT (did you mean PORT?), SOMETHING_ELSE, which no setting of this server declares: ignored. Every setting: docs/operating/configuration.md`,
    );
    writeFileSync(file, 'PORT=3999\nNODE_ENV=production\n');
    expect(unknownEnvFileNames(loadEnvFile(file, {})!, ENV_SPEC)).toBeUndefined();
  });

  it('no file: nothing read; a path that cannot be read: a ConfigError saying so', () => {
    expect(loadEnvFile(join(dir, 'none.env'), {})).toBeUndefined();
    expect(() => loadEnvFile(dir, {})).toThrow(new ConfigError(`invalid configuration:\n  ${dir} cannot be read (EISDIR)`));
  });
});
