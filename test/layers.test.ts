// Layers point one way. src/ is a stack of layers, named once below, bottom first: a file imports files of its
// own layer and of the layers below it, never of a layer above; type-only imports count, as do dynamic
// import()s. No files import each other in a circle, type-only or not, inside a layer or across. The client
// (shipped as marketgate/client) and the MCP server over it are a stack of their own, apart from the server's.
// Where each folder stands, and why, is drawn in docs/developing/architecture.md ("Layers").
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The server's layers, bottom first: each a folder of src/ (or a file at its root). */
export const LAYERS = [
  'lib', // ground utilities: no import of the project at all
  'params', // pure: parameter rules
  'data', // pure: data files shipped with the server
  'analytics', // pure: computations over data
  'upstream', // the guarded HTTP client, the cache, the envelope of provider answers
  'sources', // one file per upstream provider
  'db', // storage: every SQL statement
  'redis', // storage shared by several instances
  'edge', // the server's own HTTP edge: hooks, validation, errors, the answers served again
  'metrics', // Prometheus recorders of what the layers below declare
  'catalog', // the route core: defineRoute, the catalog, the route context, mounting
  'access', // API keys, rate limits, grants, usage
  'payments', // x402: the protocol core and its Fastify adapter, one entry
  'config.ts', // every module's settings, composed and parsed once
  'risk', // interface A's routes
  'market', // interface B's routes
  'reference', // what is generated from the whole catalog: OpenAPI, llms.txt, the agent card
  'admin', // the admin socket and the operator CLIs
  'app.ts', // what the server is made of
  'server.ts', // start-up, listen, shutdown
] as const;

/** Apart from the server: the typed client imports none of it, and the MCP server only the client. */
export const APART = ['client', 'mcp'] as const;

const STACKS: readonly (readonly string[])[] = [LAYERS, APART];
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

/**
 * Static imports and re-exports (`import type` marked), side-effect imports, and import() with a literal path or a
 * template literal (up to its first `${`: the folder it loads from), of the project's files or of packages.
 */
const IMPORT = /^(?:import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*(?:['"]([^'"]+)['"]|`([^`$]+))/gm;

interface Specifier extends Import {
  /** The module as written: a relative path, or a package. */
  spec: string;
}

export function specifiers(file: string, text: string): Specifier[] {
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = (m[2] ?? m[3] ?? m[4])!;
    const local = spec.startsWith('./') || spec.startsWith('../');
    return { from: relative(SRC, file), to: local ? relative(SRC, resolve(dirname(file), spec)) : spec, typeOnly: Boolean(m[1]), spec };
  });
}

const allSpecifiers: Specifier[] = sourceFiles(SRC).flatMap((file) => specifiers(file, readFileSync(file, 'utf8')));
const imports: Import[] = allSpecifiers.filter((i) => i.spec.startsWith('.')).map(({ from, to, typeOnly }) => ({ from, to, typeOnly }));

/** The stack and the height of a file's layer: its folder under src/, or itself at the root. */
function layerOf(file: string): { stack: number; height: number } | undefined {
  const top = file.split('/')[0]!;
  for (const [stack, layers] of STACKS.entries()) {
    const height = layers.indexOf(top);
    if (height >= 0) return { stack, height };
  }
  return undefined;
}

/** Imports that run up the stack, or from one stack into the other. */
export function upward(list: readonly Import[]): string[] {
  return list.flatMap((i) => {
    const from = layerOf(i.from);
    const to = layerOf(i.to);
    if (!from || !to) return [];
    const wrong = from.stack !== to.stack || to.height > from.height;
    return wrong ? [`${i.from} → ${i.to}${i.typeOnly ? ' (type)' : ''}`] : [];
  });
}

