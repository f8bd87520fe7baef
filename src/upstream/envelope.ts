// The success envelope every endpoint answers with, the provenance of its data, and its
// serialisation. A handler that derives its `data` from a cached provider answer with `derived` serves
// the same object on every hit, so its JSON is made once and reused; only the small `meta` is
// serialised per request. (Derived objects must not be mutated once served.)
import type { Stamp } from './cache.ts';
import { isoNow } from '../lib/clock.ts';

/**
 * Until when (epoch ms) an answer may be served again as it is (answer-memo.ts): on a source's meta,
 * when its cached answer stops serving the caller that asked (fetched + that caller's TTL); on an
 * envelope, when a handler's own reading of time changes its data (sentiment's next update). Symbol
 * keys are copied by spreads and never serialised.
 */
export const FRESH_UNTIL = Symbol('freshUntil');

export interface SourceMeta {
  provider: string;
  fetched_at: string;
  cached: boolean;
  age_s: number;
  [FRESH_UNTIL]?: number;
}

export interface Envelope<T> {
  data: T;
  meta: { timestamp: string; sources: SourceMeta[] } & Record<string, unknown>;
  [FRESH_UNTIL]?: number;
}

/** The answer of a route; `freshUntil` when its data reads the time (see FRESH_UNTIL). */
export function envelope<T>(data: T, sources: SourceMeta[], extra: Record<string, unknown> = {}, freshUntil?: number): Envelope<T> {
  const answer: Envelope<T> = { data, meta: { timestamp: isoNow(), sources, ...extra } };
  if (freshUntil !== undefined) answer[FRESH_UNTIL] = freshUntil;
  return answer;
}

/** Seconds since `fetchedMs`, to a tenth. */
export const ageOf = (fetchedMs: number, now: number) => Math.max(0, Math.round((now - fetchedMs) / 100) / 10);

export function sourceMeta(provider: string, fetchedAt: Stamp, cached: boolean, now = Date.now(), freshUntil?: number): SourceMeta {
  const meta: SourceMeta = { provider, fetched_at: fetchedAt.iso, cached, age_s: ageOf(fetchedAt.ms, now) };
  if (freshUntil !== undefined) meta[FRESH_UNTIL] = freshUntil;
  return meta;
}

/** One entry per provider: the oldest answer used (largest age), cached only if every answer was, fresh while all are. */
export function mergeSourceMetas(metas: SourceMeta[]): SourceMeta[] {
  const byProvider = new Map<string, SourceMeta>();
  for (const m of metas) {
    const seen = byProvider.get(m.provider);
    if (!seen) {
      byProvider.set(m.provider, { ...m });
      continue;
    }
    const older = m.fetched_at < seen.fetched_at ? m : seen;
    const merged: SourceMeta = { ...older, cached: seen.cached && m.cached };
    const a = seen[FRESH_UNTIL];
    const b = m[FRESH_UNTIL];
    if (a === undefined || b === undefined) delete merged[FRESH_UNTIL];
    else merged[FRESH_UNTIL] = Math.min(a, b);
    byProvider.set(m.provider, merged);
  }
  return [...byProvider.values()];
}

const derivations = new WeakMap<object, Map<string, unknown>>();

/**
 * How many results are kept per provider answer. Their keys come from requests (a limit, an address, a
 * countdown that moves every second), so without a bound one cached answer could gather results without
 * end while it is served; past it the oldest goes (built again if asked for).
 */
export const MAX_DERIVATIONS = 64;

/**
 * The result of `build` for one provider answer (`from`, an object the cache keeps serving) and a
 * `key` naming the rest of the inputs; built once, then the same object is returned. Pure handlers
 * use it so a cached answer costs no recomputation and, through `serialize`, no re-serialisation.
 * The results go with the answer (a WeakMap keyed by it), at most MAX_DERIVATIONS of them.
 */
export function derived<T>(from: object, key: string, build: () => T): T {
  let byKey = derivations.get(from);
  if (!byKey) derivations.set(from, (byKey = new Map()));
  if (byKey.has(key)) return byKey.get(key) as T;
  const value = build();
  if (byKey.size >= MAX_DERIVATIONS) byKey.delete(byKey.keys().next().value!);
  byKey.set(key, value);
  if (value !== null && typeof value === 'object') serializedData.set(value, null);
  return value;
}

/** JSON text of `derived` objects (null until first serialised); other objects are not kept. */
const serializedData = new WeakMap<object, string | null>();

/** The JSON text of `data` when it is a derived answer (a pure function of cached provider answers), else undefined. */
export function derivedJson(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  let text = serializedData.get(data);
  if (text === undefined) return undefined;
  if (text === null) serializedData.set(data, (text = JSON.stringify(data)));
  return text;
}

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
