import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../src/config.ts';
import { VERSION } from '../src/version.ts';

describe('config', () => {
  it('starts on embedded defaults with no variables at all', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, host: '127.0.0.1', logLevel: 'info', trustProxy: false, publicBaseUrl: 'http://127.0.0.1:3000' });
    expect(c.goplus).toEqual({ baseUrl: 'https://api.gopluslabs.io', accessToken: undefined });
    expect(c.risk).toEqual({ hostname: undefined, rateLimitPerMinute: 60, cacheTtlS: 60 });
  });

  it.each([
    ['PORT', 'abc', /PORT="abc" is invalid: expected a whole number from 0 to 65535/],
    ['PORT', '70000', /PORT="70000" is invalid: expected a whole number from 0 to 65535/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL="loud" is invalid: expected one of fatal, error, warn, info, debug, trace, silent/],
    ['TRUST_PROXY', 'maybe?', /TRUST_PROXY="maybe\?" is invalid: expected true, false, a hop count/],
    ['GOPLUS_BASE_URL', 'ftp://x', /GOPLUS_BASE_URL="ftp:\/\/x" is invalid: expected an absolute http\(s\) URL/],
    ['RISK_RATE_LIMIT', '0', /RISK_RATE_LIMIT="0" is invalid/],
    ['RISK_HOSTNAME', 'https://risk.example.com', /RISK_HOSTNAME=.* is invalid: expected a bare host name/],
  ])('%s=%s stops start-up naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('parses TRUST_PROXY forms', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
  });

  it('every variable the config reads is listed in .env.example', () => {
    const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
    const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    const source = readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');
    const read = [...source.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]);
    expect(read.length).toBeGreaterThan(10);
    for (const name of read) expect(listed.has(name), name).toBe(true);
  });

  it('VERSION matches package.json', () => {
    expect(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version).toBe(VERSION);
  });
});
