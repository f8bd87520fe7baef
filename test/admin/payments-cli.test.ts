// `npm run payments` against the real server process: over the admin socket while the server owns the
// embedded database, directly once it has stopped, directly on DATABASE_URL, refusing when a server
// owns the directory but does not answer. (Compiled, as the Docker image ships it, in server.test.ts
// against `npm start`.) The admin channel is a 0600 Unix socket, never reachable on the public port.
import { startServerProcess } from '../servers/marketgate.ts';
import { execFile } from 'node:child_process';
import { existsSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openDatabase, type DatabaseSettings } from '../../src/db/open.ts';
import type { VerifiedPayment } from '../../src/db/payment-rows.ts';
import { PaymentRecords } from '../../src/db/payments.ts';
import { escapeControl } from '../../src/lib/control-chars.ts';
import { memoryLog, pgliteDataDir, removeTempDirs, serviceOver, tempDir } from '../db-helpers.ts';
import { startPostgres, type TestPostgres } from '../servers/postgres.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const TX = `0x${'cd'.repeat(32)}`;
const TX2 = `0x${'ce'.repeat(32)}`;
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI (`node --import tsx src/admin/payments-cli.ts`, or a compiled file) with only the given environment. */
async function cli(env: Record<string, string>, args: string[], entry: string[] = ['--import', 'tsx', 'src/admin/payments-cli.ts'], cwd = ROOT): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run('node', [...entry, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: '', ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const attempt = (requestId: string, route = '/v1/price'): VerifiedPayment => ({
  requestId,
  route,
  resourceUrl: `http://127.0.0.1:3000${route}`,
  scheme: 'exact',
  network: 'eip155:8453',
  asset: USDC,
  amountRequired: '1000',
  payTo: '0x1111111111111111111111111111111111111111',
  payer: '0x2222222222222222222222222222222222222222',
  payloadHash: 'b'.repeat(64),
  facilitator: 'https://facilitator.example',
});

/** Three attempts: settled, cancelled, unknown; their ids. */
async function seed(db: Database) {
  const ledger = new PaymentRecords(serviceOver(db), { log: memoryLog() });
  const settled = await ledger.recordVerified(attempt('req-settled'));
  await ledger.recordSettled(settled, { txHash: TX, settledAmount: '1000' });
  await new Promise((r) => setTimeout(r, 5)); // distinct times: the list is newest first
  const cancelled = await ledger.recordVerified(attempt('req-cancelled', '/v1/ohlcv'));
  await ledger.recordCancelled(cancelled, 'handler_failed: 502');
  await new Promise((r) => setTimeout(r, 5));
  const unknown = await ledger.recordVerified(attempt('req-unknown'));
  await ledger.recordUnknown(unknown, { errorReason: 'settle timed out' });
  return { settled, cancelled, unknown };
}

/** The real server process on a free port, once its database is open and its admin socket listens. */
const startServer = (env: Record<string, string>) => startServerProcess({ ...env });

afterAll(() => removeTempDirs());

describe('npm run payments, embedded database', () => {
  let dataDir: string;
  let ids: Awaited<ReturnType<typeof seed>>;
  let server: Awaited<ReturnType<typeof startServer>>;

  beforeAll(async () => {
    dataDir = await pgliteDataDir();
    const db = await openDatabase({ dataDir, url: undefined, timeoutMs: 5000 });
    ids = await seed(db);
    await db.close();
    server = await startServer({ DATA_DIR: dataDir });
  }, 180_000);
  afterAll(async () => {
    if (server) await server.stop();
  });

  it('while the server runs, the CLI asks it over the admin socket (it never opens the directory the server owns)', async () => {
    const list = await cli({ DATA_DIR: dataDir }, ['list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toBe('');
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^verified_at\s+status\s+route\s+amount\s+payer\s+tx_hash\s+id\s+reason$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(1, 4))).toEqual([
      ['unknown', '/v1/price', '0.001 USDC'],
      ['cancelled', '/v1/ohlcv', '0.001 USDC'],
      ['settled', '/v1/price', '0.001 USDC'],
    ]);
    expect(list.stdout).toContain(TX);
    expect(list.stdout).toContain('handler_failed: 502');

    const json = await cli({ DATA_DIR: dataDir }, ['list', '--status', 'settled', '--since', '1h', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ id: ids.settled, request_id: 'req-settled', status: 'settled', tx_hash: TX, amount_required: '1000', settled_amount: '1000', asset: USDC }),
    ]);

    const summary = await cli({ DATA_DIR: dataDir }, ['summary', '--json']);
    const today = new Date().toISOString().slice(0, 10);
    expect(JSON.parse(summary.stdout)).toEqual({
      rows: [
        { day: today, route: '/v1/ohlcv', status: 'cancelled', asset: USDC, count: 1, amount_required: '1000', amount_settled: '0' },
        { day: today, route: '/v1/price', status: 'settled', asset: USDC, count: 1, amount_required: '1000', amount_settled: '1000' },
        { day: today, route: '/v1/price', status: 'unknown', asset: USDC, count: 1, amount_required: '1000', amount_settled: '0' },
      ],
      // What settling cost: one exact settlement, within the month's free ones.
      costs: [{ scheme: 'exact', network: 'eip155:8453', paid_calls: 1, settlements: 1, free_settlements: 1, facilitator_fees_usd: '0', revenue_usd: '0.001', net_usd: '0.001' }],
      fees: { feeUsd: '0.001', freePerMonth: 1000 },
      ledger: { final_write_failures: 0, final_writes_pending: 0, final_writes_lost: 0 },
    });
    expect((await cli({ DATA_DIR: dataDir }, ['summary'])).stdout).toMatch(new RegExp(`^${today}\\s+/v1/price\\s+settled\\s+1\\s+0\\.001 USDC\\s+0\\.001 USDC$`, 'm'));

    // Reconciling the unknown attempt: never with a transfer another row already counts (revenue would double)...
    const counted = await cli({ DATA_DIR: dataDir }, ['resolve', ids.unknown, 'settled', '--tx', TX]);
    expect(counted).toMatchObject({ code: 1, stdout: '', stderr: `payments: transaction ${TX} is already recorded on payment ${ids.settled} (settled): one transfer is counted once\n` });
    // ...but with its own transaction: the transfer landed.
    const resolved = await cli({ DATA_DIR: dataDir }, ['resolve', ids.unknown, 'settled', '--tx', TX2]);
    expect(resolved.stdout.trim()).toBe(`payment ${ids.unknown}: unknown → settled`);
    const again = await cli({ DATA_DIR: dataDir }, ['resolve', ids.unknown, 'cancelled', '--reason', 'oops']);
    expect(again).toMatchObject({ code: 1, stderr: `payments: payment ${ids.unknown} is already settled\n` });
    expect(JSON.parse((await cli({ DATA_DIR: dataDir }, ['list', '--status', 'unknown', '--json'])).stdout)).toEqual([]);
  }, 120_000);

  it('the admin socket is mode 0600 and nothing of it answers on the public port', async () => {
    const socket = join(dataDir, 'admin.sock');
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    for (const path of ['/payments', '/payments/summary', '/payments?limit=1', '/admin/payments']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(JSON.stringify(await res.json())).not.toContain('0x2222');
    }
    expect((await fetch(`${server.url}/payments/resolve`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(404);
  });

  it('once the server has stopped, the CLI opens the directory itself', async () => {
    expect(await server.stop()).toBe(0);
    expect(existsSync(join(dataDir, 'admin.sock'))).toBe(false);
    expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);
    const list = await cli({ DATA_DIR: dataDir }, ['list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toBe(`(no server is running on ${dataDir}: reading ${join(dataDir, 'pglite')} directly)\n`);
    expect(JSON.parse(list.stdout).map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      [ids.unknown, 'settled'],
      [ids.cancelled, 'cancelled'],
      [ids.settled, 'settled'],
    ]);
  }, 60_000);

  it('refuses, saying why, when a running process owns the directory but no admin socket answers', async () => {
    const lock = join(dataDir, 'pglite.lock');
    writeFileSync(lock, `${process.pid}\n`); // this test process is alive: it "owns" the directory
    try {
      const res = await cli({ DATA_DIR: dataDir }, ['list']);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe(
        `payments: the server (process ${process.pid}) owns the embedded database in ${dataDir} but does not answer on its admin socket ${join(dataDir, 'admin.sock')} ` +
          `(no server answers on ${join(dataDir, 'admin.sock')} (ENOENT)); the CLI will not open a database another process has open. Retry once the server has started, or stop it first.\n`,
      );
    } finally {
      unlinkSync(lock);
    }
  });

  it('says so when there is no database at all, and explains its usage when called wrongly', async () => {
    const empty = tempDir();
    expect(await cli({ DATA_DIR: empty }, ['list'])).toEqual({ code: 0, stdout: `no payments: there is no database in ${join(empty, 'pglite')} yet\n`, stderr: '' });
    expect(existsSync(join(empty, 'pglite'))).toBe(false); // nothing created by reading
    const bad = await cli({ DATA_DIR: empty }, ['list', '--status', 'paid']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^payments: --status paid: expected one of verified, settled, settle_failed, cancelled, unknown\nusage: npm run payments -- list/);
    expect((await cli({ DATA_DIR: empty }, ['list', '--since', 'yesterday'])).stderr).toMatch(/^payments: --since yesterday: expected a duration \(30m, 24h, 7d\), a date \(2026-11-01\) or an ISO-8601 time/);
  }, 60_000);

  it('reads .env in its working directory, under the environment', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), `DATA_DIR=${join(dir, 'from-dotenv')}\n`);
    const anywhere = ['--import', join(ROOT, 'node_modules/tsx/dist/loader.mjs'), join(ROOT, 'src/admin/payments-cli.ts')];
    expect(await cli({ ENV_FILE: '.env' }, ['list'], anywhere, dir)).toEqual({ code: 0, stdout: `no payments: there is no database in ${join(dir, 'from-dotenv', 'pglite')} yet\n`, stderr: '' });
    const overridden = await cli({ ENV_FILE: '.env', DATA_DIR: join(dir, 'from-env') }, ['list'], anywhere, dir);
    expect(overridden.stdout).toBe(`no payments: there is no database in ${join(dir, 'from-env', 'pglite')} yet\n`);
  }, 60_000);

  it('--help, -h and help print the usage on stdout and exit 0, whatever else is given', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['list', '--help'], ['resolve', 'pay_1', '-h']]) {
      const r = await cli({ DATA_DIR: '/nonexistent/data' }, args);
      expect(r, args.join(' ')).toEqual({ code: 0, stdout: expect.stringMatching(/^usage: npm run payments -- list [^]*--help\n/), stderr: '' });
    }
  }, 60_000);
});

