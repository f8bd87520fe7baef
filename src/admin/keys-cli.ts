// npm run keys -- create --label NAME | list [--json] | revoke ID
// (compiled, as the Docker image ships it: node dist/admin/keys-cli.js …)
//
// Keys live in the ledger database. Where the CLI writes, as `npm run payments` reads: the running server
// over its admin socket, the database itself when none runs, or the PostgreSQL server at DATABASE_URL
// (connect.ts).
// A new key is made here and printed once; only its SHA-256 is stored (and sent over the socket).
// A change the CLI wrote itself to a shared database is announced on Redis when REDIS_URL is set, so
// every instance applies it at once (through the admin socket, the server applies and announces it).
// An existing API_KEYS_FILE not imported yet is imported first, once, as the server does.
// Its settings are the server's: the environment, over `.env` in the working directory when there is one.
// Every failure is one line on stderr (exit 1; 2 for a usage error), never a stack trace.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { splitArgs, wantsHelp } from './cli-args.ts';
import { AdminRequestError, adminRequest } from './client.ts';
import { ADMIN_DEADLINE_HELP, adminDbTimeout } from './deadline.ts';
import { cliSettings, CliError, connect, settingsProblem, UsageError } from './connect.ts';
import { listing, type KeyListing, type KeyWriteAnswer } from './key-routes.ts';
import { controlFreeJson, escapeControl } from '../lib/control-chars.ts';
import { importKeyFile, insertKey, listKeys, revokeKey, type NewKey } from '../db/api-keys.ts';
import type { Database } from '../db/database.ts';
import { DATABASE_ENV } from '../db/env.ts';
import { describeDatabase, openDatabase, type DatabaseSettings } from '../db/open.ts';
import { pglitePaths } from '../db/pglite.ts';
import { ConfigError, parseEnv } from '../lib/env.ts';
import { REDIS_ENV } from '../redis/env.ts';
import { announceOnce, type KeyChange } from '../access/keys/key-changes.ts';
import { KeyFileError, loadKeyFile } from '../access/keys/key-file.ts';
import { KEYS_ENV } from '../access/keys/keys-env.ts';
import { generateKey, hashKey } from '../access/keys/keys.ts';

const USAGE = `usage: npm run keys -- create --label NAME
       npm run keys -- list [--json]
       npm run keys -- revoke ID
       npm run keys -- --help
(compiled: node dist/admin/keys-cli.js …)
${ADMIN_DEADLINE_HELP}`;

type Task = { command: 'create'; label: string } | { command: 'list'; json: boolean } | { command: 'revoke'; id: string };

interface Settings {
  db: DatabaseSettings;
  redis: { url: string | undefined; timeoutMs: number };
  keyFile: string;
  reloadMs: number;
}

/** Where the keys are written: the running server, or the database itself. */
interface KeyAdmin {
  /** The database, in words ("PostgreSQL at db:5432/marketgate", "PGlite in ./data/pglite"). */
  readonly where: string;
  /** server: through the admin socket; shared: a PostgreSQL server every instance reads; alone: PGlite opened here. */
  readonly via: 'server' | 'shared' | 'alone';
  list(): Promise<KeyListing[]>;
  create(key: NewKey): Promise<KeyWriteAnswer>;
  /** undefined when there is no such key. */
  revoke(id: string): Promise<KeyWriteAnswer | undefined>;
  close(): Promise<void>;
}

async function main(argv: string[]): Promise<void> {
  if (wantsHelp(argv)) return console.log(USAGE);
  const task = parseArgs(argv);
  const settings = readSettings();
  const admin = await keyAdmin(settings, task);
  if (!admin) {
    // No database and no key file: nothing was ever created.
    console.log(task.command === 'list' && task.json ? '[]' : `no keys: there is no database in ${pglitePaths(settings.db.dataDir).cluster} yet`);
    return;
  }
  try {
    switch (task.command) {
      case 'create': {
        const { id, key } = generateKey();
        const { key: created } = await admin.create({ id, label: task.label, hash: hashKey(key) });
        console.log(`created ${created.id} (${escapeControl(created.label)}) in ${admin.where}`);
        console.log(`key: ${key}`);
        console.log('This key is shown once; only its hash is stored. Send it as the x-api-key header.');
        break;
      }
      case 'list': {
        const keys = await admin.list();
        // Labels are shown with control characters escaped: one key, one line, whatever its label holds.
        if (task.json) console.log(controlFreeJson(keys));
        else if (keys.length === 0) console.log(`no keys in ${admin.where}`);
        else for (const k of keys) console.log([k.id, k.revoked_at ? `revoked ${k.revoked_at}` : 'active', k.created_at, k.label].map(escapeControl).join('\t'));
        break;
      }
      case 'revoke': {
        const done = await admin.revoke(task.id);
        if (!done) throw new CliError(`no key with id ${task.id} in ${admin.where}`);
        const name = `${done.key.id} (${escapeControl(done.key.label)})`;
        if (done.already) console.log(`${name} was already revoked at ${done.key.revoked_at}`);
        else console.log(`revoked ${name}: ${propagation(admin, done, settings)}`);
        break;
      }
    }
  } finally {
    await admin.close();
  }
}

