// Small files with one job: no source file of src/ is over 400 lines. One is exempt: src/client/openapi-types.ts,
// generated from openapi/openapi.json by `npm run docs` (openapi-typescript), which no one edits by hand.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');
const MAX_LINES = 400;
/** Generated, not written: exempt. */
const GENERATED = new Set(['client/openapi-types.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Lines as `wc -l` counts them. */
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').length - 1;

describe('file sizes', () => {
  const files = sourceFiles(SRC).map((path) => ({ file: relative(SRC, path), lines: lines(path) }));

  it(`no source file is over ${MAX_LINES} lines (the generated client types excepted)`, () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files.filter((f) => f.lines > MAX_LINES && !GENERATED.has(f.file))).toEqual([]);
  });

  it('the exempt file is still there and still generated (else the exemption goes)', () => {
    const generated = files.find((f) => f.file === 'client/openapi-types.ts');
    expect(generated?.lines).toBeGreaterThan(MAX_LINES);
    expect(readFileSync(join(SRC, 'client/openapi-types.ts'), 'utf8')).toMatch(/generated/i);
  });
});
