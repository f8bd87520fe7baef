// `marketgate/client` as a user gets it (docs/paying/client.md, "Getting it"): `npm run build` (into a temporary
// copy of the package, so the repository's dist/ is left to `npm start`), then a separate project installs it from
// that path with `npm install <path>` and imports it by name — plain Node on the compiled JavaScript, calling a
// running marketgate, and tsc on its declarations.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
let dir: string;
let consumer: string;
let app: FastifyInstance;
const upstream = new FakeUpstream();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mg-client-pkg-'));
  const pkg = join(dir, 'marketgate');
  consumer = join(dir, 'consumer');
  mkdirSync(pkg);
  mkdirSync(consumer);
  await run('npm', ['run', 'build', '--silent', '--', '--outDir', join(pkg, 'dist')], { cwd: ROOT });
  copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // As the docs say: the package is not on a registry (package.json says private), it is installed from its path.
  await run('npm', ['install', pkg, '--no-audit', '--no-fund', '--offline', '--ignore-scripts'], { cwd: consumer });

  await upstream.start();
  upstream.route('GET /fng/', { body: recorded('alternativeme__fng.json') });
  ({ app } = await makeApp({ ALTERNATIVE_ME_BASE_URL: upstream.url }));
  await app.listen({ host: '127.0.0.1', port: 0 });
}, 240_000);

afterAll(async () => {
  await app?.close();
  await upstream.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('marketgate/client, built, installed from its path and imported by name', () => {
  it('npm install <path> recorded it as a file: dependency', () => {
    expect(JSON.parse(readFileSync(join(consumer, 'package.json'), 'utf8')).dependencies).toEqual({ marketgate: `file:../marketgate` });
  });

  it('runs in plain Node from dist/ (the package.json "exports" entry)', async () => {
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    writeFileSync(
      join(consumer, 'free.mjs'),
      `import { createClient, MarketgateError } from 'marketgate/client';
const client = createClient({ baseUrl: process.argv[2] });
const envelope = await client.sentiment({ limit: 1 });
const err = await client.price({ symbol: 'BTC' }).catch((e) => e);
console.log(JSON.stringify({ value: envelope.data.current.value, error: err instanceof MarketgateError ? err.status : String(err) }));
`,
    );
    const { stdout } = await run(process.execPath, ['free.mjs', base], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({ value: 71, error: 401 }); // x402 is off on this server: a paid route needs a key
  });

  it('type-checks against its declarations (tsc, NodeNext)', async () => {
    writeFileSync(
      join(consumer, 'use.ts'),
      `import { createClient, MarketgateError, type RouteEnvelope } from 'marketgate/client';
const client = createClient({ baseUrl: 'http://127.0.0.1:3000', maxSpendUsd: 0.05 });
export const price: Promise<RouteEnvelope<'/v1/price'>> = client.price({ symbol: 'BTC' });
export const value = async (): Promise<number | null> => (await client.price({ symbol: 'ETH' })).data.price;
// @ts-expect-error the symbol is required
export const missing = client.price({});
export const isError = (e: unknown): boolean => e instanceof MarketgateError && e.charged !== 'unknown';
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: false, typeRoots: [join(ROOT, 'node_modules', '@types')], types: ['node'] },
        files: ['use.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const out = await run(process.execPath, [tsc, '-p', '.'], { cwd: consumer }).catch((e: { stdout: string }) => e);
    expect(out.stdout).toBe('');
  }, 180_000); // tsc checks the x402 and viem declarations too (skipLibCheck off): over a minute on a loaded machine
});
