// Statements of the README that the repository itself can check: what the suite needs installed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync('README.md', 'utf8');

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
  const words = (text: string) => text.replace(/[#\s]+/g, ' ');
  it('both say that .env is read at start-up and that the environment takes precedence', () => {
    const example = words(readFileSync('.env.example', 'utf8').split('\n').slice(0, 6).join('\n'));
    expect(example).toContain('read .env in their working directory at start-up');
    expect(example).toContain('a variable set in the environment takes precedence over the file');
    expect(words(readme)).toContain('A `.env` file in the working directory');
    expect(words(readme)).toContain('a variable set in the environment takes precedence over the file');
  });
});
