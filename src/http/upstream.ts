// The one layer every adapter uses to call a provider: a keep-alive pool per origin, bounded
// timeouts and body size, at most one retry for idempotent transient failures, and a body that
// is parsed and validated before anyone reads it. It also records per-provider health for
// /v1/status, so those figures are measurements, not constants.
import { Pool } from 'undici';
import type { z } from 'zod';
import { UpstreamError, type UpstreamFailure } from './errors.ts';
import { ProviderHealth, type ProviderHealthReport } from './provider-health.ts';

export interface UpstreamClientOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxBodyBytes: number;
  connections: number;
  userAgent: string;
}

export interface UpstreamRequest<S extends z.ZodType> {
  /** Provider name; it is what `{ error, source }` shows when this call fails. */
  source: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Safe to send twice. Defaults to true for GET; read-only POSTs (JSON-RPC reads) say so. */
  idempotent?: boolean;
  /** `json` (default) parses JSON; `text` hands the schema the raw string (CSV, HTML). */
  format?: 'json' | 'text';
  /** Non-2xx statuses whose body is still parsed and returned, e.g. a 404 with a JSON error. */
  acceptStatus?: readonly number[];
  /** Per-request body bound, for the few providers whose documents are large. */
  maxBodyBytes?: number;
  schema: S;
  /**
   * Many providers answer HTTP 200 with an error code in the body. Return the provider's
   * message for such a body (it becomes a 502 naming the provider and is never cached).
   */
  providerError?: (body: z.output<S>) => string | undefined;
}

export interface UpstreamResponse<T> {
  status: number;
  data: T;
  fetchedAt: Date;
  latencyMs: number;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);
const RETRYABLE_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Thrown internally for a status that may be retried once. */
class RetryableStatus extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();
  private readonly health = new Map<string, ProviderHealth>();

  constructor(private readonly options: UpstreamClientOptions) {}

  async request<S extends z.ZodType>(req: UpstreamRequest<S>): Promise<UpstreamResponse<z.output<S>>> {
    const method = req.method ?? 'GET';
    const idempotent = req.idempotent ?? method === 'GET';
    const started = performance.now();
    const health = this.healthOf(req.source);
    try {
      let raw: { status: number; text: string };
      try {
        raw = await this.send(req, method);
      } catch (err) {
        if (!idempotent || !isTransient(err)) throw err;
        raw = await this.send(req, method);
      }
      const data = this.decode(req, raw);
      const latencyMs = performance.now() - started;
      health.recordSuccess(latencyMs);
      return { status: raw.status, data, fetchedAt: new Date(), latencyMs };
    } catch (err) {
      const failure = toUpstreamError(req.source, err);
      health.recordFailure(performance.now() - started, failure.message);
      throw failure;
    }
  }

  /** Health of every provider called so far, keyed by provider name. */
  healthReport(): Record<string, ProviderHealthReport> {
    return Object.fromEntries([...this.health].map(([name, h]) => [name, h.report()]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
    this.pools.clear();
  }

  private healthOf(source: string): ProviderHealth {
    let h = this.health.get(source);
    if (!h) this.health.set(source, (h = new ProviderHealth()));
    return h;
  }

  private poolFor(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: this.options.connections,
        connect: { timeout: this.options.connectTimeoutMs },
        headersTimeout: this.options.headersTimeoutMs,
        bodyTimeout: this.options.bodyTimeoutMs,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  private async send(req: UpstreamRequest<z.ZodType>, method: 'GET' | 'POST'): Promise<{ status: number; text: string }> {
    const url = new URL(req.url);
    const res = await this.poolFor(url.origin).request({
      method,
      path: url.pathname + url.search,
      headers: {
        'user-agent': this.options.userAgent,
        accept: req.format === 'text' ? 'text/plain, text/csv, */*' : 'application/json',
        ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...req.headers,
      },
      body: req.body,
    });
    const ok = (res.statusCode >= 200 && res.statusCode < 300) || req.acceptStatus?.includes(res.statusCode);
    if (!ok) {
      await res.body.dump();
      if (RETRYABLE_STATUS.has(res.statusCode)) throw new RetryableStatus(res.statusCode);
      throw new UpstreamError(req.source, 'http', `${req.source} answered HTTP ${res.statusCode}`, { status: res.statusCode });
    }
    const limit = req.maxBodyBytes ?? this.options.maxBodyBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        res.body.destroy();
        throw new UpstreamError(req.source, 'too_large', `${req.source} response exceeded ${limit} bytes`);
      }
      chunks.push(chunk);
    }
    return { status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') };
  }

  private decode<S extends z.ZodType>(req: UpstreamRequest<S>, raw: { status: number; text: string }): z.output<S> {
    let body: unknown = raw.text;
    if (req.format !== 'text') {
      try {
        body = JSON.parse(raw.text);
      } catch {
        throw new UpstreamError(req.source, 'malformed', `${req.source} returned a body that is not valid JSON`);
      }
    }
    const parsed = req.schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length ? ` at ${issue.path.join('.')}` : '';
      throw new UpstreamError(req.source, 'schema', `${req.source} returned an unexpected response shape${where}`);
    }
    const providerMessage = req.providerError?.(parsed.data);
    if (providerMessage !== undefined) throw new UpstreamError(req.source, 'provider', `${req.source} error: ${providerMessage}`);
    return parsed.data;
  }
}

function isTransient(err: unknown): boolean {
  if (err instanceof RetryableStatus) return true;
  const code = (err as { code?: string } | null)?.code;
  return typeof code === 'string' && RETRYABLE_CODES.has(code);
}

function toUpstreamError(source: string, err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof RetryableStatus) {
    return new UpstreamError(source, 'http', `${source} answered HTTP ${err.status}`, { status: err.status });
  }
  const code = (err as { code?: string } | null)?.code ?? '';
  const failure: UpstreamFailure = TIMEOUT_CODES.has(code) ? 'timeout' : 'network';
  const message = failure === 'timeout' ? `${source} did not answer in time` : `${source} could not be reached`;
  return new UpstreamError(source, failure, message, { cause: err });
}
