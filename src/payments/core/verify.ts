// Verify and grant, before the handler: a paid request without an API key either gets its answer here (the 402
// challenge with the price, a refusal, the stored answer of a payment already answered) or is granted its
// matched route once the facilitator has verified its payment and the payment is recorded. On the way: the
// header is decoded first (garbage is a 402 with the reason, never the SDK's stack trace); a HEAD never takes a
// payment; no payment is taken while the records' database is down; an authorization valid for longer than
// offered is refused; the payment identifier is looked up (a replay, a wait for a running twin, or a 409); and a
// payment the facilitator refuses as used may be this very payment's retry, whose first attempt never answered
// (resume.ts): answered from the chain, never charged twice.
import type { HTTPProcessResult, HTTPRequestContext } from '@x402/core/server';
import type { PaymentRecords } from '../../db/payments.ts';
import { DatabaseUnavailableError } from '../../db/service.ts';
import { AppError } from '../../lib/errors.ts';
import type { PaymentAttempt } from './attempt.ts';
import { admitByLane, type LanePayment, type LaneOptions } from './lane.ts';
import { AUTHORIZATION_USED, type AuthorizationLocks } from './authorization-claim.ts';
import { checkValidityWindow } from './authorization.ts';
import { SETTLE_ANSWER_GRACE_MS } from './facilitator.ts';
import type { ClaimBounds, PaymentIdempotency } from './idempotency.ts';
import type { PaymentLog } from './log.ts';
import { CHAIN_GRACE_MS } from './outcome.ts';
import type { PaymentServer } from './resource-server.ts';
import { facilitatorFailure, HEAD_PAYMENT, MALFORMED_PAYMENT, NOT_CHARGED, outcomeUnconfirmed, paymentRequiredBody, V1_PAYMENT_HEADER, type PaymentTerms } from './responses.ts';
import { resumePayment } from './resume.ts';
import type { PaymentSchemes } from './scheme.ts';
import type { PaymentSettings } from '../settings.ts';

/** A payment the SDK verified for the matched route, with its context (settle needs both). */
export type SdkVerifiedPayment = Extract<HTTPProcessResult, { type: 'payment-verified' }> & { context: HTTPRequestContext };

/** A payment granted the matched route: verified by the SDK, or admitted by its scheme's lane (lane.ts). */
export type VerifiedPayment = SdkVerifiedPayment | LanePayment;

/** What verify decided: an answer to send now (the handler never runs), or the grant of the route. */
export type Verdict = { answer: { status: number; headers?: Record<string, string>; body: unknown } } | { granted: VerifiedPayment };

export interface VerifyOptions {
  x402: PaymentSettings;
  terms: PaymentTerms;
  server: PaymentServer;
  idempotency: PaymentIdempotency;
  records: PaymentRecords;
  publicBaseUrl: string;
  log: PaymentLog;
  /** The records' database health: while it is degraded, no payment is verified (it could not be recorded). */
  database: { readonly degraded: boolean };
  /** Resolves once the ledger is open (an opening in progress is waited for, up to DB_OPEN_WAIT_MS); rejects with a 503. */
  ledgerOpened?: () => Promise<void>;
  /** The longest a paid call without an EIP-3009 authorization can take: how long a retry with its identifier waits for it. */
  paidCallMs: number;
  /** The schemes offered: where a payment's outcome is read from its chain. */
  schemes: PaymentSchemes;
  signal?: AbortSignal;
  /** One request at a time per `exact` authorization, on every instance (authorization-claim.ts). */
  authorizations?: AuthorizationLocks;
  /** What a scheme's lane records with (lane.ts); undefined: every payment goes through the SDK. */
  lane?: LaneOptions;
}

/** Decides the request of `attempt`: answered here, or granted once its payment is verified and recorded. */
export async function verifyAndGrant(attempt: PaymentAttempt, opts: VerifyOptions): Promise<Verdict> {
  return (await beforeTheSdk(attempt, opts)) ?? bySdk(attempt, opts);
}