/** When the running instances refuse a key just revoked, as far as this run can tell. */
function propagation(admin: KeyAdmin, done: KeyWriteAnswer, s: Settings): string {
  if (admin.via === 'server') return 'the server refuses it from now on';
  if (admin.via === 'alone') return 'no server is running; a server started on this DATA_DIR refuses it';
  if (done.announced) return 'announced on Redis: every running instance refuses it within a second';
  const interval = `within API_KEYS_RELOAD_MS (${s.reloadMs} ms in this environment), their periodic check`;
  return done.announced === false ? `Redis was not reached: running instances refuse it ${interval}` : `running instances refuse it ${interval} (no REDIS_URL to announce it at once)`;
}

function parseArgs(argv: string[]): Task {
  const [command, ...rest] = argv;
  const { flags, positional } = splitArgs(rest, usage);
  if ('file' in flags) usage('--file is gone: keys live in the database now (an existing API_KEYS_FILE is imported into it once; set API_KEYS_FILE to import another file)');
  const allow = (...names: string[]) => {
    for (const name of Object.keys(flags)) if (!names.includes(name)) usage(`--${name} is not an option of ${command}`);
  };
  switch (command) {
    case 'create': {
      allow('label');
      const label = flags.label?.trim();
      if (!label) usage('create needs --label NAME (who or what the key is for)');
      if (label.length > 200) usage('--label: at most 200 characters');
      if (positional.length) usage(`unexpected ${positional[0]}`);
      return { command, label };
    }
    case 'list':
      allow('json');
      if (positional.length) usage(`unexpected ${positional[0]}`);
      return { command, json: flags.json === 'yes' };
    case 'revoke': {
      allow();
      const [id, extra] = positional;
      if (!id) usage('revoke needs the key id (npm run keys -- list shows them)');
      if (extra) usage(`unexpected ${extra}`);
      return { command, id };
    }
    default:
      return usage(command ? `unknown command ${command}` : 'no command');
  }
}

function usage(problem: string): never {
  throw new UsageError(problem);
}

/** DATA_DIR, DATABASE_URL, DB_TIMEOUT_MS, REDIS_URL, REDIS_TIMEOUT_MS, API_KEYS_FILE, API_KEYS_RELOAD_MS, parsed as the server parses them. */
function readSettings(): Settings {
  const e = cliSettings({ ...DATABASE_ENV, ...REDIS_ENV, ...KEYS_ENV });
  return {
    db: { dataDir: e.DATA_DIR, url: e.DATABASE_URL, timeoutMs: adminDbTimeout(e.DB_TIMEOUT_MS) },
    // A command, not a request: it may wait longer for Redis than a request would.
    redis: { url: e.REDIS_URL, timeoutMs: Math.max(e.REDIS_TIMEOUT_MS, 2000) },
    keyFile: e.API_KEYS_FILE,
    reloadMs: e.API_KEYS_RELOAD_MS,
  };
}

/** Where to write; null when there is no embedded database, no server and no key file (nothing to list). */
async function keyAdmin(s: Settings, task: Task): Promise<KeyAdmin | null> {
  const connection = await connect({
    settings: s.db,
    probe: '/keys',
    olderServer: (socket) => `the server answering on ${socket} does not manage keys (an older version?): restart it with this version, then retry`,
    verb: 'writing',
    noDatabase: (cluster) => {
      const hasFile = existsSync(s.keyFile);
      if (task.command === 'list' && !hasFile) return 'none';
      if (task.command === 'revoke' && !hasFile) throw new CliError(`no key with id ${task.id}: there is no database in ${cluster} yet`);
      return 'create';
    },
    open: () => open(s),
  });
  if (!connection) return null;
  return connection.via === 'server' ? throughServer(connection.socket) : direct(connection.db, connection.via, s);
}