/** Every circle of files (strongly connected components of the import graph, Tarjan's), each as its files. */
export function circles(list: readonly Import[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const i of list) graph.set(i.from, [...(graph.get(i.from) ?? []), i.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/**
 * Inside payments: the core (payments/core/) and each scheme (payments/schemes/<scheme>-<family>/) import no
 * Fastify and none of payments' wiring (fastify.ts, request-adapter.ts, x402.ts, install.ts: only its settings);
 * the core imports no scheme, and no scheme imports another.
 */
export function paymentsBreaches(list: readonly Specifier[]): string[] {
  const PAYMENTS = 'payments/';
  const part = (file: string): string | undefined => {
    if (!file.startsWith(PAYMENTS)) return undefined;
    const rest = file.slice(PAYMENTS.length).split('/');
    if (rest[0] === 'core') return 'core';
    if (rest[0] === 'schemes' && rest.length > 2) return `schemes/${rest[1]}`;
    if (rest[0] === 'schemes') return 'schemes';
    return 'root';
  };
  const ROOT_ALLOWED = new Set(['payments/settings.ts', 'payments/networks.ts']);
  return list.flatMap((i) => {
    const from = part(i.from);
    if (!from || from === 'root') return [];
    const say = (why: string) => [`${i.from} → ${i.to}${i.typeOnly ? ' (type)' : ''}: ${why}`];
    if (i.spec === 'fastify' || i.spec.startsWith('fastify/') || i.spec.startsWith('@fastify/')) return say('Fastify outside payments/fastify.ts');
    const to = part(i.to);
    if (!to) return [];
    if (to === 'root' && !ROOT_ALLOWED.has(i.to)) return say("payments' wiring");
    if (from === 'core' && to.startsWith('schemes')) return say('a scheme, from the core');
    if (from.startsWith('schemes/') && to.startsWith('schemes') && to !== from) return say('another scheme');
    return [];
  });
}

describe('layers', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(imports).toContainEqual({ from: 'sources/evm-rpc.ts', to: 'params/evm-address.ts', typeOnly: false });
    expect(imports.some((i) => i.typeOnly)).toBe(true);
  });

  it('places every folder and root file of src/ in a layer', () => {
    const unplaced = readdirSync(SRC).filter((name) => (name.endsWith('.ts') || statSync(join(SRC, name)).isDirectory()) && !layerOf(name));
    expect(unplaced).toEqual([]);
  });

  it('no file imports a layer above its own (type-only imports and import() included), nor across the two stacks', () => {
    expect(upward(imports)).toEqual([]);
  });

  it('no files import each other in a circle (type-only imports included)', () => {
    expect(circles(imports)).toEqual([]);
  });

  it('payments: the core and the schemes import no Fastify and no wiring; the core no scheme; no scheme another', () => {
    expect(allSpecifiers.some((i) => i.from.startsWith('payments/schemes/exact-evm/'))).toBe(true);
    expect(paymentsBreaches(allSpecifiers)).toEqual([]);
  });

  it('the payments checks catch what they are for (template-literal import() included)', () => {
    const file = (path: string) => resolve(SRC, path);
    const found = [
      ...specifiers(file('payments/core/a.ts'), "import type { FastifyRequest } from 'fastify';\nimport { x } from '../schemes/exact-evm/b.ts';\nimport { y } from '../fastify.ts';\nimport { s } from '../settings.ts';"),
      ...specifiers(file('payments/schemes/svm-exact/c.ts'), 'const m = await import(`../exact-evm/${name}.ts`);\nimport { z } from "../../core/scheme.ts";'),
      ...specifiers(file('payments/fastify.ts'), "import type { FastifyRequest } from 'fastify';"),
    ];
    expect(paymentsBreaches(found)).toEqual([
      'payments/core/a.ts → fastify (type): Fastify outside payments/fastify.ts',
      'payments/core/a.ts → payments/schemes/exact-evm/b.ts: a scheme, from the core',
      "payments/core/a.ts → payments/fastify.ts: payments' wiring",
      'payments/schemes/svm-exact/c.ts → payments/schemes/exact-evm: another scheme',
    ]);
  });

  it('the checks catch what they are for', () => {
    const made = (from: string, to: string, typeOnly = false): Import => ({ from, to, typeOnly });
    expect(upward([made('db/x.ts', 'access/y.ts', true), made('access/y.ts', 'db/x.ts'), made('mcp/a.ts', 'lib/b.ts'), made('lib/b.ts', 'client/c.ts')])).toEqual([
      'db/x.ts → access/y.ts (type)',
      'mcp/a.ts → lib/b.ts',
      'lib/b.ts → client/c.ts',
    ]);
    expect(circles([made('a.ts', 'b.ts', true), made('b.ts', 'c.ts'), made('c.ts', 'a.ts'), made('c.ts', 'd.ts')])).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
