// An operator's command waits longer for the database than a request does (src/admin/deadline.ts): the admin
// socket's routes, what `npm run keys` and `npm run payments` ask a running server, are given ADMIN_DB_TIMEOUT_MS
// where a request has DB_TIMEOUT_MS, and the CLIs' --help says so.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { AdminChannel, AdminHandler } from '../../src/admin/channel.ts';
import { ADMIN_DEADLINE_HELP } from '../../src/admin/deadline.ts';
import { registerKeyAdminRoutes } from '../../src/admin/key-routes.ts';
import { registerPaymentAdminRoutes } from '../../src/admin/payment-routes.ts';
import type { Database } from '../../src/db/database.ts';
import { DatabaseService } from '../../src/db/service.ts';
import { memoryLog } from '../db-helpers.ts';

/** A database (DB_TIMEOUT_MS 100) whose every statement answers once the test lets it, with no rows. */
function busyDatabase() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const db = { kind: 'pglite', query: async () => (await released, []), transaction: async () => undefined, close: async () => {} } as unknown as Database;
  const service = new DatabaseService({ open: async () => db, timeoutMs: 100, describe: 'busy test database', log: memoryLog() });
  return { service, release };
}

/** The admin routes a registration makes, by "METHOD path". */
function routesOf(register: (admin: AdminChannel) => void): Map<string, AdminHandler> {
  const routes = new Map<string, AdminHandler>();
  const admin = { route: (method: string, path: string, handler: AdminHandler) => (routes.set(`${method} ${path}`, handler), admin) };
  register(admin as unknown as AdminChannel);
  return routes;
}

const request = { query: new URLSearchParams(), body: undefined } as never;

describe('the admin commands wait longer for the database than a request', () => {
  it('keys list and payments list answered after the database was busy for longer than DB_TIMEOUT_MS', async () => {
    const { service, release } = busyDatabase();
    await service.ready();
    const keys = { importFile: async () => {} } as never;
    const records = { stats: () => ({}) } as never;
    const key = routesOf((admin) => registerKeyAdminRoutes(admin, { keys, db: service })).get('GET /keys')!;
    const payments = routesOf((admin) => registerPaymentAdminRoutes(admin, { records, batchEvents: {} as never, db: service, costs: {} as never })).get('GET /payments')!;
    const answers = Promise.all([key(request), payments(request)]);
    // A request's use gives up at DB_TIMEOUT_MS meanwhile…
    await expect(service.use((db) => db.query('SELECT 1'))).rejects.toMatchObject({ statusCode: 503, message: 'database did not answer within 100 ms' });
    // …the commands are still waiting, and answer once the database does.
    release();
    expect(await answers).toEqual([[], []]);
  });

  it('--help states the deadline', () => {
    for (const cli of ['src/admin/keys-cli.ts', 'src/admin/payments-cli.ts']) {
      const out = execFileSync(process.execPath, ['--import', 'tsx', cli, '--help'], { encoding: 'utf8', env: { ...process.env, DATA_DIR: '/nonexistent/data' } });
      expect(out).toContain(ADMIN_DEADLINE_HELP);
    }
    expect(ADMIN_DEADLINE_HELP).toBe('Each command waits up to 20 s for the database (or DB_TIMEOUT_MS when longer), where a request waits DB_TIMEOUT_MS.');
  });
});
