// What adapters call: the upstream client behind the response cache. The cache key is the
// normalised upstream request, so two routes asking a provider the same thing share one call.
import type { z } from 'zod';
import type { ResponseCache } from './cache.ts';
import { sourceMeta, type SourceMeta } from './envelope.ts';
import type { UpstreamClient, UpstreamRequest } from './upstream.ts';

export interface SourceDeps {
  upstream: UpstreamClient;
  cache: ResponseCache;
}

export interface Sourced<T> {
  data: T;
  meta: SourceMeta;
}

export async function fetchSource<S extends z.ZodType>(
  deps: SourceDeps,
  req: UpstreamRequest<S> & { ttlS: number },
): Promise<Sourced<z.output<S>>> {
  const { ttlS, ...request } = req;
  const got = await deps.cache.getOrLoad(cacheKey(request), ttlS * 1000, async () => (await deps.upstream.request(request)).data);
  return { data: got.value as z.output<S>, meta: sourceMeta(req.source, got.fetchedAt, got.cached) };
}

/** Method, URL with sorted query parameters, and body. Header differences (a UA) do not split the cache. */
export function cacheKey(req: Pick<UpstreamRequest<z.ZodType>, 'source' | 'method' | 'url' | 'body'>): string {
  const url = new URL(req.url);
  url.searchParams.sort();
  return `${req.source} ${req.method ?? 'GET'} ${url.href} ${req.body ?? ''}`;
}
