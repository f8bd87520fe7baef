// The keys part of the admin channel: what `npm run keys` asks a running server that owns the embedded
// database (with DATABASE_URL the CLI writes the database itself).
//   GET  /keys                    every key, oldest first (id, label, times, origin; never a hash)
//   POST /keys {id, label, hash}  a new key: the CLI made it and printed it; only its hash crosses the socket
//   POST /keys/revoke {id}        revokes a key: this server refuses it at once and announces it on Redis
import { z } from 'zod';
import type { KeyStore } from '../access/keys/keys.ts';
import { insertKey, listKeys, revokeKey, type KeyRecord } from '../db/api-keys.ts';
import type { DatabaseService } from '../db/service.ts';
import { AppError } from '../lib/errors.ts';
import { parseAdminInput, type AdminChannel } from './channel.ts';
import { adminDbTimeout } from './deadline.ts';

/** A key as the admin channel and the CLI show it: everything but its hash. */
export type KeyListing = Omit<KeyRecord, 'hash'>;

export interface KeyWriteAnswer {
  key: KeyListing;
  /** revoke: the key had been revoked before (nothing was written). */
  already?: boolean;
  /** Whether Redis took the announcement to the other instances; null when the server has no REDIS_URL. */
  announced: boolean | null;
}

export const newKeyBody = z.object({
  id: z.string().regex(/^key_[0-9a-f]{12}$/, 'key_ and 12 hex digits'),
  label: z.string().trim().min(1, 'a label').max(200),
  hash: z.string().regex(/^[0-9a-f]{64}$/, 'the key\'s SHA-256 in hex'),
});

const revokeBody = z.object({ id: z.string().min(1) });

export const listing = ({ hash: _hash, ...rest }: KeyRecord): KeyListing => rest;

export function registerKeyAdminRoutes(admin: AdminChannel, deps: { keys: KeyStore; db: DatabaseService }): void {
  // An operator's command waits longer for the database than a request does (deadline.ts).
  const deadline = adminDbTimeout(deps.db.timeoutMs);
  admin.route('GET', '/keys', async () =>
    deps.db.use(async (db) => {
      await deps.keys.importFile(db);
      return (await listKeys(db)).map(listing);
    }, deadline),
  );
  admin.route('POST', '/keys', async ({ body }): Promise<KeyWriteAnswer> => {
    const key = parseAdminInput(newKeyBody, body);
    const { key: created, version } = await deps.db
      .use(async (db) => {
        await deps.keys.importFile(db);
        return insertKey(db, key);
      }, deadline)
      .catch((err) => {
        // unique_violation: the random id (or key) exists already; a new run of the CLI makes new ones.
        if ((err as { code?: string }).code === '23505') throw new AppError(409, `a key with id ${key.id} or the same hash exists already: run create again`);
        throw err;
      });
    const announced = await deps.keys.applied({ op: 'created', id: created.id, version });
    return { key: listing(created), announced };
  });
  admin.route('POST', '/keys/revoke', async ({ body }): Promise<KeyWriteAnswer> => {
    const { id } = parseAdminInput(revokeBody, body);
    const done = await deps.db.use(async (db) => {
      await deps.keys.importFile(db);
      return revokeKey(db, id);
    }, deadline);
    if (!done) throw new AppError(404, `no key with id ${id}`);
    // Announced again when it was revoked before: harmless, and it repairs an announcement that was lost.
    const announced = await deps.keys.applied({ op: 'revoked', id, hash: done.key.hash, version: done.version });
    return { key: listing(done.key), already: done.already, announced };
  });
}
