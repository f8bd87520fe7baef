// Settle on send, once the handler's answer is known and before it is written: a failed answer (a status of 400
// or more) cancels the payment, so nobody pays for an error; a success is settled, given PAYMENT-RESPONSE and a
// private Cache-Control (and, with X402_SIGNING_KEY, Content-Digest: RFC 9530's SHA-256 of the bytes sent, which
// the receipt in PAYMENT-RESPONSE binds), and kept under the payment's identifier before it leaves (a retry that
// crosses it gets the same). A settle that has been sent is waited for as long as its authorization could land
// (facilitator.ts), and an outcome the facilitator did not tell is read from the chain (settle-outcome.ts):
// whatever happens, a payment that may have been taken is never answered "pay again" (503 + Retry-After: send the
// same payment again; it will not be charged twice).
import { SETTLEMENT_OVERRIDES_HEADER, withPrivateCacheControl } from '@x402/core/server';
import type { PaymentLog } from './log.ts';
import type { ErrorBody, AppError } from '../../lib/errors.ts';
import type { PaymentMetrics } from '../../metrics/metrics.ts';
import type { PaymentAttempt } from './attempt.ts';
import { storedResponse, type PaymentIdempotency } from './idempotency.ts';
import type { PaymentServer } from './resource-server.ts';
import { facilitatorFailure, NOT_CHARGED, outcomeUnconfirmed, paymentRequiredBody, type PaymentTerms } from './responses.ts';
import { contentDigest } from './signing-key.ts';
import type { VerifiedPayment } from './verify.ts';
import { commitLane, releaseLane, type LaneOptions, type LanePayment } from './lane.ts';
import { encodePaymentResponse } from './header-codec.ts';

/** The response about to be written, as the handler left it: its status and headers (names in lower case). */
export interface PaidResponse {
  status: number;
  headers: Record<string, unknown>;
}

/** What to send: the status, the headers to set (those settling changed) and to remove, the content type when it changes, and the body. */
export interface SendDecision {
  status: number;
  headers: Record<string, string>;
  remove: string[];
  contentType?: string;
  body: unknown;
}

export interface SettleOptions {
  terms: PaymentTerms;
  server: PaymentServer;
  idempotency: PaymentIdempotency;
  metrics: PaymentMetrics;
  log: PaymentLog;
  /** X402_SIGNING_KEY: a paid answer carries Content-Digest, the digest its receipt binds. */
  contentDigest?: boolean;
  /** What a scheme's lane records with (lane.ts), for the payments it admitted. */
  lane?: LaneOptions;
}

/** Settles (or cancels) the payment of a granted request; returns what to send (the body, the response's status and headers). */
export async function settleOnSend(paid: VerifiedPayment, attempt: PaymentAttempt | undefined, sent: PaidResponse, payload: unknown, opts: SettleOptions): Promise<SendDecision> {
  if (paid.type === 'lane') return settleLaneOnSend(paid, attempt, sent, payload, opts);
  const http = opts.server.current;
  const out = new Decision(sent, payload);
  out.remove(SETTLEMENT_OVERRIDES_HEADER);
  const cacheControl = () => out.header('cache-control') ?? null;

  if (sent.status >= 400) {
    // The handler failed (e.g. an upstream 502): cancel, so the payment is never settled.
    const cancel = await paid.cancellationDispatcher.cancel({ reason: 'handler_failed', responseStatus: sent.status });
    const headers = http.createFailurePathSettlementHeaders(cancel, paid.beforeHandlerSettlement, paid.paymentPayload, cacheControl());
    if (headers) out.set(headers);
    return out.done();
  }

  const responseHeaders: Record<string, string> = {};
  for (const [k, v] of Object.entries(out.all())) responseHeaders[k] = v;
  const body = sentBytes(payload);
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
      if (attempt?.settlement === 'unknown') return unconfirmed(out);
      const r = settled.response;
      out.status = r.status;
      out.set(r.headers);
      return out.json(paymentRequiredBody(r.headers, opts.terms, attempt?.settlement === 'not_landed' ? NOT_CHARGED : settled.errorReason));
    }
    out.set(settled.headers);
    return await answered(out, attempt, payload, body, opts);
  } catch (err) {
    opts.metrics.settleLatency((performance.now() - started) / 1000);
    // Unheard, then the chain said: never landed (nothing was charged: pay again), or could not tell (send the same payment again).
    if (attempt?.settlement === 'not_landed') {
      const challenge = await opts.server.challengeHeaders(attempt);
      out.status = 402;
      out.set(challenge);
      return out.json(paymentRequiredBody(challenge, opts.terms, NOT_CHARGED));
    }
    if (attempt?.settlement === 'refused') return errorBody(out, facilitatorFailure(err, opts.log));
    return unconfirmed(out);
  }
}

