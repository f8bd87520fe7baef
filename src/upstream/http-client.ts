// The HTTP client of every source: a keep-alive undici pool per origin, a bounded body, at most one
// retry (idempotent calls, connection reset or 502/503/504, within the same deadline), and one
// decoding path: bytes → JSON (or text) → the provider's protocol → the zod schema. It runs inside
// the guard (guard.ts), which owns the deadline, the breaker and the health figures; the AbortSignal
// it is given ends the request, headers and body alike, when the deadline passes.
import type { Pool } from 'undici';
import type { z } from 'zod';
import { UpstreamError } from '../lib/errors.ts';
import { HTTP_STATUS_ONLY, retryAfterSeconds, type Protocol, type Verdict } from './protocol.ts';

export interface HttpClientOptions {
  connectTimeoutMs: number;
  maxBodyBytes: number;
  connections: number;
  userAgent: string;
}

export interface HttpRequest<S extends z.ZodType> {
  /** Provider name: what `{ error, source }` shows when this call fails. */
  source: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Safe to send twice. Defaults to true for GET; read-only POSTs (JSON-RPC reads) say so. */
  idempotent?: boolean;
  /** `json` (default) parses JSON; `text` hands the protocol and schema the raw string (CSV). */
  format?: 'json' | 'text';
  /** How the provider signals errors; default: by HTTP status only. */
  protocol?: Protocol;
  /** The 404 message when the protocol says the thing asked for does not exist. */
  notFound?: string;
  /** Per-request body bound, for the few providers whose documents are large. */
  maxBodyBytes?: number;
  schema: S;
}

/** The outcome of a call: a value, or "the provider says it does not exist" (an answer, not a failure). */
export type HttpOutcome<T> = { found: true; value: T } | { found: false; message: string };

/** Bytes of an error body read to find the provider's reason in it. */
const ERROR_BODY_BYTES = 64 * 1024;
const RETRYABLE_STATUS = new Set([502, 503, 504]);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);

/** An error status worth one more try; carries the failure to report if the retry fails too. */
class RetryableStatus extends Error {
  constructor(readonly failure: UpstreamError) {
    super(failure.message);
  }
}

/**
 * undici (110 files, ~0.1 s of CPU) is not loaded at start-up, most of which is spent loading modules:
 * the server loads it in the background once it listens (server.ts), and the first upstream call
 * waits for it if that has not finished.
 */
let undici: typeof import('undici') | undefined;
let loadingUndici: Promise<unknown> | undefined;

/** Loads the HTTP library (once); resolves at once when it is loaded. */
export function loadHttpLibrary(): Promise<unknown> {
  return undici ? Promise.resolve() : (loadingUndici ??= import('undici').then((m) => (undici = m)));
}

