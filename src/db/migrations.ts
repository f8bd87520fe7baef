// The schema, as an ordered list of SQL migrations kept in TypeScript (so `tsc` ships them in dist/),
// applied at start-up the same way on PGlite and on a PostgreSQL server: in one transaction, under a
// PostgreSQL advisory lock (several instances starting at once migrate once; the others wait, then
// find nothing left to do), recorded in `schema_migrations` with a checksum of their SQL.
//
// Migrations are append-only: never edit one that has shipped (start-up refuses a database whose
// recorded checksum differs from the code's); add a new one instead.
import { createHash } from 'node:crypto';
import type { Database } from './database.ts';

export interface Migration {
  /** 1, 2, 3, … in order, never reused. */
  id: number;
  name: string;
  /** One statement per entry (a parameterless statement list runs the same on both databases). */
  statements: readonly string[];
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'payments',
    statements: [
      // One row per x402 payment attempt that reached the facilitator, updated as its status changes.
      `CREATE TABLE payments (
        id text PRIMARY KEY,
        request_id text NOT NULL,
        route text NOT NULL,
        resource_url text NOT NULL,
        scheme text NOT NULL,
        network text NOT NULL,
        asset text NOT NULL,
        amount_required numeric(78, 0) NOT NULL,
        pay_to text NOT NULL,
        payer text,
        payload_hash text NOT NULL,
        payment_identifier text,
        authorization_nonce text,
        valid_before timestamptz,
        status text NOT NULL CHECK (status IN ('verified', 'settled', 'settle_failed', 'cancelled', 'unknown')),
        tx_hash text,
        settled_amount numeric(78, 0),
        facilitator text NOT NULL,
        error_reason text,
        verified_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        finished_at timestamptz
      )`,
      'CREATE INDEX payments_verified_at_idx ON payments (verified_at)',
      'CREATE INDEX payments_status_idx ON payments (status, verified_at)',
    ],
  },
  {
    id: 2,
    name: 'payment_identifiers',
    statements: [
      // x402 payment-identifier extension: one row per idempotency key, while it is in flight or done.
      `CREATE TABLE payment_identifiers (
        id text PRIMARY KEY,
        payload_hash text NOT NULL,
        state text NOT NULL CHECK (state IN ('in_flight', 'done')),
        response_status integer,
        response_headers jsonb,
        response_body text,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
      'CREATE INDEX payment_identifiers_expires_at_idx ON payment_identifiers (expires_at)',
    ],
  },
  {
    id: 3,
    name: 'key_usage',
    statements: [
      // Calls per API key, UTC day and route: one row each, incremented by the usage counter's flushes.
      `CREATE TABLE key_usage (
        key_id text NOT NULL,
        day date NOT NULL,
        route text NOT NULL,
        calls bigint NOT NULL,
        PRIMARY KEY (key_id, day, route)
      )`,
    ],
  },
  {
    id: 4,
    name: 'x402_channels',
    statements: [
      // x402 batch-settlement channels (src/db/x402-channels.ts): one row per channel ever
      // reserved; `state` is the SDK's Channel record, NULL once the channel is closed. Rows are never
      // deleted: the row is the lock that serialises the updates of its channel across instances.
      `CREATE TABLE x402_channels (
        channel_id text PRIMARY KEY CHECK (channel_id ~ '^0x[0-9a-f]{64}$'),
        state jsonb,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
    ],
  },
  {
    id: 5,
    name: 'x402_batch_events',
    statements: [
      // Batch settlement's steps (src/db/batch-events.ts): deposit, charge, claim, settle, refund; append-only.
      `CREATE TABLE x402_batch_events (
        id text PRIMARY KEY,
        type text NOT NULL CHECK (type IN ('deposit', 'charge', 'claim', 'settle', 'refund')),
        at timestamptz NOT NULL,
        network text NOT NULL,
        channel_id text,
        payer text,
        amount numeric(78, 0) NOT NULL,
        tx_hash text,
        detail jsonb
      )`,
      'CREATE INDEX x402_batch_events_at ON x402_batch_events (at)',
    ],
  },
  {
    id: 6,
    name: 'api_keys',
    statements: [
      // API keys (src/db/api-keys.ts): only the SHA-256 of each key; revoked in place, never deleted, so a
      // revoked id stays revoked whatever is imported later. `imported_from`: the key file it came from.
      `CREATE TABLE api_keys (
        id text PRIMARY KEY,
        label text NOT NULL,
        hash text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
        created_at timestamptz NOT NULL,
        revoked_at timestamptz,
        imported_from text
      )`,
      // One row, bumped in the same transaction as every write to api_keys: instances compare this one
      // number every API_KEYS_RELOAD_MS to learn, cheaply, whether their copy of the keys is stale.
      `CREATE TABLE api_key_changes (
        id smallint PRIMARY KEY CHECK (id = 1),
        version bigint NOT NULL,
        changed_at timestamptz NOT NULL
      )`,
      'INSERT INTO api_key_changes (id, version, changed_at) VALUES (1, 0, now())',
      // Key files (API_KEYS_FILE) imported, by the SHA-256 of their content: a file is imported once.
      `CREATE TABLE api_key_imports (
        sha256 text PRIMARY KEY,
        file text NOT NULL,
        keys integer NOT NULL,
        imported_at timestamptz NOT NULL
      )`,
    ],
  },
  {
    id: 7,
    name: 'payments_once_per_authorization',
    statements: [
      // When the paid answer left the server (a retry of an answered payment is never answered again), and
      // what the chain last said about the row's authorization (src/payments/schemes/exact-evm/chain.ts).
      'ALTER TABLE payments ADD COLUMN answered_at timestamptz',
      'ALTER TABLE payments ADD COLUMN chain_checked_at timestamptz',
      'ALTER TABLE payments ADD COLUMN chain_state text',
      // A transfer counted twice before this migration (a crash, then the same authorization settled under a
      // new row) keeps its first settled row; the later ones stop counting as revenue.
      `UPDATE payments p SET status = 'cancelled', settled_amount = NULL, finished_at = coalesce(p.finished_at, p.updated_at),
         error_reason = 'duplicate: the same authorization is recorded as settled on an earlier row (migration 7)'
       WHERE p.status = 'settled' AND p.payer IS NOT NULL AND p.authorization_nonce IS NOT NULL AND EXISTS (
         SELECT 1 FROM payments q WHERE q.status = 'settled' AND q.network = p.network AND q.payer = p.payer
           AND q.authorization_nonce = p.authorization_nonce AND (q.verified_at, q.id) < (p.verified_at, p.id))`,
      // One EIP-3009 authorization moves money once: one settled row per (network, payer, nonce).
      `CREATE UNIQUE INDEX payments_settled_once ON payments (network, payer, authorization_nonce)
       WHERE status = 'settled' AND payer IS NOT NULL AND authorization_nonce IS NOT NULL`,
      // A retry of the same payment finds its row (src/payments/core/resume.ts).
      'CREATE INDEX payments_payload_hash_idx ON payments (payload_hash)',
      // Payment identifiers: the request an identifier was first used for (method, route, sorted query), the
      // lease of a claim in flight (renewed while its request runs, never past the authorization's validBefore),
      // and who holds it. `expires_at` is now when the identifier is forgotten (24 h), in flight or done.
      'ALTER TABLE payment_identifiers ADD COLUMN request text',
      'ALTER TABLE payment_identifiers ADD COLUMN lease_until timestamptz',
      'ALTER TABLE payment_identifiers ADD COLUMN owner text',
    ],
  },
  {
    id: 8,
    name: 'x402_authorizations',
    statements: [
      // One EIP-3009 authorization in play per row: the claim that lets one request at a time, on any instance,
      // verify and settle it (src/db/authorization-claims.ts); `used` once it is settled and answered.
      `CREATE TABLE x402_authorizations (
        network text NOT NULL,
        payer text NOT NULL,
        nonce text NOT NULL,
        state text NOT NULL CHECK (state IN ('in_flight', 'used')),
        owner text NOT NULL,
        lease_until timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (network, payer, nonce)
      )`,
      'CREATE INDEX x402_authorizations_expires_at_idx ON x402_authorizations (expires_at)',
    ],
  },
  {
    id: 9,
    name: 'x402_channel_leases',
    statements: [
      // A batch-settlement channel's single writer (src/db/x402-channels.ts, channel-lease.ts): the instance that
      // holds its lease keeps its state in memory and admits its vouchers there; another instance asks for it
      // (wanted_at) and takes it once released or lapsed.
      'ALTER TABLE x402_channels ADD COLUMN lease_owner text',
      'ALTER TABLE x402_channels ADD COLUMN lease_until timestamptz',
      'ALTER TABLE x402_channels ADD COLUMN lease_wanted_at timestamptz',
    ],
  },
  {
    id: 10,
    name: 'x402_channel_last_answer',
    statements: [
      // A batch-settlement channel's last admitted voucher and the answer it paid for (channel-lease.ts): a retry of
      // that very voucher gets the same answer, from whichever instance holds the channel next.
      'ALTER TABLE x402_channels ADD COLUMN last_answer jsonb',
    ],
  },
];

/** The advisory lock every instance takes before migrating (an arbitrary constant, ours alone). */
const MIGRATION_LOCK = 7_104_511_731;

export const checksum = (m: Migration) => createHash('sha256').update(m.statements.join(';\n')).digest('hex');

/**
 * Brings the database's schema up to date; returns the ids it applied (none when it was current).
 * Throws when an applied migration's SQL differs from the code's (an edited migration).
 */
export async function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const applied = new Map((await tx.query<{ id: number; checksum: string }>('SELECT id, checksum FROM schema_migrations')).map((r) => [r.id, r.checksum]));
    const done: number[] = [];
    for (const m of migrations) {
      const sum = checksum(m);
      const recorded = applied.get(m.id);
      if (recorded !== undefined) {
        if (recorded !== sum) throw new Error(`migration ${m.id} (${m.name}) differs from the one applied to this database: migrations are append-only`);
        continue;
      }
      for (const statement of m.statements) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (id, name, checksum) VALUES ($1, $2, $3)', [m.id, m.name, sum]);
      done.push(m.id);
    }
    return done;
  });
}