/**
 * A payment its scheme's lane admitted (lane.ts): a failed answer releases it; a success commits its charge, then is
 * answered as the SDK's settle is (PAYMENT-RESPONSE, private Cache-Control, kept for a retry); a charge that could not
 * be committed is a 402 with the reason, nothing charged; one whose state could not be written, a 503 (send it again).
 */
async function settleLaneOnSend(paid: LanePayment, attempt: PaymentAttempt | undefined, sent: PaidResponse, payload: unknown, opts: SettleOptions): Promise<SendDecision> {
  const out = new Decision(sent, payload);
  out.remove(SETTLEMENT_OVERRIDES_HEADER);
  const lane = opts.lane!;
  if (sent.status >= 400) {
    await releaseLane(paid, attempt, sent.status, lane);
    return out.done();
  }
  if (attempt) attempt.settleSent = true;
  let committed: Awaited<ReturnType<typeof commitLane>>;
  try {
    committed = await commitLane(paid, attempt, lane);
  } catch (err) {
    opts.log.warn({ err: String((err as Error)?.message ?? err) }, 'x402: a payment lane could not commit a charge; answered 503 (send the same payment again)');
    return unconfirmed(out);
  }
  if ('refused' in committed) {
    const challenge = attempt ? await opts.server.challengeHeaders(attempt) : {};
    out.status = 402;
    out.set({ ...challenge, 'payment-response': encodePaymentResponse(committed.refused) });
    return out.json(paymentRequiredBody(challenge, opts.terms, committed.refused.errorReason));
  }
  out.set({ 'payment-response': encodePaymentResponse(committed.settled) });
  return answered(out, attempt, payload, opts.contentDigest ? sentBytes(payload) : undefined, opts);
}

/** A settled call's answer: private Cache-Control (and Content-Digest with receipts), kept for a retry before it leaves. */
async function answered(out: Decision, attempt: PaymentAttempt | undefined, payload: unknown, body: Buffer | undefined, opts: SettleOptions): Promise<SendDecision> {
  out.set({ 'cache-control': withPrivateCacheControl(out.header('cache-control') ?? null) });
  if (opts.contentDigest && body) out.set({ 'content-digest': contentDigest(body) });
  // Kept under the payment's identifier before the answer leaves: a retry that crosses it gets the same.
  const answer = typeof payload === 'string' ? payload : String(payload);
  if (attempt?.replay) attempt.replay.keep(storedResponse(out.status, out.all(), answer));
  else if (attempt) await opts.idempotency.complete(attempt, out.status, out.all(), answer);
  return out.done();
}

/**
 * The exact bytes about to be sent (a paid answer is never content-encoded): what the receipt's digest and
 * Content-Digest are of. Fastify hands onSend the serialised JSON; anything else would have no digest.
 */
function sentBytes(payload: unknown): Buffer | undefined {
  return typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
}

/** The response being decided: the handler's status and headers, with what settling changes. */
class Decision {
  status: number;
  private readonly headers = new Map<string, string>();
  private readonly removed = new Set<string>();
  private readonly changed = new Map<string, string>();
  private contentType: string | undefined;

  constructor(
    sent: PaidResponse,
    private body: unknown,
  ) {
    this.status = sent.status;
    for (const [k, v] of Object.entries(sent.headers)) if (v != null) this.headers.set(k.toLowerCase(), String(v));
  }
  header(name: string): string | undefined {
    return this.headers.get(name);
  }
  all(): Record<string, string> {
    return Object.fromEntries(this.headers);
  }
  set(values: Record<string, string>): void {
    for (const [k, v] of Object.entries(values)) {
      this.headers.set(k.toLowerCase(), v);
      this.changed.set(k.toLowerCase(), v);
      this.removed.delete(k.toLowerCase());
    }
  }
  remove(name: string): void {
    this.headers.delete(name.toLowerCase());
    this.changed.delete(name.toLowerCase());
    this.removed.add(name.toLowerCase());
  }
  json(body: unknown): SendDecision {
    this.contentType = 'application/json; charset=utf-8';
    this.headers.set('content-type', this.contentType);
    this.changed.delete('content-type');
    this.body = JSON.stringify(body);
    return this.done();
  }
  done(): SendDecision {
    return { status: this.status, headers: Object.fromEntries(this.changed), remove: [...this.removed], contentType: this.contentType, body: this.body };
  }
}

/** An error as the body onSend returns (its status and Retry-After set). */
function errorBody(out: Decision, failure: AppError): SendDecision {
  out.status = failure.statusCode;
  if (failure.retryAfterS !== undefined) out.set({ 'retry-after': String(failure.retryAfterS) });
  return out.json({ error: failure.message, source: failure.source } satisfies ErrorBody);
}

/** 503 for a payment that may have been taken and whose outcome nobody could tell yet: send the same payment again. */
const unconfirmed = (out: Decision) => errorBody(out, outcomeUnconfirmed());
