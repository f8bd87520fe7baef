// Layers point one way. Sources (and the pure layers below them) never import the route catalog,
// the routes or the access code; the HTTP layer imports none of the layers above it; and no two
// files import each other's values in a circle. Type-only imports count for the layer rules too.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /^(?:import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;

const imports: Import[] = sourceFiles(SRC).flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(IMPORT)]
    .map((m) => ({ from: relative(SRC, file), to: relative(SRC, resolve(dirname(file), m[2]!)), typeOnly: Boolean(m[1]) }))
    .filter((i) => existsSync(join(SRC, i.to))),
);

/** Files under `layer` (a folder of src/) that import anything under one of `forbidden`. */
function crossings(layer: string, forbidden: string[]): string[] {
  return imports
    .filter((i) => i.from.startsWith(`${layer}/`) && forbidden.some((f) => i.to === f || i.to.startsWith(`${f}/`)))
    .map((i) => `${i.from} → ${i.to}`);
}

describe('layers', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    expect(imports.length).toBeGreaterThan(200);
    expect(imports).toContainEqual({ from: 'sources/evm-rpc.ts', to: 'params/evm-address.ts', typeOnly: false });
  });

  it('sources import no route catalog, routes, access or app code', () => {
    expect(crossings('sources', ['catalog', 'market', 'risk', 'access', 'metrics', 'app.ts', 'config.ts'])).toEqual([]);
  });

  it('the pure layers (params, analytics, data) import nothing above them', () => {
    for (const layer of ['params', 'analytics', 'data']) {
      expect(crossings(layer, ['sources', 'catalog', 'market', 'risk', 'access', 'metrics', 'app.ts', 'config.ts']), layer).toEqual([]);
    }
  });

  it('the database layer imports no route catalog, routes, access, app or config code (the CLIs load it alone)', () => {
    expect(crossings('db', ['catalog', 'market', 'risk', 'access', 'admin', 'app.ts', 'config.ts'])).toEqual([]);
  });

  it('the HTTP layer imports no catalog, routes, sources or access code', () => {
    expect(crossings('http', ['catalog', 'market', 'risk', 'sources', 'access', 'metrics', 'app.ts', 'config.ts'])).toEqual([]);
  });

  it('metrics implement the recorders the HTTP layer declares, and import nothing above it', () => {
    expect(crossings('metrics', ['catalog', 'market', 'risk', 'sources', 'access', 'app.ts', 'config.ts'])).toEqual([]);
  });

  it('no import circle between files (value imports)', () => {
    const graph = new Map<string, string[]>();
    for (const i of imports) if (!i.typeOnly) graph.set(i.from, [...(graph.get(i.from) ?? []), i.to]);
    const circles: string[][] = [];
    const state = new Map<string, 'open' | 'done'>();
    const walk = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') return void circles.push([...path.slice(path.indexOf(file)), file]);
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) walk(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) walk(file, []);
    expect(circles).toEqual([]);
  });
});
