// API keys. Only SHA-256 hashes are stored; a presented key is hashed and compared in constant
// time against every stored hash. Keys come from API_KEYS_FILE (written by the keys CLI) and
// API_KEYS (raw, for development). The file is re-read when it changes, so a revocation
// applies to a running server within API_KEYS_RELOAD_MS.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';

export interface StoredKey {
  id: string;
  label: string;
  /** SHA-256 of the key, hex. */
  hash: string;
  created_at: string;
  revoked_at: string | null;
}

const fileSchema = z.object({
  keys: z.array(
    z.object({
      id: z.string(),
      label: z.string(),
      hash: z.string().regex(/^[0-9a-f]{64}$/),
      created_at: z.string(),
      revoked_at: z.string().nullable().default(null),
    }),
  ),
});

export const hashKey = (raw: string) => createHash('sha256').update(raw, 'utf8').digest('hex');

export function readKeyFile(path: string): StoredKey[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return fileSchema.parse(JSON.parse(text)).keys;
}

export function writeKeyFile(path: string, keys: StoredKey[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ keys }, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}

/** A new key: `mg_` + 32 random bytes (base64url), with its id. */
export function generateKey(): { id: string; key: string } {
  return { id: `key_${randomBytes(6).toString('hex')}`, key: `mg_${randomBytes(32).toString('base64url')}` };
}

/** The key file exists but cannot be read as a key file. */
export class KeyFileError extends Error {
  override name = 'KeyFileError';
  constructor(file: string, cause: unknown) {
    const why = cause instanceof SyntaxError ? `not valid JSON (${cause.message})` : cause instanceof z.ZodError ? `not a key file: ${z.prettifyError(cause).replace(/\n/g, ' ')}` : String((cause as Error)?.message ?? cause);
    super(`API_KEYS_FILE=${file} cannot be read: ${why}. Fix the file (npm run keys -- list shows what it holds) or point API_KEYS_FILE elsewhere.`, { cause });
  }
}

export interface KeyIdentity {
  id: string;
  label: string;
}

interface ActiveKey extends KeyIdentity {
  hash: Buffer;
}

/** Raw keys remembered with their verdict, so a key is hashed once, not on every request. */
const MEMO_LIMIT = 10_000;

export class KeyStore {
  private fileKeys: ActiveKey[] = [];
  private readonly envKeys: ActiveKey[];
  private fileStamp = '';
  private timer: NodeJS.Timeout | undefined;
  /** Verdict per presented raw key; emptied whenever the key set changes (a revocation applies at once). */
  private readonly memo = new Map<string, KeyIdentity | null>();

  constructor(
    private readonly options: { raw: string[]; file: string; reloadMs: number },
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.envKeys = options.raw.map((k, i) => ({ id: `env-${i + 1}`, label: 'API_KEYS', hash: Buffer.from(hashKey(k), 'hex') }));
    // At start-up a file that cannot be read stops the server: starting with no keys would answer 401
    // to every key holder while looking healthy. Later, a broken file keeps the last good set.
    const problem = this.reload();
    if (problem) throw new KeyFileError(options.file, problem);
  }

  /** Starts watching the key file for changes (revocations apply without a restart). */
  watch(): void {
    this.timer ??= setInterval(() => this.reload(), this.options.reloadMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get size(): number {
    return this.envKeys.length + this.fileKeys.length;
  }

  /** The key's identity, or null when unknown or revoked. */
  verify(raw: string): KeyIdentity | null {
    const known = this.memo.get(raw);
    if (known !== undefined) return known;
    const identity = this.verifyHash(raw);
    // Bounded: a flood of random keys cannot grow it; the set is rebuilt from scratch past the limit.
    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    this.memo.set(raw, identity);
    return identity;
  }

  /** Hashes the presented key and compares it, in constant time, with every stored hash. */
  private verifyHash(raw: string): KeyIdentity | null {
    const presented = Buffer.from(hashKey(raw), 'hex');
    let found: ActiveKey | null = null;
    for (const k of this.envKeys.concat(this.fileKeys)) {
      if (timingSafeEqual(k.hash, presented) && !found) found = k;
    }
    return found ? { id: found.id, label: found.label } : null;
  }

  /** Re-reads the key file when its size or mtime changed. A broken file keeps the last good set (and is returned). */
  reload(): unknown {
    let stamp = 'missing';
    try {
      const st = statSync(this.options.file);
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch {
      // a missing file means no file keys
    }
    if (stamp === this.fileStamp) return;
    try {
      this.fileKeys = readKeyFile(this.options.file)
        .filter((k) => k.revoked_at === null)
        .map((k) => ({ id: k.id, label: k.label, hash: Buffer.from(k.hash, 'hex') }));
      this.fileStamp = stamp;
      this.memo.clear();
      return undefined;
    } catch (err) {
      this.onError(err);
      return err;
    }
  }
}
