import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/access/keys/keys.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { probeRoute } from '../fakes/probe-route.ts';
import { makeApp } from '../helpers.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

afterAll(() => removeTempDirs());

describe('API keys on paid routes', () => {
  it('valid → 200, unknown → 401, revoked through the CLI while running → 401 at once; only hashes are stored; keys never logged', async () => {
    const dataDir = await pgliteDataDir();
    const cli = (...args: string[]) => run('node', ['--import', 'tsx', 'src/admin/keys-cli.ts', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ENV_FILE: '', DATA_DIR: dataDir } });
    const { app, logs } = await makeApp({ DATA_DIR: dataDir }, undefined, [probeRoute]);
    await app.services.db.ready();
    // The admin socket a serving process opens (startStorage): the CLI writes through it.
    await app.services.admin.listen();
    const created = await cli('create', '--label', 'alice');
    expect(created.stdout).toMatch(/^created key_[0-9a-f]{12} \(alice\) in the running server's database\n/);
    const key = /key: (mg_\S+)/.exec(created.stdout)![1]!;
    const id = /created (key_[0-9a-f]+)/.exec(created.stdout)![1]!;

    const stored = await app.services.db.use((db) => db.query('SELECT id, label, hash, revoked_at FROM api_keys'));
    expect(stored).toEqual([{ id, label: 'alice', hash: hashKey(key), revoked_at: null }]);
    expect(JSON.stringify(stored)).not.toContain(key);

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

    expect((await cli('list')).stdout).toMatch(new RegExp(`^${id}\\tactive\\t`));
    const revoked = await cli('revoke', id);
    expect(revoked.stdout).toBe(`revoked ${id} (alice): the server refuses it from now on\n`);
    // The server applied its own revocation before answering the CLI: refused at once, no reload interval.
    const refused = await call({ 'x-api-key': key });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ error: 'invalid or revoked API key' });
    expect((await cli('list')).stdout).toMatch(new RegExp(`^${id}\\trevoked \\d{4}-`));

    expect(logs.join('')).not.toContain(key);
    expect(logs.join('')).not.toContain('mg_not-a-key');
    await app.close();
  }, 120_000);

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
