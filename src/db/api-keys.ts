// API keys in the ledger database (migration 6), the same SQL on PGlite and PostgreSQL. One row per key
// ever issued, holding only the SHA-256 of the key; a revocation sets `revoked_at` and is never undone
// (no row is deleted). Every write bumps the single-row version in `api_key_changes` in the same
// transaction, so an instance learns whether its copy is stale from one number (keysVersion).
import type { Database, Queryable } from './database.ts';

/** A key as stored (never the key itself). */
export interface KeyRecord {
  id: string;
  label: string;
  /** SHA-256 of the key, hex. */
  hash: string;
  /** ISO-8601. */
  created_at: string;
  revoked_at: string | null;
  /** The key file it was imported from; null when the keys CLI created it. */
  imported_from: string | null;
}

/** A key to insert: made by the keys CLI (which prints the key once and sends only its hash). */
export interface NewKey {
  id: string;
  label: string;
  hash: string;
}

/** A key file read for import (src/access/keys/key-file.ts), identified by the SHA-256 of its content. */
export interface KeyFileImport {
  path: string;
  sha256: string;
  keys: { id: string; label: string; hash: string; created_at: string; revoked_at: string | null }[];
}

export interface ImportResult {
  /** The same content was imported before: nothing was written. */
  already: boolean;
  /** Keys added (an id or hash the database already had is left as it is). */
  added: number;
  /** Keys the file marks revoked that were active in the database. */
  revoked: number;
  /** The version after the import. */
  version: number;
}

interface Row {
  id: string;
  label: string;
  hash: string;
  created_at: Date;
  revoked_at: Date | null;
  imported_from: string | null;
}

const COLUMNS = 'id, label, hash, created_at, revoked_at, imported_from';

const record = (r: Row): KeyRecord => ({
  id: r.id,
  label: r.label,
  hash: r.hash,
  created_at: r.created_at.toISOString(),
  revoked_at: r.revoked_at ? r.revoked_at.toISOString() : null,
  imported_from: r.imported_from,
});

/** The change marker: bumped by every write. */
export async function keysVersion(q: Queryable): Promise<number> {
  const [row] = await q.query<{ version: number }>('SELECT version FROM api_key_changes WHERE id = 1');
  return row?.version ?? 0;
}

async function bump(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ version: number }>('UPDATE api_key_changes SET version = version + 1, changed_at = now() WHERE id = 1 RETURNING version');
  return row!.version;
}

/** Every key, active and revoked, oldest first. */
export async function listKeys(q: Queryable): Promise<KeyRecord[]> {
  return (await q.query<Row>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`)).map(record);
}

export async function keyByHash(q: Queryable, hash: string): Promise<KeyRecord | undefined> {
  const [row] = await q.query<Row>(`SELECT ${COLUMNS} FROM api_keys WHERE hash = $1`, [hash]);
  return row ? record(row) : undefined;
}

/** Inserts a new key; returns it with the version its insertion made. */
export async function insertKey(db: Database, key: NewKey, now = new Date()): Promise<{ key: KeyRecord; version: number }> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<Row>(`INSERT INTO api_keys (id, label, hash, created_at) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`, [key.id, key.label, key.hash, now]);
    return { key: record(row!), version: await bump(tx) };
  });
}

/**
 * Revokes the key `id`: undefined when there is none; `already` when it was revoked before (its time is
 * kept, nothing is written).
 */
export async function revokeKey(db: Database, id: string, now = new Date()): Promise<{ key: KeyRecord; already: boolean; version: number } | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<Row>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 FOR UPDATE`, [id]);
    if (!row) return undefined;
    if (row.revoked_at) return { key: record(row), already: true, version: await keysVersion(tx) };
    const [revoked] = await tx.query<Row>(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, now]);
    return { key: record(revoked!), already: false, version: await bump(tx) };
  });
}

/**
 * Imports a key file once (by the SHA-256 of its content): keys it adds are inserted (an id or a hash
 * already there is left untouched), keys it marks revoked are revoked, nothing is ever un-revoked, and
 * the import is recorded. Several instances importing the same file at once import it once.
 */
export async function importKeyFile(db: Database, file: KeyFileImport, now = new Date()): Promise<ImportResult> {
  return db.transaction(async (tx) => {
    // Instances starting together with the same file: the second waits here, then finds it recorded.
    await tx.query('SELECT version FROM api_key_changes WHERE id = 1 FOR UPDATE');
    const seen = await tx.query('SELECT 1 FROM api_key_imports WHERE sha256 = $1', [file.sha256]);
    if (seen.length > 0) return { already: true, added: 0, revoked: 0, version: await keysVersion(tx) };
    let added = 0;
    let revoked = 0;
    for (const k of file.keys) {
      const inserted = await tx.query(
        'INSERT INTO api_keys (id, label, hash, created_at, revoked_at, imported_from) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id',
        [k.id, k.label, k.hash, new Date(k.created_at), k.revoked_at ? new Date(k.revoked_at) : null, file.path],
      );
      added += inserted.length;
      if (k.revoked_at && inserted.length === 0) {
        revoked += (await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id', [k.id, new Date(k.revoked_at)])).length;
      }
    }
    await tx.query('INSERT INTO api_key_imports (sha256, file, keys, imported_at) VALUES ($1, $2, $3, $4)', [file.sha256, file.path, file.keys.length, now]);
    const version = added + revoked > 0 ? await bump(tx) : await keysVersion(tx);
    return { already: false, added, revoked, version };
  });
}
