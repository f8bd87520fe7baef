// The README and the pages of docs/ stay true: the README fits on a few screens (15,000 bytes at most),
// every npm command they name is one package.json has, every repository path and relative link they name
// exists, and every anchor they link to is a heading of its page (GitHub's anchors). The code, tests and
// configuration files that point into the documentation are held to the same rule.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const README_MAX_BYTES = 15_000;
/** npm's own commands the pages may name besides package.json's scripts. */
const NPM_COMMANDS = new Set(['ci', 'install', 'i', 'exec', 'view', 'pack']);
/** Top-level folders whose paths the pages name (dist/ is built: its files are checked against src/). */
const REPO_DIRS = ['src', 'test', 'docs', 'bench', 'scripts', 'openapi', '.ci', 'dist'];
const REPO_PATH = new RegExp(String.raw`(?<![\w@.\/-])(?:\.\/)?(?:${REPO_DIRS.map((d) => d.replace('.', '\\.')).join('|')})\/[\w.\/{},-]*`, 'g');

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path, keep) : keep(path) ? [path] : [];
  });
}

/** The documentation: the README, every page of docs/, bench/README.md. */
const PAGES = ['README.md', ...filesUnder('docs', (p) => p.endsWith('.md')), 'bench/README.md'];

/** A markdown text split into prose and code (fenced blocks and inline code spans, `one` or ``two `ticks` ``). */
export function splitCode(markdown: string): { prose: string; code: string } {
  const prose: string[] = [];
  const code: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) code.push(line);
    else prose.push(line.replace(/``.*?``|`[^`]*`/g, (span) => (code.push(span.replace(/^`+|`+$/g, '')), ' ')));
  }
  return { prose: prose.join('\n'), code: code.join('\n') };
}

/** GitHub's anchor of a heading: its text lower-cased, punctuation dropped (hyphens and underscores kept), spaces → hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a markdown page has: one per heading (outside code), repeats numbered as GitHub numbers them. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** `a/{b,c}.ts` → `a/b.ts`, `a/c.ts`. */
function expandBraces(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path);
  if (!m) return [path];
  return m[1]!.split(',').flatMap((alt) => expandBraces(path.slice(0, m.index) + alt + path.slice(m.index + m[0].length)));
}

/** Whether a file or folder's path starts with `prefix` (`src/market/onchain/chain-`, `test/fixtures/upstream/`). */
function somethingStartsWith(prefix: string): boolean {
  const dir = prefix.endsWith('/') ? prefix : dirname(prefix);
  const start = prefix.endsWith('/') ? '' : basename(prefix);
  return existsSync(join(ROOT, dir)) && readdirSync(join(ROOT, dir)).some((name) => name.startsWith(start));
}

/** What is wrong with each repository path a text names (relative to the repository's root). */
export function missingPaths(text: string): string[] {
  const missing: string[] = [];
  for (const m of text.matchAll(REPO_PATH)) {
    const named = m[0].replace(/^\.\//, '').replace(/[.,]+$/, '');
    if (named.includes('{') !== named.includes('}')) continue; // a brace group cut by the match: checked by its whole form
    // A path cut by a wildcard, a placeholder or a template (`chain-*.ts`, `<name>.json`, `${name}`) names a prefix.
    const prefix = /^[*<$[]/.test(text.slice(m.index + m[0].length)) && named === m[0];
    for (const path of expandBraces(named)) {
      // dist/ is what `npm run build` makes of src/: a compiled file stands for its source.
      const file = path.startsWith('dist/') ? (path.endsWith('.js') ? `src/${path.slice(5, -3)}.ts` : undefined) : path;
      if (file === undefined) continue;
      if (!(prefix ? somethingStartsWith(file) : existsSync(join(ROOT, file)))) missing.push(path);
    }
  }
  return missing;
}

/** What is wrong with each command a page names: `npm run X` anywhere, `npm X` in its code. */
export function unknownCommands(markdown: string, scripts: Record<string, string>): string[] {
  const { code } = splitCode(markdown);
  const unknown: string[] = [];
  for (const [, name] of markdown.matchAll(/\bnpm\s+run\s+(?:--silent\s+)?([\w:.-]+)/g)) if (!(name! in scripts)) unknown.push(`npm run ${name}`);
  for (const [, name] of code.matchAll(/(?<![\w-])npm\s+(?!run\b)([a-z][\w-]*)/g)) {
    if (!(name! in scripts) && !NPM_COMMANDS.has(name!)) unknown.push(`npm ${name}`);
  }
  return unknown;
}

/** What is wrong with each relative link of a page (its path, then its anchor). */
export function brokenLinks(page: string, markdown: string, readPage: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const [link, target] of splitCode(markdown).prose.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][\w+.-]*:/i.test(target!)) continue; // https:, mailto:
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const file = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), path));
    if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
      broken.push(`${link}: no ${file}`);
      continue;
    }
    if (anchor === undefined) continue;
    const text = file.endsWith('.md') ? readPage(file) : undefined;
    if (text === undefined) broken.push(`${link}: ${file} has no headings`);
    else if (!anchorsOf(text).has(anchor)) broken.push(`${link}: ${file} has no heading #${anchor}`);
  }
  return broken;
}

