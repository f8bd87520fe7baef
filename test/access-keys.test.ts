import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { hashKey, readKeyFile } from '../src/access/keys.ts';
import { probeRoute } from './fakes/probe-route.ts';
import { makeApp } from './helpers.ts';

const run = promisify(execFile);
const cli = (...args: string[]) => run('npx', ['tsx', 'src/access/keys-cli.ts', ...args], { cwd: process.cwd() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('API keys on paid routes', () => {
  it('valid → 200, unknown → 401, revoked via the CLI while running → 401; only hashes are stored; keys never logged', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mg-keys-')), 'keys.json');
    const created = await cli('create', '--label', 'alice', '--file', file);
    const key = /key: (mg_\S+)/.exec(created.stdout)![1]!;
    const id = /created (key_[0-9a-f]+)/.exec(created.stdout)![1]!;

    const stored = readKeyFile(file);
    expect(stored).toEqual([{ id, label: 'alice', hash: hashKey(key), created_at: expect.any(String), revoked_at: null }]);
    expect(JSON.stringify(stored)).not.toContain(key);

    const { app, logs } = await makeApp({ API_KEYS_FILE: file, API_KEYS_RELOAD_MS: '100' }, undefined, [probeRoute]);
    const call = (headers: Record<string, string>) => app.inject({ url: '/v1/test-probe', headers });

    const ok = await call({ 'x-api-key': key });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data).toEqual({ value: 42 });

    const unknown = await call({ 'x-api-key': 'mg_not-a-key' });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: 'invalid or revoked API key' });

    // No key and x402 not configured → 401 that says a key is required.
    const none = await call({});
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toMatch(/API key is required .*payments are not configured/);
    // …and start-up said how to turn payments on.
    expect(logs.some((l) => l.includes('x402 payments are off: set X402_PAY_TO'))).toBe(true);

    expect((await cli('list', '--file', file)).stdout).toMatch(new RegExp(`${id}\\tactive`));
    await cli('revoke', id, '--file', file);
    expect((await cli('list', '--file', file)).stdout).toMatch(new RegExp(`${id}\\trevoked`));
    await sleep(400);
    const revoked = await call({ 'x-api-key': key });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json()).toEqual({ error: 'invalid or revoked API key' });

    expect(logs.join('')).not.toContain(key);
    expect(logs.join('')).not.toContain('mg_not-a-key');
    await app.close();
  }, 30_000);

  it('keys from API_KEYS work; free routes ignore keys and payment headers', async () => {
    const { app } = await makeApp({ API_KEYS: 'dev-key-1, dev-key-2' }, undefined, [probeRoute]);
    expect((await app.inject({ url: '/v1/test-probe', headers: { 'x-api-key': 'dev-key-2' } })).statusCode).toBe(200);
    // A bad key on a free route is not an error: free means free.
    const free = await app.inject({ url: '/v1/status', headers: { 'x-api-key': 'nope', 'payment-signature': 'garbage' } });
    expect(free.statusCode).toBe(200);
    await app.close();
  });

  it('over the per-key limit → 429 with Retry-After; other keys are unaffected', async () => {
    const { app } = await makeApp({ API_KEYS: 'k-a,k-b', KEY_RATE_LIMIT: '3' }, undefined, [probeRoute]);
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await app.inject({ url: '/v1/test-probe', headers: { 'x-api-key': 'k-a' } })).statusCode);
    expect(codes).toEqual([200, 200, 200, 429, 429]);
    const limited = await app.inject({ url: '/v1/test-probe', headers: { 'x-api-key': 'k-a' } });
    expect(limited.json().error).toMatch(/^rate limit exceeded: 3 requests per minute per API key/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await app.inject({ url: '/v1/test-probe', headers: { 'x-api-key': 'k-b' } })).statusCode).toBe(200);
    await app.close();
  });

  it('a bad parameter on a paid route with a valid key is a 400', async () => {
    const { app } = await makeApp({ API_KEYS: 'k' }, undefined, [probeRoute]);
    const res = await app.inject({ url: '/v1/test-probe?fail=maybe', headers: { 'x-api-key': 'k' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/query parameter 'fail'/);
    await app.close();
  });
});