describe('npm run payments, DATABASE_URL', () => {
  let pg: TestPostgres;
  let settings: DatabaseSettings;
  let ids: Awaited<ReturnType<typeof seed>>;

  beforeAll(async () => {
    pg = await startPostgres();
    settings = { dataDir: tempDir(), url: await pg.createDatabase('ledger'), timeoutMs: 5000 };
    const db = await openDatabase(settings);
    ids = await seed(db);
    await db.close();
  }, 120_000);
  afterAll(async () => {
    await pg?.stop();
  });

  it('reads the server directly, whether or not a marketgate server runs', async () => {
    const server = await startServer({ DATA_DIR: settings.dataDir, DATABASE_URL: settings.url! });
    try {
      // The CLI is given another DATA_DIR (no socket there): it does not need the running server.
      const list = await cli({ DATA_DIR: tempDir(), DATABASE_URL: settings.url! }, ['list', '--json']);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stderr).toBe('');
      expect(JSON.parse(list.stdout).map((r: { id: string }) => r.id)).toEqual([ids.unknown, ids.cancelled, ids.settled]);
      const resolved = await cli({ DATABASE_URL: settings.url! }, ['resolve', ids.unknown, 'settle_failed', '--reason', 'authorization expired unused']);
      expect(resolved.stdout.trim()).toBe(`payment ${ids.unknown}: unknown → settle_failed`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const summary = JSON.parse((await cli({ DATABASE_URL: settings.url! }, ['summary', '--json'])).stdout);
    expect(summary.ledger).toBeNull();
    expect(summary.costs).toEqual([expect.objectContaining({ scheme: 'exact', paid_calls: 1, settlements: 1, revenue_usd: '0.001' })]);
    expect(summary.rows.map((r: { status: string; count: number }) => [r.status, r.count])).toEqual([
      ['cancelled', 1],
      ['settle_failed', 1],
      ['settled', 1],
    ]);
  }, 120_000);

  it('text payers and facilitators wrote is stored and shown with its control characters escaped: one row per payment', async () => {
    const db = await openDatabase(settings);
    const ledger = new PaymentRecords(serviceOver(db), { log: memoryLog() });
    // A forged row after a newline, an escape sequence that clears the screen, a carriage return.
    const forged = `\n2026-01-01T00:00:00Z  settled  /v1/price  1000 USDC`;
    const id = await ledger.recordVerified({ ...attempt('req-forged'), payer: `0x2222\x1b[2J\r${forged}` });
    await ledger.recordCancelled(id, `handler_failed\x1b]0;owned\x07${forged}\u009b31m`);
    await db.close();
    const list = await cli({ DATABASE_URL: settings.url! }, ['list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1 + 4); // the header, the three seeded payments and this one
    const row = lines.find((l) => l.includes(id))!;
    expect(row).toContain('0x2222\\x1b[2J\\x0d\\x0a2026-01-01T00:00:00Z  settled  /v1/price  1000 USDC');
    expect(row).toMatch(/handler_failed\\x1b]0;owned\\x07\\x0a2026-01-01T00:00:00Z  settled  \/v1\/price  1000 USDC\\x9b31m$/);
    const json = await cli({ DATABASE_URL: settings.url! }, ['list', '--json']);
    expect(json.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(JSON.parse(json.stdout).find((r: { id: string }) => r.id === id)).toMatchObject({ payer: escapeControl(`0x2222\x1b[2J\r${forged}`), error_reason: escapeControl(`handler_failed\x1b]0;owned\x07${forged}\u009b31m`) });
  }, 60_000);
});
