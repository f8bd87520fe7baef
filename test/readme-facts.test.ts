// Statements of the README and the docs that the repository itself can check: what the suite needs installed,
// how settings behave, which Node versions are supported.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync('README.md', 'utf8');
const testing = readFileSync('docs/developing/testing.md', 'utf8');
const providers = readFileSync('docs/using/providers.md', 'utf8');
const instances = readFileSync('docs/operating/several-instances.md', 'utf8');
/** The text with its line breaks and comment marks as single spaces: a statement wraps anywhere. */
const words = (text: string) => text.replace(/[#\s]+/g, ' ');

describe('how the tests run (docs/developing/testing.md)', () => {
  it("names every system package .ci/run installs for the tests in its apt-get line", () => {
    const ci = readFileSync('.ci/run', 'utf8');
    const packages = [...ci.matchAll(/missing\+=\(([\w.-]+)\)/g)].map((m) => m[1]!);
    expect(packages).toEqual(expect.arrayContaining(['chromium', 'postgresql', 'redis-server']));
    const install = /`apt-get install -y ([^`]+)`/.exec(testing)?.[1]?.split(/\s+/);
    expect(install).toBeDefined();
    expect(install!.sort()).toEqual([...packages].sort());
  });
});

describe('.env, as the README and .env.example describe it', () => {
  it('both say that .env is read at start-up and that the environment takes precedence', () => {
    const example = words(readFileSync('.env.example', 'utf8').split('\n').slice(0, 6).join('\n'));
    expect(example).toContain('read .env in their working directory at start-up');
    expect(example).toContain('a variable set in the environment takes precedence over the file');
    expect(words(readme)).toContain('A `.env` file in the working directory');
    expect(words(readme)).toContain('a variable set in the environment takes precedence over the file');
  });
});

describe('settings described as they behave', () => {
  const example = readFileSync('.env.example', 'utf8');
  const docOf = (name: string) => new RegExp(`# (.*)\\n#? ?${name}=`).exec(example)?.[1] ?? '';
  const rowOf = (name: string) => readme.split('\n').find((l) => l.startsWith(`| \`${name}\``)) ?? '';

  it('PUBLIC_BASE_URL: both defaults (http://HOST:PORT where it is advertised, / as OpenAPI\'s server), the same in .env.example and the README', () => {
    for (const text of [docOf('PUBLIC_BASE_URL'), rowOf('PUBLIC_BASE_URL')]) {
      expect(text).toMatch(/agent card, `?llms\.txt`? and x402's resource URLs \(unset: `?http:\/\/HOST:PORT`?\)/);
      expect(text).toMatch(/as OpenAPI's server \(unset: `?\/`?,/);
    }
  });

  it('the breaker: interface A answers 502 where interface B answers 503', () => {
    expect(docOf('BREAKER_FAILURES')).toContain('503 on interface B, 502 on interface A');
    expect(words(providers)).toContain('consecutive failures calls fail fast for `BREAKER_COOLDOWN_MS` (503 with `Retry-After` on interface B; 502 with `Retry-After` on interface A');
  });
});

describe('key revocations across instances', () => {
  it('the several-instances page states both cases: with REDIS_URL where the CLI runs, within 1 s; without, within API_KEYS_RELOAD_MS', () => {
    const row = instances.split('\n').find((l) => l.startsWith('| API keys |')) ?? '';
    expect(row).toContain('within 1 s of `npm run keys -- revoke` returning when the CLI has `REDIS_URL` too');
    expect(row).toContain('without it, within `API_KEYS_RELOAD_MS`');
  });
});

describe('Node versions', () => {
  it('the docs state the supported, recommended and tested versions as package.json and the Dockerfile have them', () => {
    const engines = JSON.parse(readFileSync('package.json', 'utf8')).engines.node;
    expect(engines).toBe('>=20.18.1');
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(/^FROM node:22-/m);
    expect(words(readme)).toContain('**Node versions:** Node 22 is recommended');
    const text = words(testing);
    expect(text).toContain('**Supported:** Node 20 from 20.18.1 (`engines` in package.json), and Node 22 and later. **Recommended: Node 22**');
    expect(text).toContain('**Tested:** the suite runs on Node 20');
  });
});
