// The embedded database stays on V8's baseline WebAssembly code while lightly used (the tiering budget set in
// src/db/pglite.ts): under V8's default tiering budget, PostgreSQL's functions were recompiled by the
// optimising compiler while the server served (0.4 to 0.6 s more CPU to open the database, bursts of up to
// 190 ms later), for no measurable gain. V8 says how it compiled each function when asked
// (--trace-wasm-compilation-times).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';

const run = promisify(execFile);
afterAll(removeTempDirs);

/** Per WebAssembly module (V8 names each by an address), how its functions were compiled: `Liftoff` or `TurboFan`. */
function compiledByModule(trace: string): Map<string, string[]> {
  const modules = new Map<string, string[]>();
  for (const m of trace.matchAll(/^Compiled function (0x[0-9a-f]+)#\d+ using (\w+)/gm)) {
    if (!modules.has(m[1]!)) modules.set(m[1]!, []);
    modules.get(m[1]!)!.push(m[2]!);
  }
  return modules;
}

describe('PGlite on baseline code', () => {
  it('opens, and runs 60 statements (what the usage counter and the key checks run in minutes), compiling none of its functions with TurboFan', async () => {
    const dir = await pgliteDataDir();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--trace-wasm-compilation-times', 'test/db/pglite-statements.ts', dir, '20'], {
      maxBuffer: 1 << 26,
    });
    expect(stdout).toContain('done');
    // PostgreSQL is the module of thousands of functions (tsx's own small one, about 50, compiled before the
    // database's flag is set, is not the server's: the compiled server does not load it). How many of them
    // V8 compiled before the process ended depends on the machine's load: each function the statements call
    // is compiled when first called, the rest in the background (2,290 on a quiet machine, 932 on a loaded one).
    const [pglite] = [...compiledByModule(stdout).values()].sort((a, b) => b.length - a.length);
    expect(pglite!.length).toBeGreaterThan(500);
    expect(pglite!.filter((tier) => tier !== 'Liftoff')).toEqual([]);
  }, 120_000);
});
