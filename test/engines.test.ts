// Every installed dependency declares engines that include the Node versions it is run on. What the server runs
// with (the production tree: `npm ci --omit=dev`, the Docker image) must include every Node marketgate supports
// (package.json engines: 20 from 20.18.1, 22 and later), so `npm ci` warns of nothing there and no library runs on
// a Node it does not claim. content-disposition 3 and cookie 2 (Node 22 only; content-disposition 3 is ESM only,
// which @fastify/static's require() cannot load before Node 20.19) are held at 2.0.1 and 1.1.1 by package.json's
// overrides: the same functions, as @fastify/static (create) and light-my-request (stringifySetCookie) call them.
// @solana/errors 6 and later (under @solana/kit, which @x402/svm signs and verifies Solana payments with) asks for
// commander 15 (Node 22.12 on) for its command-line decoder alone, which the server never runs; the override holds
// it at 14.0.2 (Node 20 on), the version @solana/errors 5 uses.
// The development tools (vitest's vite, Redocly, Hardhat) declare Node 20.19 or 22.12 on: tests need those.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean; minVersion(range: string): { version: string } | null };
const ROOT = join(import.meta.dirname, '..');
const ownRange = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node as string;
/** The server: the oldest Node 20 supported, and the first release of Node 22 and of 24. */
const SERVER_NODES = [semver.minVersion(ownRange)!.version, '22.0.0', '24.0.0'];
/** The tests and development tools: what vitest 4 (vite 8) declares, ^20.19.0 || >=22.12.0. */
const DEVELOPMENT_NODES = ['20.19.0', '22.12.0', '24.0.0'];
/**
 * Development-only packages that declare Node 22 in every version there is, and that the suite runs on Node 20 all
 * the same: Hardhat 3's EVM (EDR), which the x402 tests start in-process. Never in the production tree.
 */
const NODE_22_DEV_TOOLS = new Set(['@nomicfoundation/edr', '@nomicfoundation/edr-linux-x64-gnu']);

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };

/** Each installed package (where the lock file places it, nested copies included), with its declared engines.node. */
const installed = Object.entries(lock.packages)
  .filter(([path]) => path.startsWith('node_modules/') && existsSync(join(ROOT, path, 'package.json')))
  .map(([path, entry]) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, path, 'package.json'), 'utf8')) as { name: string; version: string; engines?: { node?: string } };
    return { path, name: manifest.name, version: manifest.version, node: manifest.engines?.node, dev: entry.dev === true };
  });

const excluding = (packages: typeof installed, nodes: string[]) =>
  packages
    .filter((p) => p.node !== undefined)
    .flatMap((p) => nodes.filter((v) => !semver.satisfies(v, p.node!)).map((v) => `${p.path}@${p.version} (engines.node ${p.node}) excludes Node ${v}`));

describe('dependencies and the supported Node versions', () => {
  it('finds the installed packages (the scan itself works)', () => {
    expect(ownRange).toBe('>=20.18.1');
    expect(SERVER_NODES).toEqual(['20.18.1', '22.0.0', '24.0.0']);
    expect(installed.length).toBeGreaterThan(200);
    expect(installed.filter((p) => !p.dev).length).toBeGreaterThan(100);
    expect(installed.find((p) => p.name === 'vitest')).toMatchObject({ dev: true });
    expect(installed.filter((p) => p.name === 'content-disposition' || p.name === 'cookie').map((p) => `${p.name}@${p.version}`).sort()).toEqual([
      'content-disposition@2.0.1',
      'cookie@1.1.1',
    ]);
  });

  it(`what the server runs with: every package's engines include Node ${SERVER_NODES.join(', ')}`, () => {
    expect(excluding(installed.filter((p) => !p.dev), SERVER_NODES)).toEqual([]);
  });

  it(`the development tools: every package's engines include Node ${DEVELOPMENT_NODES.join(', ')} (EDR apart)`, () => {
    expect(excluding(installed.filter((p) => p.dev && !NODE_22_DEV_TOOLS.has(p.name)), DEVELOPMENT_NODES)).toEqual([]);
    // The exception is development-only and still needed (remove it once EDR includes Node 20).
    const edr = installed.filter((p) => NODE_22_DEV_TOOLS.has(p.name));
    expect(edr.length).toBeGreaterThan(0);
    for (const p of edr) expect({ dev: p.dev, node20: semver.satisfies('20.19.0', p.node ?? '*') }, p.path).toEqual({ dev: true, node20: false });
  });
});
