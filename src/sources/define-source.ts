// One upstream provider = one file that owns its descriptor: its names, the environment variables it
// reads (base URLs, an optional key, TTLs) with their defaults, notes on its limits, and the factory
// of its adapter. config.ts composes its schema from the descriptors, and the registry, /v1/status,
// `.env.example` and the providers table (docs/using/providers.md) are all derived from the list in index.ts.
// (viem's `defineChain` files are the model: one file owns one chain's settings.)
import { z } from 'zod';
import type { EnvSpec, EnvValues } from '../lib/env.ts';
import type { CacheLookup } from '../upstream/cache.ts';
import { sourceMeta, type SourceMeta } from '../upstream/envelope.ts';
import { NotFoundError, UpstreamError } from '../lib/errors.ts';
import type { RunOptions, UpstreamGuard } from '../upstream/guard.ts';
import type { HttpClient, HttpOutcome, HttpRequest } from '../upstream/http-client.ts';
import { HTTP_STATUS_ONLY, type Protocol } from '../upstream/protocol.ts';

/** A value and where it came from. */
export interface Sourced<T> {
  data: T;
  meta: SourceMeta;
}

/**
 * An answer of `ctx.fetch`, with the time its request was sent (epoch ms; a cached answer keeps its own):
 * the provider made it at some moment between then and `meta.fetched_at`, so only what was already
 * final when the request was sent (a candle closed by then) is final in it.
 */
export interface Fetched<T> extends Sourced<T> {
  sentAt: number;
}

export interface SourceRequest<S extends z.ZodType> extends Omit<HttpRequest<S>, 'source'> {
  /** Seconds the answer is reused (0 = not cached). Concurrent identical calls share one request either way. */
  ttlS: number;
  /** This call's total deadline, ms (default UPSTREAM_DEADLINE_MS). */
  deadlineMs?: number;
}

/** What a source's factory is given: its settings and its guarded, cached way out. */
export interface SourceContext<Settings> {
  /** The provider name, as `meta.sources[].provider` and `{ error, source }` show it. */
  readonly name: string;
  readonly settings: Settings;
  /** An HTTP call through the guard and the cache. "Not found" answers throw NotFoundError (and are cached too). */
  fetch<S extends z.ZodType>(req: SourceRequest<S>): Promise<Fetched<z.output<S>>>;
  /**
   * A value computed from several of this source's calls (each made through `fetch`, uncached), cached as one
   * answer under `key` for `ttlS` seconds, like a fetched one: concurrent loads share one computation and a
   * failed one is not kept. `waitMs` bounds how long another instance's load of the same key is waited for.
   */
  compute<T>(key: string, ttlS: number, load: () => Promise<T>, waitMs?: number): Promise<Fetched<T>>;
  /** Any other client's call under this source's deadline, breaker and health figures. */
  run<T>(call: (signal: AbortSignal) => Promise<T>, options?: RunOptions): Promise<T>;
  /**
   * A `fetch` for clients that bring their own transport (viem's `http(url, { fetchFn })`): every call
   * goes through the same HTTP client and guard, its body classified with `protocol`; a failure is
   * thrown as an UpstreamError (viem wraps it: find it with `upstreamCause`).
   */
  fetchFn(protocol?: Protocol, options?: RunOptions): typeof fetch;
}

export interface SourceDescriptor<Key extends string = string, E extends EnvSpec = EnvSpec, Settings = unknown, Api = unknown> {
  /** Property of the source registry (`sources.binanceSpot`). */
  key: Key;
  /** Provider name in `meta.sources`, errors and `/v1/status` (`binance`). */
  name: string;
  /** Human name. */
  title: string;
  /** The provider's documentation. */
  docs: string;
  /** Its limits and quirks, for operators (docs/using/providers.md, /v1/status). */
  notes: string;
  /** The environment variables it reads, with defaults. */
  env: E;
  /** Parsed variables → the settings its factory gets; `baseUrl` is what /v1/status shows. */
  settings: (env: EnvValues<E>) => Settings & { baseUrl: string };
  create: (ctx: SourceContext<Settings & { baseUrl: string }>) => Api;
}

/** Identity helper that keeps the descriptor's types. */
export function defineSource<Key extends string, E extends EnvSpec, Settings, Api>(
  d: SourceDescriptor<Key, E, Settings, Api>,
): SourceDescriptor<Key, E, Settings, Api> {
  return d;
}

export interface SourcePlumbing {
  http: HttpClient;
  guard: UpstreamGuard;
  /** The response cache, or a view of it that serves answers past their TTL (a route's staleness: src/catalog/staleness.ts). */
  cache: CacheLookup;
}

/** Builds the context a source's factory gets. */
export function sourceContext<Settings>(name: string, settings: Settings, deps: SourcePlumbing): SourceContext<Settings> {
  const { http, guard, cache } = deps;
  return {
    name,
    settings,
    async fetch(req) {
      const { ttlS, deadlineMs, ...rest } = req;
      const key = `${name} ${req.method ?? 'GET'} ${req.url} ${req.body ?? ''}`;
      // Another instance's load of the same key is waited for as long as this call's own may take.
      const got = await cache.getOrLoad<HttpOutcome<unknown>>(
        key,
        ttlS * 1000,
        async () => {
          await http.ready(); // before the deadline starts: loading the HTTP library (first call only) is not the provider's time
          return guard.run(name, (signal) => http.request({ ...rest, source: name }, signal), { deadlineMs });
        },
        deadlineMs,
      );
      if (!got.value.found) throw new NotFoundError(got.value.message, name);
      // Fresh for this caller until its TTL ends (a cached answer older than that is reloaded for it).
      const meta = sourceMeta(name, got.fetchedAt, got.cached, Date.now(), got.fetchedAt.ms + ttlS * 1000);
      return { data: got.value.value as never, meta, sentAt: got.sentAt };
    },
    async compute(key, ttlS, load, waitMs) {
      const got = await cache.getOrLoad(`${name} compute ${key}`, ttlS * 1000, load, waitMs);
      const meta = sourceMeta(name, got.fetchedAt, got.cached, Date.now(), got.fetchedAt.ms + ttlS * 1000);
      return { data: got.value, meta, sentAt: got.sentAt };
    },
    run: (call, options) => guard.run(name, call, options),
    fetchFn: (protocol = HTTP_STATUS_ONLY, options) => guardedFetch(name, guard, http, protocol, options),
  };
}

/**
 * A fetch over the same HTTP client as every source (bounded body, HTML and truncation detected, the
 * protocol's classification), under the guard. The answer is handed back as a Response.
 */
function guardedFetch(name: string, guard: UpstreamGuard, http: HttpClient, protocol: Protocol, options?: RunOptions): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST') throw new UpstreamError(name, 'network', `${name}: method ${method} is not supported`);
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const body = typeof init?.body === 'string' ? init.body : undefined;
    await http.ready(); // before the deadline starts, as in fetch above
    const outcome = await guard.run(
      name,
      // Reads (JSON-RPC calls here) are safe to send twice.
      (signal) => http.request({ source: name, url, method, headers, body, idempotent: true, protocol, schema: protocol.envelope ?? ANY_JSON }, signal),
      options,
    );
    if (!outcome.found) throw new NotFoundError(outcome.message, name);
    return new Response(JSON.stringify(outcome.value), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

const ANY_JSON = z.unknown();

/** The UpstreamError somewhere in a chain of causes (viem wraps what fetchFn throws). */
export function upstreamCause(err: unknown): UpstreamError | undefined {
  for (let e = err, depth = 0; e && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof UpstreamError) return e;
  }
  return undefined;
}
