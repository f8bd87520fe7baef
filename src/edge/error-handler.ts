// The one place errors become responses: `{ error, source? }`, never a stack trace or an
// internal message. Upstream failures are logged with their cause; clients see a short reason.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, UpstreamError, type ErrorBody } from '../lib/errors.ts';

const CONTEXT_NAMES: Record<string, string> = { querystring: 'query parameter', params: 'path parameter', body: 'body field', headers: 'header' };

/**
 * Seconds a 503 tells the client to wait when its cause named no time: every 503 carries Retry-After
 * (docs/using/conventions.md promises it), and most providers' limits are per minute.
 */
export const DEFAULT_RETRY_AFTER_S = 30;

export interface ErrorHandlerOptions {
  /**
   * The status of "try again later" failures (a provider limiting us, an open circuit): 503 on
   * interface B; interface A's published contract lists 502 for every upstream failure.
   */
  unavailableStatus?: 502 | 503;
}

export function createErrorHandler(options: ErrorHandlerOptions = {}) {
  const unavailableStatus = options.unavailableStatus ?? 503;
  return function errorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
    let status: number;
    let body: ErrorBody;
    let retryAfterS: number | undefined;

    if (hasZodFastifySchemaValidationErrors(err)) {
      const context = CONTEXT_NAMES[err.validationContext ?? ''] ?? 'parameter';
      const messages = err.validation.map((v) => {
        const name = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
        return name ? `${context} '${name}' ${v.message}` : `invalid ${context}s: ${v.message}`;
      });
      status = 400;
      // One value can break several rules with the same message (an empty symbol is too short and off its pattern): said once.
      body = { error: [...new Set(messages)].join('; ') };
    } else if (err instanceof AppError) {
      status = err instanceof UpstreamError && err.statusCode === 503 ? unavailableStatus : err.statusCode;
      body = err.source ? { error: err.message, source: err.source } : { error: err.message };
      retryAfterS = err.retryAfterS;
      if (err.headers) void reply.headers(err.headers);
      if (err instanceof UpstreamError) {
        req.log.warn({ source: err.source, failure: err.failure, cause: describeCause(err.cause) }, err.message);
        // A paused or limiting provider is still "try later" on interface A, where its status is 502.
        if (err.statusCode === 503) retryAfterS ??= DEFAULT_RETRY_AFTER_S;
      }
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      // Fastify's own client errors (bad content type, body too large, ...): their messages are generic.
      status = err.statusCode;
      body = { error: err.message };
    } else {
      req.log.error({ err }, 'unhandled error');
      status = 500;
      body = { error: 'internal error' };
    }
    if (status === 503) retryAfterS ??= DEFAULT_RETRY_AFTER_S;
    if (retryAfterS !== undefined) void reply.header('retry-after', String(retryAfterS));
    void reply.code(status).type('application/json; charset=utf-8').send(body);
  };
}

/** Interface B's (and the app's default) error handler. */
export const errorHandler = createErrorHandler();

function describeCause(cause: unknown): string | undefined {
  if (!cause) return undefined;
  const c = cause as { code?: string; message?: string };
  return [c.code, c.message].filter(Boolean).join(' ');
}
