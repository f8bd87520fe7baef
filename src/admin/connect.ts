// What the two operator CLIs (npm run keys, npm run payments) share: their settings, read as the server reads
// them (the environment over `.env` in the working directory), the one-line failures they report, and where
// they do their work:
//   - with DATABASE_URL, the PostgreSQL server directly (whether or not a server runs);
//   - otherwise the embedded database in DATA_DIR, which belongs to the server's process while it runs: the CLI
//     asks the running server over its admin socket (DATA_DIR/admin.sock); when no server runs, it opens the
//     directory itself; when a server owns it but does not answer, it refuses and says why.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '../db/database.ts';
import { lockOwner } from '../db/dir-lock.ts';
import { openDatabase, type DatabaseSettings } from '../db/open.ts';
import { pglitePaths } from '../db/pglite.ts';
import { explainConfigError, loadEnvFile, parseEnv, type ConfigError, type EnvFile, type EnvSpec, type EnvValues } from '../lib/env.ts';
import { AdminRequestError, AdminUnreachableError, adminRequest } from './client.ts';

/** A wrong command line: said with the usage, exit code 2. */
export class UsageError extends Error {}

/** A failure to report in one line, exit code 1. */
export class CliError extends Error {}

/** `.env`, read as the server reads it (below the environment), once the arguments are known to be sound. */
let envFile: EnvFile | undefined;

/** The variables of `spec` (the environment's, over `.env`'s), parsed as the server parses them. */
export function cliSettings<E extends EnvSpec>(spec: E): EnvValues<E> {
  envFile = loadEnvFile();
  return parseEnv(spec, process.env);
}

/** A bad setting in one line, saying which of the variables came from `.env`. */
export function settingsProblem(err: ConfigError): string {
  return explainConfigError(err, envFile).replace(/\n\s*/g, ' ');
}

/** Where a CLI does its work: the running server (over its admin socket), or the database itself. */
export type Connection =
  | { via: 'server'; socket: string }
  /** shared: a PostgreSQL server every instance reads; alone: the embedded database, opened here while no server runs. */
  | { via: 'shared' | 'alone'; db: Database };

export interface ConnectOptions {
  settings: DatabaseSettings;
  /** A GET of the CLI's own on the admin socket: answered, the running server does the work. */
  probe: string;
  /** Said when the server answers the probe 404 (an older version that lacks the CLI's routes); undefined: its error as it is. */
  olderServer?: (socket: string) => string;
  /** No server runs and the embedded database does not exist yet: nothing to do (null), or create it (its path given); or throw a CliError. */
  noDatabase: (cluster: string) => 'none' | 'create';
  /** What the CLI does with the database it opens itself, as it says so: "reading" or "writing". */
  verb: 'reading' | 'writing';
  /** Opens the database (openDatabase by default). */
  open?: (settings: DatabaseSettings) => Promise<Database>;
}

/** Where the CLI works; null when there is nothing to work on (no server, no database, nothing to create). */
export async function connect(o: ConnectOptions): Promise<Connection | null> {
  const open = o.open ?? ((s: DatabaseSettings) => openDatabase(s));
  const dataDir = o.settings.dataDir;
  if (o.settings.url) return { via: 'shared', db: await open(o.settings) };
  const socket = join(dataDir, 'admin.sock');
  try {
    await adminRequest(socket, 'GET', o.probe);
    return { via: 'server', socket };
  } catch (err) {
    if (o.olderServer && err instanceof AdminRequestError && err.status === 404) throw new CliError(o.olderServer(socket));
    if (!(err instanceof AdminUnreachableError)) throw err;
    const paths = pglitePaths(dataDir);
    const owner = lockOwner(paths.lock);
    if (owner !== null) {
      throw new CliError(
        `the server (process ${owner}) owns the embedded database in ${dataDir} but does not answer on its admin socket ${socket} (${err.message}); ` +
          'the CLI will not open a database another process has open. Retry once the server has started, or stop it first.',
      );
    }
    if (!existsSync(join(paths.cluster, 'PG_VERSION'))) {
      if (o.noDatabase(paths.cluster) === 'none') return null;
      console.error(`(no server is running on ${dataDir}: creating the embedded database in ${paths.cluster}; the first time takes a while)`);
    } else {
      console.error(`(no server is running on ${dataDir}: ${o.verb} ${paths.cluster} directly)`);
    }
    return { via: 'alone', db: await open(o.settings) };
  }
}
