// `npm run keys` against the real server process and databases: on the embedded database directly when no
// server runs, through the running server's admin socket while it owns the directory (the server applies
// the change at once), refusing when a server owns it but does not answer; on PostgreSQL (DATABASE_URL)
// directly. Failures are one line on stderr, never a stack trace. (Compiled, as the Docker image ships it,
// in server.test.ts against `npm start`; several instances in scale-out-keys.test.ts.)
import { startServerProcess } from '../servers/marketgate.ts';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/access/keys/keys.ts';
import { pglitePaths } from '../../src/db/pglite.ts';
import { pgliteDataDir, removeTempDirs, tempDir } from '../db-helpers.ts';
import { startPostgres, type TestPostgres } from '../servers/postgres.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the keys CLI through tsx with only the given environment (no key file unless the test names one). */
async function keys(env: Record<string, string>, args: string[], asUser?: string, cwd = ROOT): Promise<CliResult> {
  // From another working directory (where a .env may be): tsx and the CLI by their absolute paths.
  const entry = cwd === ROOT ? ['tsx', 'src/admin/keys-cli.ts'] : [join(ROOT, 'node_modules/tsx/dist/loader.mjs'), join(ROOT, 'src/admin/keys-cli.ts')];
  const node = ['node', '--import', ...entry, ...args];
  const [command, argv] = asUser ? ['runuser', ['-u', asUser, '--', ...node]] : [node[0]!, node.slice(1)];
  try {
    const { stdout, stderr } = await run(command, argv, {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', API_KEYS_FILE: '/nonexistent/api-keys.json', ENV_FILE: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const created = (r: CliResult) => ({ id: /created (key_[0-9a-f]{12})/.exec(r.stdout)![1]!, key: /key: (mg_\S+)/.exec(r.stdout)![1]! });

/** One line on stderr, no stack trace. */
function oneLine(r: CliResult): string {
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return r.stderr.trimEnd();
}

/** The real server process on a free port, once its database is open and its admin socket listens. */
const startServer = (env: Record<string, string>) => startServerProcess({ API_KEYS_FILE: '/nonexistent/api-keys.json', ...env });

afterAll(() => removeTempDirs());

describe('npm run keys, embedded database', () => {
  let dataDir: string;
  let first: { id: string; key: string };

  beforeAll(async () => {
    dataDir = await pgliteDataDir();
  }, 180_000);

  it('no server running: the CLI opens DATA_DIR\'s database itself, and says so', async () => {
    const r = await keys({ DATA_DIR: dataDir }, ['create', '--label', 'alice']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`(no server is running on ${dataDir}: writing ${pglitePaths(dataDir).cluster} directly)\n`);
    expect(r.stdout).toMatch(new RegExp(`^created key_[0-9a-f]{12} \\(alice\\) in PGlite in ${pglitePaths(dataDir).cluster}\\nkey: mg_[A-Za-z0-9_-]{43}\\n`));
    first = created(r);
    const list = await keys({ DATA_DIR: dataDir }, ['list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([{ id: first.id, label: 'alice', created_at: expect.any(String), revoked_at: null, imported_from: null }]);
    expect(list.stdout).not.toContain(hashKey(first.key)); // never the hash, never the key
  }, 120_000);

  it('with the server running: create and revoke go through its admin socket, and the server applies them at once', async () => {
    const server = await startServer({ DATA_DIR: dataDir });
    try {
      const usage = (key: string) => fetch(`${server.url}/v1/usage`, { headers: { 'x-api-key': key } });
      // The key made while no server ran: in the database the server opened.
      const before = await usage(first.key);
      expect(before.status).toBe(200);
      expect(((await before.json()) as { data: { key_id: string } }).data.key_id).toBe(first.id);

      const r = await keys({ DATA_DIR: dataDir }, ['create', '--label', 'bob']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe(''); // through the server: it never opens the directory the server owns
      expect(r.stdout).toMatch(/^created key_[0-9a-f]{12} \(bob\) in the running server's database\n/);
      const bob = created(r);
      expect((await usage(bob.key)).status).toBe(200);

      const revoked = await keys({ DATA_DIR: dataDir }, ['revoke', first.id]);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stdout).toBe(`revoked ${first.id} (alice): the server refuses it from now on\n`);
      const refused = await usage(first.key);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'invalid or revoked API key' });
      expect((await usage(bob.key)).status).toBe(200);

      const again = await keys({ DATA_DIR: dataDir }, ['revoke', first.id]);
      expect(again.stdout).toMatch(new RegExp(`^${first.id} \\(alice\\) was already revoked at \\d{4}-`));
      const unknown = await keys({ DATA_DIR: dataDir }, ['revoke', 'key_000000000000']);
      expect(unknown.code).toBe(1);
      expect(oneLine(unknown)).toBe("keys: no key with id key_000000000000 in the running server's database");

      const list = await keys({ DATA_DIR: dataDir }, ['list']);
      expect(list.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 2).concat(l.split('\t')[3]!))).toEqual([
        [first.id, expect.stringMatching(/^revoked \d{4}-/), 'alice'],
        [bob.id, 'active', 'bob'],
      ]);
      expect(server.output()).not.toContain(bob.key);

      if (process.getuid?.() === 0) {
        // Another user (as root, CI and this machine: `nobody`) may look into DATA_DIR, but the socket is the server's (0600).
        chmodSync(dataDir, 0o755);
        const other = await keys({ DATA_DIR: dataDir }, ['list'], 'nobody');
        chmodSync(dataDir, 0o700);
        expect(other.code).toBe(1);
        expect(oneLine(other)).toBe(
          `keys: cannot reach the admin socket ${join(dataDir, 'admin.sock')} (EACCES): it (or DATA_DIR=${dataDir}) belongs to another user; run this command as the user the server runs as, or as root`,
        );
      }
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 180_000);

  it('refuses, in one line, when a process owns the directory but no admin socket answers', async () => {
    const lock = pglitePaths(dataDir).lock;
    writeFileSync(lock, `${process.pid}\n`);
    try {
      const r = await keys({ DATA_DIR: dataDir }, ['create', '--label', 'carol']);
      expect(r.code).toBe(1);
      expect(oneLine(r)).toMatch(
        new RegExp(`^keys: the server \\(process ${process.pid}\\) owns the embedded database in ${dataDir} but does not answer on its admin socket .*Retry once the server has started, or stop it first\\.$`),
      );
    } finally {
      rmSync(lock, { force: true });
    }
  }, 60_000);

  it('a DATA_DIR the user cannot write: one line naming the path and what to do, no stack trace', async () => {
    const parent = tempDir();
    const asRoot = process.getuid?.() === 0;
    // As root (CI, this machine) the CLI runs as `nobody` on a root-owned directory, like the image's node
    // user on a root-owned /app; otherwise the directory is made read-only.
    chmodSync(parent, asRoot ? 0o755 : 0o555);
    try {
      const r = await keys({ DATA_DIR: join(parent, 'data') }, ['create', '--label', 'dave'], asRoot ? 'nobody' : undefined);
      expect(r.code).toBe(1);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^\(no server is running on .*: creating the embedded database in .*\)$/);
      expect(lines.slice(1)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^keys: cannot write ${join(parent, 'data')} \\(EACCES\\): DATA_DIR=${join(parent, 'data')} must be writable by the user running this command \\(uid \\d+\\)\\. ` +
              'Run it as the user the server runs as \\(in the Docker image: docker exec CONTAINER node dist/admin/keys-cli\\.js …',
          ),
        ),
      ]);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    } finally {
      chmodSync(parent, 0o755);
    }
  }, 60_000);

  it('a label with control characters cannot forge rows: list and create show them escaped, --json keeps them as JSON escapes', async () => {
    // An escape sequence that clears the line and recolours, a carriage return, and a newline with a whole forged row after it.
    const label = `mallory\x1b[2K\x1b[32m\rkey_0000000000ff\tactive\n${'key_000000000000'}\tactive\t2026-01-01T00:00:00.000Z\tforged\u202e`;
    const r = await keys({ DATA_DIR: dataDir }, ['create', '--label', label]);
    expect(r.code, r.stderr).toBe(0);
    const shown = 'mallory\\x1b[2K\\x1b[32m\\x0dkey_0000000000ff\\x09active\\x0akey_000000000000\\x09active\\x092026-01-01T00:00:00.000Z\\x09forged\\u202e';
    expect(r.stdout.split('\n')[0]).toBe(`created ${created(r).id} (${shown}) in PGlite in ${pglitePaths(dataDir).cluster}`);
    const list = await keys({ DATA_DIR: dataDir }, ['list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u202e]/);
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(3); // alice, bob and mallory: one line each
    expect(rows.map((l) => l.split('\t'))).toContainEqual([created(r).id, 'active', expect.stringMatching(/^\d{4}-/), shown]);
    expect(rows.some((l) => l.includes('forged') && !l.startsWith(created(r).id))).toBe(false);
    const json = await keys({ DATA_DIR: dataDir }, ['list', '--json']);
    expect(json.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u202e]/);
    expect(JSON.parse(json.stdout).find((k: { id: string }) => k.id === created(r).id).label).toBe(label);
  }, 60_000);

  it('no database yet: list says so, revoke says there is nothing to revoke; usage errors exit 2', async () => {
    const empty = tempDir();
    const list = await keys({ DATA_DIR: empty }, ['list']);
    expect(list).toEqual({ code: 0, stdout: `no keys: there is no database in ${pglitePaths(empty).cluster} yet\n`, stderr: '' });
    const revoke = await keys({ DATA_DIR: empty }, ['revoke', 'key_0123456789ab']);
    expect(revoke.code).toBe(1);
    expect(oneLine(revoke)).toBe(`keys: no key with id key_0123456789ab: there is no database in ${pglitePaths(empty).cluster} yet`);
    const file = await keys({ DATA_DIR: empty }, ['create', '--label', 'x', '--file', 'keys.json']);
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/^keys: --file is gone: keys live in the database now/);
    const none = await keys({ DATA_DIR: empty }, []);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^keys: no command\nusage: npm run keys -- create --label NAME/);
  }, 60_000);

  it('reads .env in its working directory, under the environment; a bad value there is named with the file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), `DATA_DIR=${join(dir, 'from-dotenv')}\nAPI_KEYS_FILE=/nonexistent/dotenv-keys.json\n`);
    const list = await keys({ ENV_FILE: '.env' }, ['list'], undefined, dir);
    expect(list).toEqual({ code: 0, stdout: `no keys: there is no database in ${pglitePaths(join(dir, 'from-dotenv')).cluster} yet\n`, stderr: '' });
    const overridden = await keys({ ENV_FILE: '.env', DATA_DIR: join(dir, 'from-env') }, ['list'], undefined, dir);
    expect(overridden.stdout).toBe(`no keys: there is no database in ${pglitePaths(join(dir, 'from-env')).cluster} yet\n`);
    writeFileSync(join(dir, '.env'), 'DB_TIMEOUT_MS=soon\n');
    const bad = await keys({ ENV_FILE: '.env' }, ['list'], undefined, dir);
    expect(bad.code).toBe(1);
    expect(oneLine(bad)).toBe(
      `keys: invalid configuration: DB_TIMEOUT_MS="soon" is invalid: expected a whole number from 100 to 60000 (DB_TIMEOUT_MS set in ${join(dir, '.env')}; the environment overrides it)`,
    );
  }, 60_000);

  it('--help, -h and help print the usage on stdout and exit 0, whatever else is given', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['create', '--help'], ['revoke', 'key_0123456789ab', '-h']]) {
      const r = await keys({ DATA_DIR: '/nonexistent/data' }, args);
      expect(r, args.join(' ')).toEqual({ code: 0, stdout: expect.stringMatching(/^usage: npm run keys -- create --label NAME\n[^]*--help\n/), stderr: '' });
    }
  }, 60_000);
});

describe('npm run keys, PostgreSQL (DATABASE_URL)', () => {
  let postgres: TestPostgres;
  let url: string;

  beforeAll(async () => {
    postgres = await startPostgres();
    url = await postgres.createDatabase('keys_cli');
  }, 60_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it('writes the server directly: create, list, revoke; the same schema as the embedded database', async () => {
    const r = await keys({ DATABASE_URL: url }, ['create', '--label', 'erin']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^created key_[0-9a-f]{12} \\(erin\\) in PostgreSQL at 127\\.0\\.0\\.1:${postgres.port}/keys_cli\\n`));
    const { id } = created(r);
    expect((await keys({ DATABASE_URL: url }, ['list'])).stdout).toMatch(new RegExp(`^${id}\\tactive\\t\\d{4}-.*\\terin\\n$`));
    const revoked = await keys({ DATABASE_URL: url, API_KEYS_RELOAD_MS: '2000' }, ['revoke', id]);
    expect(revoked.stdout).toBe(`revoked ${id} (erin): running instances refuse it within API_KEYS_RELOAD_MS (2000 ms in this environment), their periodic check (no REDIS_URL to announce it at once)\n`);
    expect((await keys({ DATABASE_URL: url }, ['list'])).stdout).toMatch(new RegExp(`^${id}\\trevoked \\d{4}-`));
  }, 60_000);

  it('imports an existing API_KEYS_FILE once, before its first command', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'api-keys.json');
    writeFileSync(
      file,
      JSON.stringify({ keys: [{ id: 'key_00000000f11e', label: 'from the file', hash: hashKey('mg_old'), created_at: '2026-01-01T00:00:00.000Z', revoked_at: null }] }),
    );
    const first = await keys({ DATABASE_URL: url, API_KEYS_FILE: file }, ['list']);
    expect(first.stderr).toBe(`(API_KEYS_FILE ${file} imported into the database, once: 1 keys added, 0 revoked)\n`);
    expect(first.stdout).toMatch(/^key_00000000f11e\tactive\t2026-01-01T00:00:00.000Z\tfrom the file$/m);
    const second = await keys({ DATABASE_URL: url, API_KEYS_FILE: file }, ['list']);
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe(first.stdout);
    // A corrupt file is refused in one line, naming it.
    writeFileSync(file, '{"keys": [');
    const corrupt = await keys({ DATABASE_URL: url, API_KEYS_FILE: file }, ['list']);
    expect(corrupt.code).toBe(1);
    expect(oneLine(corrupt)).toMatch(new RegExp(`^keys: API_KEYS_FILE=${file} cannot be read: not valid JSON`));
  }, 60_000);

  it('a database that cannot be reached: one line naming it', async () => {
    const r = await keys({ DATABASE_URL: 'postgres://postgres@127.0.0.1:9/nothing', DB_TIMEOUT_MS: '500' }, ['list']);
    expect(r.code).toBe(1);
    expect(oneLine(r)).toMatch(/^keys: cannot open PostgreSQL at 127\.0\.0\.1:9\/nothing: .*ECONNREFUSED/);
  }, 60_000);
});