/**
 * The lane's share of verifyAndGrant alone, for a payment the route's handler is not needed for (access-control.ts:
 * a repeat voucher paid for an answer served again): the same steps, answered or granted as verifyAndGrant would;
 * undefined when the payment is not its scheme's lane's to decide (nothing is left held: the route then runs and
 * verifyAndGrant decides it from the start).
 */
export async function verifyByLane(attempt: PaymentAttempt, opts: VerifyOptions): Promise<Verdict | undefined> {
  const payload = attempt.payload;
  // Only a payment that holds nothing but its replay ticket on the way to the lane: one with an authorization (a
  // deposit's, which moves money on chain) claims it, one its scheme does not recognise as a retry claims its
  // identifier, and the lane never takes either.
  if (!opts.lane || !payload || attempt.authorization || !opts.schemes.laneOf(payload) || !opts.schemes.replaysOf(payload)) return undefined;
  const verdict = await beforeTheSdk(attempt, opts);
  if (verdict === undefined) {
    attempt.replay?.close();
    attempt.replay = undefined;
  }
  return verdict;
}

/** A refusal that asks for a new payment carries the route's challenge (PAYMENT-REQUIRED: what to pay, and the signed offers), as every 402 does; the reason is the body's. */
async function challenge(attempt: PaymentAttempt, opts: VerifyOptions, reason?: string): Promise<Verdict> {
  const headers = await opts.server.challengeHeaders(attempt);
  return { answer: { status: 402, headers, body: paymentRequiredBody(headers, opts.terms, reason) } };
}

/** Whether the payment header is left to the SDK to answer: it cannot be decoded, or comes with a HEAD (which never takes a payment). */
function hiddenPayment(attempt: PaymentAttempt): { malformed: boolean; headWithPayment: boolean } {
  const given = attempt.request.paymentHeader;
  // A header that cannot be decoded: the SDK would print a stack trace for it; it gets a 402 with the reason.
  const malformed = given !== undefined && attempt.payloadHash === undefined;
  // HEAD delivers no body, so it never takes a payment: it gets the route's challenge, as GET would without one.
  const headWithPayment = attempt.request.method === 'HEAD' && given !== undefined;
  return { malformed, headWithPayment };
}

/** What is decided before the SDK is asked: an answer, a grant by the scheme's lane, or undefined (the SDK decides). */
async function beforeTheSdk(attempt: PaymentAttempt, opts: VerifyOptions): Promise<Verdict | undefined> {
  const { request: req } = attempt;
  const given = req.paymentHeader;
  const { malformed, headWithPayment } = hiddenPayment(attempt);

  // x402 v1's X-PAYMENT alone: refused as such (never verified, never replayed), with the challenge to pay in v2.
  if (given === undefined && req.v1Header) return challenge(attempt, opts, V1_PAYMENT_HEADER);
  if (given === undefined || malformed || headWithPayment) return undefined;

  // No payment is taken that cannot be recorded: a ledger still opening (a fresh instance) is waited for; with it
  // down, the call is refused before anything is verified.
  await opts.ledgerOpened?.();
  if (opts.database.degraded) throw new DatabaseUnavailableError('the payments ledger is unavailable; no payment is taken that cannot be recorded: try again shortly');
  // Its outcome is waited for until validBefore: an authorization valid for longer than offered is refused.
  const tooLong = attempt.authorization && checkValidityWindow(attempt.authorization, opts.x402.maxTimeoutS);
  if (tooLong) return challenge(attempt, opts, tooLong);
  // A retry of a payment already answered gets that answer (before the facilitator sees it again): recognised by
  // its scheme when it can (replay.ts: a voucher), else by its payment identifier's claim in the ledger.
  const replays = attempt.payload && opts.schemes.replaysOf(attempt.payload);
  if (replays) {
    opts.idempotency.check(attempt.payload!);
    const opened = await replays.open(attempt.payload!, req.line);
    if ('answer' in opened) return { answer: opened.answer };
    attempt.replay = opened.ticket;
  } else {
    const decision = await opts.idempotency.decide(attempt, given, claimBounds(attempt, opts.paidCallMs));
    if (decision.kind === 'replay') {
      const { status, headers, body } = decision.response;
      return { answer: { status, headers, body } };
    }
  }
  // Only one request of an authorization reaches the facilitator; the others wait for it, and once it is answered are refused.
  if ((await opts.authorizations?.acquire(attempt)) === 'used') return challenge(attempt, opts, AUTHORIZATION_USED);
  // A payment its scheme's lane decides alone (a repeat voucher): granted without the SDK's per-call work.
  const laned = opts.lane && (await laneGrant(attempt, opts.lane));
  if (laned) {
    attempt.replay?.admitted();
    return { granted: laned };
  }
  return undefined;
}

