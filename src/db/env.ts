// The ledger database's variables, declared as data with the other env builders and listed by
// config.ts in its sections (so they are parsed, validated and documented like every other one); kept
// apart so the operator CLIs can parse exactly these without loading the whole server's config.
import { env, urlWithScheme } from '../lib/env.ts';

const postgresUrl = urlWithScheme(['postgres:', 'postgresql:'], 'a postgres:// or postgresql:// URL');

export const DATABASE_ENV = {
  DATA_DIR: env.text(
    './data',
    'Directory of the embedded PostgreSQL (PGlite, in DATA_DIR/pglite, used while DATABASE_URL is unset) and of the admin socket DATA_DIR/admin.sock.',
    'a directory path',
  ),
  DATABASE_URL: env.custom(
    postgresUrl,
    undefined,
    'A PostgreSQL server (postgres://USER:PASSWORD@HOST:5432/DB) instead of the embedded database; every instance shares it.',
    { secret: true },
  ),
  DB_TIMEOUT_MS: env.int(
    100,
    60_000,
    2000,
    'Longest a request waits for the database (its opening included); a paid call whose payment cannot be recorded in this time is refused (503) before anything is settled.',
  ),
  DB_OPEN_WAIT_MS: env.int(
    0,
    600_000,
    30_000,
    "Longest a request that reads for its caller (GET /v1/usage, an API key this instance's copy does not hold yet) and a paid x402 call wait for the database to finish opening (ms; the embedded one takes seconds, tens of seconds on a first start under load); their statements then have DB_TIMEOUT_MS.",
  ),
  USAGE_FLUSH_MS: env.int(100, 3_600_000, 5000, 'How often per-key usage, counted in memory, is written to the database (ms).'),
};
