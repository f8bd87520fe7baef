// Settle on send, once the handler's answer is known and before it is written: a failed answer (a status of 400
// or more) cancels the payment, so nobody pays for an error; a success is settled, given PAYMENT-RESPONSE and a
// private Cache-Control (and, with X402_SIGNING_KEY, Content-Digest: RFC 9530's SHA-256 of the bytes sent, which
// the receipt in PAYMENT-RESPONSE binds), and kept under the payment's identifier before it leaves (a retry that
// crosses it gets the same). A settle that has been sent is waited for as long as its authorization could land
// (facilitator.ts), and an outcome the facilitator did not tell is read from the chain (settle-outcome.ts):
// whatever happens, a payment that may have been taken is never answered "pay again" (503 + Retry-After: send the
// same payment again; it will not be charged twice).
import { SETTLEMENT_OVERRIDES_HEADER, withPrivateCacheControl } from '@x402/core/server';
import type { FastifyBaseLogger } from 'fastify';
import type { ErrorBody, AppError } from '../lib/errors.ts';
import type { PaymentMetrics } from '../metrics/metrics.ts';
import type { PaymentAttempt } from './attempt.ts';
import type { PaymentIdempotency } from './idempotency.ts';
import type { PaymentServer } from './resource-server.ts';
import { facilitatorFailure, NOT_CHARGED, outcomeUnconfirmed, paymentRequiredBody, type PaymentTerms } from './responses.ts';
import { contentDigest } from './signing-key.ts';
import type { VerifiedPayment } from './verify.ts';

/** What settling reads and sets of the response about to be written (a FastifyReply is one). */
export interface PaidResponse {
  statusCode: number;
  getHeader(name: string): unknown;
  getHeaders(): Record<string, unknown>;
  removeHeader(name: string): unknown;
  header(name: string, value: string): unknown;
  headers(values: Record<string, string>): unknown;
  code(status: number): unknown;
  type(contentType: string): unknown;
}

export interface SettleOptions {
  terms: PaymentTerms;
  server: PaymentServer;
  idempotency: PaymentIdempotency;
  metrics: PaymentMetrics;
  log: FastifyBaseLogger;
  /** X402_SIGNING_KEY: a paid answer carries Content-Digest, the digest its receipt binds. */
  contentDigest?: boolean;
}

/** Settles (or cancels) the payment of a granted request; returns the body to send, the response's status and headers set. */
export async function settleOnSend(paid: VerifiedPayment, attempt: PaymentAttempt | undefined, reply: PaidResponse, payload: unknown, opts: SettleOptions): Promise<unknown> {
  const http = opts.server.current;
  const cacheControl = () => (reply.getHeader('cache-control') != null ? String(reply.getHeader('cache-control')) : null);
  reply.removeHeader(SETTLEMENT_OVERRIDES_HEADER);

  if (reply.statusCode >= 400) {
    // The handler failed (e.g. an upstream 502): cancel, so the payment is never settled.
    const cancel = await paid.cancellationDispatcher.cancel({ reason: 'handler_failed', responseStatus: reply.statusCode });
    const headers = http.createFailurePathSettlementHeaders(cancel, paid.beforeHandlerSettlement, paid.paymentPayload, cacheControl());
    if (headers) reply.headers(headers);
    return payload;
  }

  const responseHeaders: Record<string, string> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v != null) responseHeaders[k] = String(v);
  // The exact bytes about to be sent (a paid answer is never content-encoded): what the receipt's digest and
  // Content-Digest are of. Fastify hands onSend the serialised JSON; anything else would have no digest.
  const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
  const started = performance.now();
  // From here money may move: the payment's identifier is never given to another payment until the outcome is known.
  if (attempt) attempt.settleSent = true;
  try {
    const settled = await http.processSettlement(
      paid.paymentPayload,
      paid.paymentRequirements,
      paid.declaredExtensions,
      { request: paid.context, responseBody: body, responseHeaders },
      undefined,
      paid.beforeHandlerSettlement,
    );
    opts.metrics.settleLatency((performance.now() - started) / 1000);
    if (!settled.success) {
      // Refused and the chain could not tell (another attempt of the authorization may have paid): never "pay again".
      if (attempt?.settlement === 'unknown') return unconfirmed(reply);
      const r = settled.response;
      reply.code(r.status);
      reply.headers(r.headers);
      reply.type('application/json; charset=utf-8');
      return JSON.stringify(paymentRequiredBody(r.headers, opts.terms, attempt?.settlement === 'not_landed' ? NOT_CHARGED : settled.errorReason));
    }
    reply.headers(settled.headers);
    reply.header('cache-control', withPrivateCacheControl(cacheControl()));
    if (opts.contentDigest && body) reply.header('content-digest', contentDigest(body));
    // Kept under the payment's identifier before the answer leaves: a retry that crosses it gets the same.
    if (attempt) await opts.idempotency.complete(attempt, reply.statusCode, reply.getHeaders(), typeof payload === 'string' ? payload : String(payload));
    return payload;
  } catch (err) {
    opts.metrics.settleLatency((performance.now() - started) / 1000);
    // Unheard, then the chain said: never landed (nothing was charged: pay again), or could not tell (send the same payment again).
    if (attempt?.settlement === 'not_landed') {
      const challenge = await opts.server.challengeHeaders(attempt);
      reply.code(402);
      reply.headers(challenge);
      reply.type('application/json; charset=utf-8');
      return JSON.stringify(paymentRequiredBody(challenge, opts.terms, NOT_CHARGED));
    }
    if (attempt?.settlement === 'refused') return errorBody(reply, facilitatorFailure(err, opts.log));
    return unconfirmed(reply);
  }
}

/** An error as the body onSend returns (the reply's status and Retry-After set). */
function errorBody(reply: PaidResponse, failure: AppError): string {
  reply.code(failure.statusCode);
  reply.type('application/json; charset=utf-8');
  if (failure.retryAfterS !== undefined) reply.header('retry-after', String(failure.retryAfterS));
  return JSON.stringify({ error: failure.message, source: failure.source } satisfies ErrorBody);
}

/** 503 for a payment that may have been taken and whose outcome nobody could tell yet: send the same payment again. */
const unconfirmed = (reply: PaidResponse) => errorBody(reply, outcomeUnconfirmed());
