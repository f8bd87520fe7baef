// The success envelope every endpoint answers with, and the provenance of its data.

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
  return { data, meta: { timestamp: new Date().toISOString(), sources, ...extra } };
}

export function sourceMeta(provider: string, fetchedAt: Date, cached: boolean, now = Date.now()): SourceMeta {
  return {
    provider,
    fetched_at: fetchedAt.toISOString(),
    cached,
    age_s: Math.max(0, Math.round((now - fetchedAt.getTime()) / 100) / 10),
  };
}
