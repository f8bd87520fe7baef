// The success envelope every endpoint answers with, the provenance of its data, and its
// serialisation. A handler that derives its `data` from a cached provider answer with `derived` serves
// the same object on every hit, so its JSON is made once and reused; only the small `meta` is
// serialised per request. (Derived objects must not be mutated once served.)
import type { Stamp } from './cache.ts';
import { isoNow } from './clock.ts';

export interface SourceMeta {
  provider: string;
  fetched_at: string;
  cached: boolean;
  age_s: number;
}

export interface Envelope<T> {
  data: T;
  meta: { timestamp: string; sources: SourceMeta[] } & Record<string, unknown>;
}

export function envelope<T>(data: T, sources: SourceMeta[], extra: Record<string, unknown> = {}): Envelope<T> {
  return { data, meta: { timestamp: isoNow(), sources, ...extra } };
}

export function sourceMeta(provider: string, fetchedAt: Stamp, cached: boolean, now = Date.now()): SourceMeta {
  return {
    provider,
    fetched_at: fetchedAt.iso,
    cached,
    age_s: Math.max(0, Math.round((now - fetchedAt.ms) / 100) / 10),
  };
}

/** One entry per provider: the oldest answer used (largest age), cached only if every answer was. */
export function mergeSourceMetas(metas: SourceMeta[]): SourceMeta[] {
  const byProvider = new Map<string, SourceMeta>();
  for (const m of metas) {
    const seen = byProvider.get(m.provider);
    if (!seen) {
      byProvider.set(m.provider, { ...m });
      continue;
    }
    const older = m.fetched_at < seen.fetched_at ? m : seen;
    byProvider.set(m.provider, { ...older, cached: seen.cached && m.cached });
  }
  return [...byProvider.values()];
}

const derivations = new WeakMap<object, Map<string, unknown>>();

/**
 * The result of `build` for one provider answer (`from`, an object the cache keeps serving) and a
 * `key` naming the rest of the inputs; built once, then the same object is returned. Pure handlers
 * use it so a cached answer costs no recomputation and, through `serialize`, no re-serialisation.
 */
export function derived<T>(from: object, key: string, build: () => T): T {
  let byKey = derivations.get(from);
  if (!byKey) derivations.set(from, (byKey = new Map()));
  if (byKey.has(key)) return byKey.get(key) as T;
  const value = build();
  byKey.set(key, value);
  if (value !== null && typeof value === 'object') serializedData.set(value, null);
  return value;
}

/** JSON text of `derived` objects (null until first serialised); other objects are not kept. */
const serializedData = new WeakMap<object, string | null>();

/** JSON of a response; the `data` of a derived (cached) answer is serialised once and its text reused. */
export function serialize(payload: unknown): string {
  const p = payload as Envelope<unknown> | null;
  if (p === null || typeof p !== 'object' || !('data' in p) || !('meta' in p) || typeof p.data !== 'object' || p.data === null) {
    return JSON.stringify(payload);
  }
  let data = serializedData.get(p.data);
  if (data === undefined) return JSON.stringify(p);
  if (data === null) serializedData.set(p.data, (data = JSON.stringify(p.data)));
  return `{"data":${data},"meta":${JSON.stringify(p.meta)}}`;
}
