// What the crash tests share (x402-crash, x402-batch-crash): a paid world beside a real PostgreSQL server, a database
// for the server process under test (its DATABASE_URL), the test's own connection to that ledger, and one teardown
// for all of it (the server process is the test's to stop first).
import type { Database } from '../../src/db/database.ts';
import { removeTempDirs } from '../db-helpers.ts';
import { startPostgres } from '../servers/postgres.ts';
import { startPaidWorld, type PaidWorld, type PaidWorldOptions } from './world.ts';

export interface CrashWorld {
  world: PaidWorld;
  /** The server process's ledger (DATABASE_URL). */
  databaseUrl: string;
  /** The test's own connection to it. */
  ledger: Database;
  close(): Promise<void>;
}

export async function startCrashWorld(options: PaidWorldOptions, database: string): Promise<CrashWorld> {
  const [world, postgres] = await Promise.all([startPaidWorld(options), startPostgres()]);
  const databaseUrl = await postgres.createDatabase(database);
  const { openPostgres } = await import('../../src/db/postgres.ts');
  const ledger = await openPostgres({ url: databaseUrl, timeoutMs: 5000 });
  return {
    world,
    databaseUrl,
    ledger,
    async close() {
      await ledger.close();
      await world.close();
      await postgres.stop();
      removeTempDirs();
    },
  };
}