export class HttpClient {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: HttpClientOptions) {}

  /**
   * Resolves once the HTTP library is loaded (at once after the first call). Callers await it before an
   * upstream call's deadline starts, so the one-time load is not counted as the provider's time.
   */
  ready(): Promise<unknown> {
    return loadHttpLibrary();
  }

  /** One call, retried once when that is safe. `signal` is the guard's deadline. */
  async request<S extends z.ZodType>(req: HttpRequest<S>, signal: AbortSignal): Promise<HttpOutcome<z.output<S>>> {
    if (!undici) await this.ready();
    const idempotent = req.idempotent ?? (req.method ?? 'GET') === 'GET';
    try {
      return await this.once(req, signal);
    } catch (err) {
      if (!idempotent || signal.aborted || !isTransient(err)) throw unwrap(err);
      try {
        return await this.once(req, signal);
      } catch (again) {
        throw unwrap(again);
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }

  private poolFor(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new undici!.Pool(origin, {
        connections: this.options.connections,
        connect: { timeout: this.options.connectTimeoutMs },
        // The guard's deadline bounds the whole call; these only stop a connection that outlives it.
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  private async once<S extends z.ZodType>(req: HttpRequest<S>, signal: AbortSignal): Promise<HttpOutcome<z.output<S>>> {
    const { source } = req;
    const url = new URL(req.url);
    let res;
    try {
      res = await this.poolFor(url.origin).request({
        method: req.method ?? 'GET',
        path: url.pathname + url.search,
        headers: {
          'user-agent': this.options.userAgent,
          accept: req.format === 'text' ? 'text/plain, text/csv, */*' : 'application/json',
          ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}),
          // A login in the configured URL (https://user:pass@node.example) is sent as Basic auth: the pool is per origin, which has none.
          ...(url.username ? { authorization: basicAuth(url) } : {}),
          ...req.headers,
        },
        body: req.body,
        signal,
      });
    } catch (err) {
      throw connectionError(source, err);
    }

    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const limit = ok ? (req.maxBodyBytes ?? this.options.maxBodyBytes) : ERROR_BODY_BYTES;
    const text = await readBody(source, res, limit, ok, signal);
    const contentType = String(res.headers['content-type'] ?? '');

    let body: unknown = text;
    let parsed = req.format === 'text';
    if (!parsed && text !== undefined) {
      try {
        body = JSON.parse(text);
        parsed = true;
      } catch {
        if (ok) throw new UpstreamError(source, 'malformed', malformedMessage(source, text, contentType, res.statusCode));
      }
    }

    const verdict: Verdict | undefined = parsed ? (req.protocol ?? HTTP_STATUS_ONLY).classify(body, res.statusCode) : undefined;
    const retryAfterS = retryAfterSeconds(res.headers['retry-after']);
    switch (verdict?.kind) {
      case 'not_found':
        return { found: false, message: req.notFound ?? `${source} has no such item${verdict.detail ? ` (${verdict.detail})` : ''}` };
      case 'provider_error':
        throw new UpstreamError(source, 'provider', `${source} error: ${verdict.detail}`, { status: res.statusCode });
      case 'rate_limited': {
        const after = verdict.retryAfterS ?? retryAfterS;
        throw new UpstreamError(source, 'rate_limited', rateLimitedMessage(source, verdict.detail, after), { status: res.statusCode, retryAfterS: after });
      }
    }
    if (res.statusCode === 429 || res.statusCode === 418) {
      throw new UpstreamError(source, 'rate_limited', rateLimitedMessage(source, `HTTP ${res.statusCode}`, retryAfterS), { status: res.statusCode, retryAfterS });
    }
    if (!ok && verdict?.kind !== 'ok') {
      const failure = new UpstreamError(source, 'http', `${source} answered HTTP ${res.statusCode}`, { status: res.statusCode });
      throw RETRYABLE_STATUS.has(res.statusCode) ? new RetryableStatus(failure) : failure;
    }

    // Async, so that a schema may hand a large document to a worker thread (DefiLlama's yields).
    const checked = await req.schema.safeParseAsync(body);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const where = issue && issue.path.length ? ` at ${issue.path.join('.')}` : '';
      throw new UpstreamError(source, 'schema', `${source} returned an unexpected response shape${where}`);
    }
    return { found: true, value: checked.data };
  }
}

/** Reads the body up to `limit` bytes. Past the limit: a failure for a success body, the start of it for an error body. */
async function readBody(
  source: string,
  res: { body: AsyncIterable<Buffer> & { destroy(): unknown }; headers: Record<string, unknown> },
  limit: number,
  ok: boolean,
  signal: AbortSignal,
): Promise<string | undefined> {
  const declared = Number(res.headers['content-length']);
  if (ok && declared > limit) {
    res.body.destroy();
    throw new UpstreamError(source, 'too_large', `${source} response exceeded ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > limit) {
        res.body.destroy();
        if (ok) throw new UpstreamError(source, 'too_large', `${source} response exceeded ${limit} bytes`);
        return undefined;
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (signal.aborted) throw signal.reason;
    throw new UpstreamError(source, 'truncated', `${source} sent a truncated body (connection closed after ${size} bytes)`, { cause: err });
  }
  return Buffer.concat(chunks).toString('utf8');
}

function connectionError(source: string, err: unknown): Error {
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: string } | null)?.code ?? '';
  if (code === 'UND_ERR_ABORTED' || (err as Error)?.name === 'AbortError') return err as Error; // the guard reports the deadline
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new UpstreamError(source, 'timeout', `${source} did not accept a connection in time`, { cause: err });
  if (RESET_CODES.has(code)) return new UpstreamError(source, 'reset', `${source} closed the connection before answering (${code})`, { cause: err });
  return new UpstreamError(source, 'network', `${source} could not be reached${code ? ` (${code})` : ''}`, { cause: err });
}

function malformedMessage(source: string, text: string, contentType: string, status: number): string {
  const head = text.trimStart().slice(0, 15).toLowerCase();
  if (contentType.includes('text/html') || head.startsWith('<!doctype') || head.startsWith('<html')) {
    return `${source} returned HTML instead of JSON (HTTP ${status})`;
  }
  return `${source} returned a body that is not valid JSON${text.length === 0 ? ' (empty)' : ''}`;
}

function rateLimitedMessage(source: string, detail: string, retryAfterS: number | undefined): string {
  return `${source} is rate limiting this server (${detail})${retryAfterS ? `; retry in ${retryAfterS} s` : ''}`;
}

function isTransient(err: unknown): boolean {
  return err instanceof RetryableStatus || (err instanceof UpstreamError && err.failure === 'reset');
}

const unwrap = (err: unknown) => (err instanceof RetryableStatus ? err.failure : err);

/** The Authorization header of a URL's `user:pass@` login (percent-decoded, as browsers and curl send it). */
function basicAuth(url: URL): string {
  return `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
}