const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
const readPage = (path: string) => (existsSync(join(ROOT, path)) ? read(path) : undefined);

describe('the README', () => {
  const readme = read('README.md');

  it(`is at most ${README_MAX_BYTES.toLocaleString('en')} bytes`, () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('names the test command CI runs, and the start command', () => {
    const ci = read('.ci/run');
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci.trim().split('\n').at(-1)).toBe('npm test');
    expect(splitCode(readme).code).toContain('npm ci && npm test');
    expect(splitCode(readme).code).toContain('npm ci && npm start');
  });

  it('links to every part of the documentation: the index of docs/ and the benchmarks', () => {
    const links = brokenLinks('README.md', readme, readPage);
    expect(links).toEqual([]);
    expect(readme.includes('](docs/README.md)'), 'a link to docs/README.md').toBe(true);
    expect(readme.includes('](bench/README.md)'), 'a link to bench/README.md').toBe(true);
  });
});

describe('every page of the documentation', () => {
  it('finds the pages it checks (the README, docs/ by audience, bench/README.md)', () => {
    expect(PAGES).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/operating/configuration.md', 'docs/using/providers.md', 'bench/README.md']));
    expect(PAGES.length).toBeGreaterThan(25);
  });

  it.each(PAGES)('%s: every npm command it names exists', (page) => {
    expect(unknownCommands(read(page), scripts)).toEqual([]);
  });

  it.each(PAGES)('%s: every repository path it names exists', (page) => {
    expect(missingPaths(read(page))).toEqual([]);
  });

  it.each(PAGES)('%s: every relative link and anchor it has leads somewhere', (page) => {
    expect(brokenLinks(page, read(page), readPage)).toEqual([]);
  });

  it('every page of docs/ is listed in its index, docs/README.md', () => {
    const index = read('docs/README.md');
    const listed = new Set([...index.matchAll(/\]\(([^)#\s]+)/g)].map(([, target]) => relative(ROOT, resolve(ROOT, 'docs', target!))));
    expect(PAGES.filter((p) => p.startsWith('docs/') && p !== 'docs/README.md' && !listed.has(p))).toEqual([]);
  });
});

describe('what points into the documentation from the code', () => {
  const files = [
    ...['src', 'test', 'scripts', 'bench'].flatMap((dir) =>
      // (this file names missing paths on purpose, to check the checks)
      filesUnder(dir, (p) => /\.(ts|mjs|json|yaml)$/.test(p) && !p.startsWith('test/fixtures/') && p !== 'test/docs.test.ts'),
    ),
    'compose.yaml',
    'Dockerfile',
    '.ci/run',
  ];

  it('every repository path a source file, test, script or configuration file names exists', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => missingPaths(read(f)).map((p) => `${f}: ${p}`))).toEqual([]);
  });

  it('every page anchor they name is a heading of that page', () => {
    const wrong: string[] = [];
    for (const f of files) {
      for (const [ref, page, anchor] of read(f).matchAll(/((?:docs|bench)\/[\w\/.-]+\.md|README\.md)#([\w-]+)/g)) {
        const text = readPage(page!);
        if (!text || !anchorsOf(text).has(anchor!)) wrong.push(`${f}: ${ref}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it("make GitHub's anchors, and tell code from prose", () => {
    expect(slug('Interface A — token risk')).toBe('interface-a--token-risk');
    expect(slug("How GoPlus's fields are read")).toBe('how-gopluss-fields-are-read');
    expect(slug('Per-key usage and `GET /v1/usage`')).toBe('per-key-usage-and-get-v1usage');
    expect(slug('`DATA_DIR`')).toBe('data_dir');
    expect(slug('Storage: the ledger database')).toBe('storage-the-ledger-database');
    expect([...anchorsOf('# A\n## B\n```\n# not a heading\n```\n## B\n')]).toEqual(['a', 'b', 'b-1']);
    expect(splitCode('x ``a `b` `` y `c`\n```sh\nnpm test\n```')).toEqual({ prose: 'x   y  ', code: 'a `b` \nc\nnpm test' });
  });

  it('find a missing path, a compiled file without its source, an unknown command, a broken link or anchor', () => {
    expect(missingPaths('see `src/config.ts`, `src/nope.ts` and `node dist/server.js`, `dist/nope.js`; `src/market/analytics/{atr,nope}.ts`.')).toEqual([
      'src/nope.ts',
      'dist/nope.js',
      'src/market/analytics/nope.ts',
    ]);
    expect(missingPaths('`src/market/onchain/chain-*.ts`, `test/fixtures/upstream/<name>.json`, `src/market/nope-*.ts`')).toEqual(['src/market/nope-']);
    expect(unknownCommands('```sh\nnpm ci && npm test\nnpm run bench:nope\nnpm frobnicate\n```\nnpm and apt', scripts)).toEqual(['npm run bench:nope', 'npm frobnicate']);
    const page = '# Title\n[ok](#title) [gone](#nope) [page](docs/README.md#using-the-api) [missing](docs/nope.md) `[code](nope.md)`';
    expect(brokenLinks('README.md', page, (p) => (p === 'README.md' ? page : readPage(p)))).toEqual(['[gone](#nope): README.md has no heading #nope', '[missing](docs/nope.md): no docs/nope.md']);
  });
});
