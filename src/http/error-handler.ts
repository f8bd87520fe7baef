// The one place errors become responses: `{ error, source? }`, never a stack trace or an
// internal message. Upstream failures are logged with their cause; clients see a short reason.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, UpstreamError, type ErrorBody } from './errors.ts';

const CONTEXT_NAMES: Record<string, string> = { querystring: 'query parameter', params: 'path parameter', body: 'body field', headers: 'header' };

export function errorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  let status: number;
  let body: ErrorBody;

  if (hasZodFastifySchemaValidationErrors(err)) {
    const context = CONTEXT_NAMES[err.validationContext ?? ''] ?? 'parameter';
    const messages = err.validation.map((v) => {
      const name = v.instancePath.replace(/^\//, '').replace(/\//g, '.');
      return name ? `${context} '${name}' ${v.message}` : `invalid ${context}s: ${v.message}`;
    });
    status = 400;
    body = { error: messages.join('; ') };
  } else if (err instanceof AppError) {
    status = err.statusCode;
    body = err.source ? { error: err.message, source: err.source } : { error: err.message };
    if (err instanceof UpstreamError) {
      req.log.warn({ source: err.source, failure: err.failure, cause: describeCause(err.cause) }, err.message);
      if (err.retryAfterS !== undefined) void reply.header('retry-after', String(err.retryAfterS));
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
  void reply.code(status).type('application/json; charset=utf-8').send(body);
}

function describeCause(cause: unknown): string | undefined {
  if (!cause) return undefined;
  const c = cause as { code?: string; message?: string };
  return [c.code, c.message].filter(Boolean).join(' ');
}
