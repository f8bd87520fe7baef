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
