// Statements of the README that the repository itself can check: what the suite needs installed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync('README.md', 'utf8');
/** The text with its line breaks and comment marks as single spaces: a statement wraps anywhere. */
const words = (text: string) => text.replace(/[#\s]+/g, ' ');

describe('README', () => {
  it("names every system package .ci/run installs for the tests in its apt-get line", () => {
    const ci = readFileSync('.ci/run', 'utf8');
    const packages = [...ci.matchAll(/missing\+=\(([\w.-]+)\)/g)].map((m) => m[1]!);
    expect(packages).toEqual(expect.arrayContaining(['chromium', 'postgresql', 'redis-server']));
    const install = /`apt-get install -y ([^`]+)`/.exec(readme)?.[1]?.split(/\s+/);
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
    expect(words(readme)).toContain('consecutive failures calls fail fast with `Retry-After` (503 on interface B, 502 on interface A');
  });
});

describe('key revocations across instances', () => {
  it('the README states both cases: with REDIS_URL where the CLI runs, within 1 s; without, within API_KEYS_RELOAD_MS', () => {
    const row = readme.split('\n').find((l) => l.startsWith('| API keys |')) ?? '';
    expect(row).toContain('within 1 s of `npm run keys -- revoke` returning when the CLI has `REDIS_URL` too');
    expect(row).toContain('else within `API_KEYS_RELOAD_MS` (2 s)');
  });
});

describe('Node versions', () => {
  it('the README states the supported, recommended and tested versions as package.json and the Dockerfile have them', () => {
    const engines = JSON.parse(readFileSync('package.json', 'utf8')).engines.node;
    expect(engines).toBe('>=20.18.1');
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(/^FROM node:22-/m);
    const text = words(readme);
    expect(text).toContain('**Supported:** Node 20 from 20.18.1 (`engines` in package.json), and Node 22 and later. **Recommended: Node 22**');
    expect(text).toContain('**Tested:** the suite runs on Node 20');
  });
});
