// `npm start` runs this first: it compiles src/ to dist/ only when dist/ was not built from the sources
// as they are now (a content hash of src/ and the build settings, kept in dist/.source-hash). A restart
// of an unchanged checkout starts the compiled server at once instead of recompiling (~15 s) every time;
// a fresh clone, or any edit, still builds. Plain JavaScript, so it runs before anything is compiled.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stampFile = join(root, 'dist', '.source-hash');

function files(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    });
}

const inputs = [...files(join(root, 'src')), join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json'), join(root, 'package.json')];
const hash = createHash('sha256');
for (const file of inputs) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
const current = hash.digest('hex');

const built = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : '';
const fresh = built === current && existsSync(join(root, 'dist', 'server.js'));
// --check: only say whether dist/ is current (exit 0) or would be rebuilt (exit 1).
if (process.argv.includes('--check')) process.exit(fresh ? 0 : 1);
if (fresh) process.exit(0);

// The first compile takes minutes on a slow machine: say what is happening, that it is still alive (the elapsed
// time every few seconds, MARKETGATE_BUILD_PROGRESS_MS), and what comes after it.
const started = Date.now();
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
console.error(
  `${built ? 'src/ changed since the last build: compiling to dist/' : 'compiling src/ to dist/ (first start)'}; ` +
    'this takes from 15 s to a few minutes on a slow machine, then the server starts and logs "Server listening at …"',
);
const every = Number(process.env.MARKETGATE_BUILD_PROGRESS_MS) || 5000;
const progress = setInterval(() => console.error(`still compiling (${elapsed()}) …`), every);
const tsc = spawn(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
const [code, signal] = await new Promise((resolve) => tsc.on('exit', (c, s) => resolve([c, s])));
clearInterval(progress);
if (code !== 0) {
  console.error(`compiling failed after ${elapsed()} (${signal ?? `exit ${code}`}): the server was not started`);
  process.exit(code ?? 1);
}
writeFileSync(stampFile, `${current}\n`);
console.error(`compiled in ${elapsed()}; starting the server`);