/** The SDK's verification (the facilitator's, or the scheme's own check), and a refused payment resumed from the chain. */
async function bySdk(attempt: PaymentAttempt, opts: VerifyOptions): Promise<Verdict> {
  const { request: req, entry } = attempt;
  const { malformed, headWithPayment } = hiddenPayment(attempt);
  const adapter = req.adapter(malformed || headWithPayment);
  const context: HTTPRequestContext = { adapter, path: entry.url, decodedPath: entry.url, method: 'GET', paymentHeader: adapter.getHeader('payment-signature') };
  let result: HTTPProcessResult;
  try {
    const http = await opts.server.ready();
    result = await http.processHTTPRequest(context);
    if (result.type === 'payment-error' && attempt.verifyRefusal) {
      // Refused: a used or expiring authorization may be this very payment, whose first attempt never answered.
      const resumed = await resumePayment(attempt, { records: opts.records, schemes: opts.schemes, signal: opts.signal });
      if (resumed.kind === 'not_landed') return challenge(attempt, opts, NOT_CHARGED);
      if (resumed.kind === 'unknown') {
        attempt.resume = { kind: 'unknown' };
        throw outcomeUnconfirmed();
      }
      if (resumed.kind === 'landed') {
        attempt.resume = resumed;
        result = await http.processHTTPRequest(context);
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw facilitatorFailure(err, opts.log);
  }
  // The facilitator verified it, but it could not be recorded: refused before anything is settled.
  if (attempt.recordFailure) throw attempt.recordFailure;
  if (result.type === 'no-payment-required') {
    // The catalog says paid; the SDK's table does not know the route. Fail closed.
    opts.log.error({ route: entry.url }, 'x402: the payment table has no entry for a paid route; answering 402');
    return challenge(attempt, opts);
  }
  if (result.type === 'payment-error') {
    const r = result.response;
    // A payment operation answered without the handler (a batch-settlement refund): the SDK's own answer.
    if (r.status < 400) return { answer: { status: r.status, headers: r.headers, body: typeof r.body === 'string' ? r.body : JSON.stringify(r.body) } };
    const reason = malformed ? MALFORMED_PAYMENT : headWithPayment ? HEAD_PAYMENT : undefined;
    return { answer: { status: r.status, headers: r.headers, body: paymentRequiredBody(r.headers, opts.terms, reason) } };
  }
  attempt.replay?.admitted();
  return { granted: { ...result, context } };
}

/** The lane's grant; undefined when it leaves the payment to the SDK, or could not read the state it needs (the SDK then meets the same and answers it). */
async function laneGrant(attempt: PaymentAttempt, lane: LaneOptions): Promise<LanePayment | undefined> {
  try {
    return await admitByLane(attempt, lane);
  } catch (err) {
    if (attempt.recordFailure) throw err;
    lane.log.warn({ err: String((err as Error)?.message ?? err) }, 'x402: a payment lane failed; the SDK decides the payment');
    return undefined;
  }
}

/** What a payment identifier is bound to (method, matched route, sorted query) and how long its claim may last. */
function claimBounds(attempt: PaymentAttempt, paidCallMs: number): ClaimBounds {
  const validBeforeMs = attempt.authorization ? attempt.authorization.validBefore * 1000 : undefined;
  return {
    request: attempt.request.line,
    leaseCap: validBeforeMs ?? Infinity,
    // A twin's settle may be listened to until validBefore (+ its grace), then the chain until it is sure.
    waitUntil: validBeforeMs !== undefined ? validBeforeMs + SETTLE_ANSWER_GRACE_MS + CHAIN_GRACE_MS : Date.now() + paidCallMs,
  };
}
