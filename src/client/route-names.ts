// One name per route, from its path alone, shared by the client's typed methods (camelCase: `fundingOi`) and
// the MCP server's tools (snake_case: `funding_oi`): the path's last segment, `-` as a word break. When two
// paths end in the same segment (`/health` and `/risk/health`), the shorter path keeps the bare name and the
// others take their first segment as a prefix (`risk_health`); equal lengths are ordered alphabetically, so the
// result never depends on the order a document lists its paths in.

export type NameStyle = 'camel' | 'snake';

function words(path: string): string[] {
  return path.split('/').filter(Boolean).at(-1)!.split(/[-_]/).filter(Boolean);
}

function join(parts: string[], style: NameStyle): string {
  const lower = parts.map((w) => w.toLowerCase());
  return style === 'snake' ? lower.join('_') : lower.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
}

/** Each path's name, collisions resolved as the header says; throws if a prefixed name still collides. */
export function routeNames(paths: readonly string[], style: NameStyle): Map<string, string> {
  const groups = new Map<string, string[]>();
  for (const path of paths) {
    const base = join(words(path), style);
    groups.set(base, [...(groups.get(base) ?? []), path]);
  }
  const names = new Map<string, string>();
  const taken = new Map<string, string>();
  for (const [base, group] of groups) {
    const ordered = [...group].sort((a, b) => segments(a).length - segments(b).length || (a < b ? -1 : a > b ? 1 : 0));
    ordered.forEach((path, i) => {
      const name = i === 0 ? base : join([segments(path)[0]!, ...words(path)], style);
      const other = taken.get(name);
      if (other !== undefined) throw new Error(`route names: ${path} and ${other} both map to "${name}"`);
      taken.set(name, path);
      names.set(path, name);
    });
  }
  return names;
}

function segments(path: string): string[] {
  return path.split('/').filter(Boolean);
}
