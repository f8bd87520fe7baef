// `npm start`'s first compile (scripts/build-if-stale.mjs) says what it does, that it is alive (the elapsed time
// every few seconds) and what comes next. Run in a copy of the script beside a stand-in compiler that finishes
// when the test tells it to (through the stdin it inherits), so nothing waits for a real compile.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A checkout of the script's shape whose "tsc" waits for a line on stdin, then exits with that line's number. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'mg-build-'));
  dirs.push(root);
  for (const dir of ['scripts', 'src', 'dist', 'node_modules/typescript/bin']) mkdirSync(join(root, dir), { recursive: true });
  copyFileSync('scripts/build-if-stale.mjs', join(root, 'scripts/build-if-stale.mjs'));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'src/server.ts']) writeFileSync(join(root, file), '{}');
  writeFileSync(
    join(root, 'node_modules/typescript/bin/tsc'),
    "process.stdin.once('data', (d) => { if (Number(d) === 0) require('fs').writeFileSync(__dirname + '/../../../dist/server.js', ''); process.exit(Number(d)); });\n",
  );
  writeFileSync(join(root, 'node_modules/typescript/package.json'), '{"type":"commonjs"}');
  return root;
}

function build(root: string) {
  const child = spawn(process.execPath, [join(root, 'scripts/build-if-stale.mjs')], { env: { ...process.env, MARKETGATE_BUILD_PROGRESS_MS: '50' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stderr.on('data', (d) => {
    stderr += d;
    waiters.forEach((w) => w());
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  /** Resolves once stderr holds `n` progress lines. */
  const progressLines = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (stderr.match(/still compiling \(\d+ s\) …/g)?.length ?? 0) >= n && resolve();
      waiters.push(check);
      check();
    });
  return { child, exited, progressLines, stderr: () => stderr };
}

describe('the first `npm start` compile', () => {
  it('says what it does and what comes next, the elapsed time while it runs, and when it is done', async () => {
    const root = checkout();
    const b = build(root);
    await b.progressLines(2);
    expect(b.stderr()).toMatch(/^compiling src\/ to dist\/ \(first start\); this takes from 15 s to a few minutes on a slow machine, then the server starts and logs "Server listening at …"\n/);
    b.child.stdin.write('0\n');
    expect(await b.exited).toBe(0);
    expect(b.stderr()).toMatch(/compiled in \d+ s; starting the server\n$/);
    expect(existsSync(join(root, 'dist/.source-hash'))).toBe(true);
  });

  it('a failed compile says so, and that the server was not started', async () => {
    const b = build(checkout());
    await b.progressLines(1);
    b.child.stdin.write('2\n');
    expect(await b.exited).toBe(2);
    expect(b.stderr()).toMatch(/compiling failed after \d+ s \(exit 2\): the server was not started\n$/);
  });
});