async function open(s: Settings): Promise<Database> {
  try {
    return await openDatabase(s.db);
  } catch (err) {
    if (permissionProblem(err)) throw err;
    throw new CliError(`cannot open ${describeDatabase(s.db)}: ${firstLine(err)}`);
  }
}

function throughServer(socket: string): KeyAdmin {
  return {
    where: 'the running server\'s database',
    via: 'server',
    list: () => adminRequest(socket, 'GET', '/keys'),
    create: (key) => adminRequest(socket, 'POST', '/keys', key),
    revoke: async (id) => {
      try {
        return await adminRequest<KeyWriteAnswer>(socket, 'POST', '/keys/revoke', { id });
      } catch (err) {
        if (err instanceof AdminRequestError && err.status === 404) return undefined;
        throw err;
      }
    },
    close: async () => {},
  };
}

function direct(db: Database, via: 'shared' | 'alone', s: Settings): KeyAdmin {
  let imported = false;
  const importFile = async () => {
    if (imported) return;
    imported = true;
    const file = loadKeyFile(s.keyFile);
    if (!file) return;
    const result = await importKeyFile(db, file);
    if (!result.already) console.error(`(API_KEYS_FILE ${file.path} imported into the database, once: ${result.added} keys added, ${result.revoked} revoked)`);
    if (result.added + result.revoked > 0) await announce({ op: 'imported', version: result.version });
  };
  // Only a shared database has other instances to tell (PGlite belongs to one process).
  const announce = async (change: KeyChange): Promise<boolean | null> => {
    if (via !== 'shared' || !s.redis.url) return null;
    try {
      await announceOnce(s.redis.url, s.redis.timeoutMs, change);
      return true;
    } catch (err) {
      console.error(`keys: warning: the change is in the database, but Redis could not be told (${firstLine(err)})`);
      return false;
    }
  };
  return {
    where: describeDatabase(s.db),
    via,
    list: async () => {
      await importFile();
      return (await listKeys(db)).map(listing);
    },
    create: async (key) => {
      await importFile();
      const { key: created, version } = await insertKey(db, key);
      return { key: listing(created), announced: await announce({ op: 'created', id: created.id, version }) };
    },
    revoke: async (id) => {
      await importFile();
      const done = await revokeKey(db, id);
      if (!done) return undefined;
      // Announced again when it was revoked before: it repairs an announcement that was lost.
      const announced = await announce({ op: 'revoked', id, hash: done.key.hash, version: done.version });
      return { key: listing(done.key), already: done.already, announced };
    },
    close: () => db.close(),
  };
}

const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0]!;

/** A file or socket the user running the CLI may not use: EACCES and its kin. */
function permissionProblem(err: unknown): boolean {
  return ['EACCES', 'EPERM', 'EROFS'].includes((err as NodeJS.ErrnoException)?.code ?? '');
}

/** The one line said for a failure: what failed, where, and what to do. */
function explain(err: unknown, dataDir: string): string {
  const e = err as NodeJS.ErrnoException & { address?: string };
  if (permissionProblem(err)) {
    const uid = process.getuid?.();
    if (e.syscall === 'connect') {
      return `cannot reach the admin socket ${e.address ?? join(dataDir, 'admin.sock')} (${e.code}): it (or DATA_DIR=${dataDir}) belongs to another user; run this command as the user the server runs as, or as root`;
    }
    return (
      `cannot write ${e.path ?? dataDir} (${e.code}): DATA_DIR=${dataDir} must be writable by the user running this command${uid === undefined ? '' : ` (uid ${uid})`}. ` +
      'Run it as the user the server runs as (in the Docker image: docker exec CONTAINER node dist/admin/keys-cli.js …, which runs as its node user on DATA_DIR=/app/data), or set DATA_DIR to a directory this user can write.'
    );
  }
  if (err instanceof CliError || err instanceof KeyFileError) return err.message;
  if (err instanceof ConfigError) return settingsProblem(err);
  if (err instanceof AdminRequestError && err.status === 503) return `the server could not reach its database (${err.message}); retry in a moment`;
  return firstLine(err);
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError) {
    console.error(`keys: ${err.message}\n${USAGE}`);
    process.exit(2);
  }
  let dataDir = './data';
  try {
    dataDir = parseEnv(DATABASE_ENV, process.env).DATA_DIR;
  } catch {
    // the configuration error itself is explained below
  }
  console.error(`keys: ${explain(err, dataDir)}`);
  process.exit(1);
});
