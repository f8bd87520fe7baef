// API_KEYS_FILE: the JSON file of hashed keys earlier versions of the keys CLI wrote. Keys now live in
// the ledger database; an existing file is read at start-up and imported into the database once (by the
// SHA-256 of its content, see src/db/api-keys.ts). A file that exists but cannot be read as a key file
// stops start-up: starting without its keys would answer 401 to every holder while looking healthy.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { KeyFileImport } from '../../db/api-keys.ts';

const time = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'an ISO-8601 time');

const fileSchema = z.object({
  keys: z.array(
    z.object({
      id: z.string().min(1),
      label: z.string(),
      hash: z.string().regex(/^[0-9a-f]{64}$/),
      created_at: time,
      revoked_at: time.nullable().default(null),
    }),
  ),
});

export type StoredKey = KeyFileImport['keys'][number];

/** The key file exists but cannot be read as a key file. */
export class KeyFileError extends Error {
  override name = 'KeyFileError';
  constructor(file: string, cause: unknown) {
    const why =
      cause instanceof SyntaxError
        ? `not valid JSON (${cause.message})`
        : cause instanceof z.ZodError
          ? `not a key file: ${z.prettifyError(cause).replace(/\n/g, ' ')}`
          : String((cause as Error)?.message ?? cause);
    super(`API_KEYS_FILE=${file} cannot be read: ${why}. Fix the file (it is imported into the database once), or point API_KEYS_FILE at another path.`, { cause });
  }
}

/** The file's keys and content hash, ready to import; undefined when there is no file. Throws KeyFileError. */
export function loadKeyFile(path: string): KeyFileImport | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KeyFileError(path, err);
  }
  try {
    const keys = fileSchema.parse(JSON.parse(text)).keys;
    return { path: resolve(path), sha256: createHash('sha256').update(text, 'utf8').digest('hex'), keys };
  } catch (err) {
    throw new KeyFileError(path, err);
  }
}
