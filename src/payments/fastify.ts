// The x402 payment gate for Fastify: the thin adapter over the payments core, as @x402/express is over
// @x402/core. It gives access-control.ts the three hooks of a paid request without an API key, and writes what
// the core decides: before the handler, verify-and-grant (core/verify.ts: the answer to send, or the grant of the
// matched route); on send, settle or cancel (core/settle.ts: what to send); once the answer is out, the payment
// identifier kept or given up (core/idempotency.ts). With request-adapter.ts, the only file of payments that
// reads a request or writes a reply. The payment table and the SDK's resource server are core/resource-server.ts's.
//
// Prefetch (X402_PREFETCH, on by default): when the SDK is about to ask the facilitator to verify a payment of a
// scheme that allows it (exact's) — the header decoded, it matches the route's requirements, its extensions are valid, no stored
// answer or running twin took it (idempotency) — the route's work starts at the same time (grant.ts holds its
// answer, unsent, until the grant exists). A paid call then costs max(verify, handler) + settle instead of
// verify + handler + settle. A payment that is refused drops the held answer (its upstream data stays in the
// cache); nothing is settled for it.
import type { FacilitatorClient } from '@x402/core/server';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { PaymentGate } from '../access/access-control.ts';
import { discardPrefetch, prefetch } from '../access/grant.ts';
import type { CatalogEntry } from '../catalog/route.ts';
import { sendRemembered } from '../edge/answer-memo.ts';
import type { AuthorizationClaims } from '../db/authorization-claims.ts';
import type { PaymentIdStore } from '../db/payment-ids.ts';
import type { PaymentRecords } from '../db/payments.ts';
import type { PaymentMetrics } from '../metrics/metrics.ts';
import type { PaymentAttempt } from './core/attempt.ts';
import { AuthorizationLocks } from './core/authorization-claim.ts';
import type { LaneOptions } from './core/lane.ts';
import { PaymentIdempotency } from './core/idempotency.ts';
import type { OfferReceipts } from './core/offer-receipt.ts';
import { PublishedTerms } from './core/published-terms.ts';
import { PaymentServer } from './core/resource-server.ts';
import { paymentTerms } from './core/responses.ts';
import type { PaymentSchemes } from './core/scheme.ts';
import { settleOnSend, type SendDecision } from './core/settle.ts';
import { verifyAndGrant, verifyByLane, type VerifiedPayment, type VerifyOptions } from './core/verify.ts';
import { beginAttempt } from './request-adapter.ts';
import type { PaymentSettings } from './settings.ts';

export { HEAD_PAYMENT, MALFORMED_PAYMENT, paymentTerms, type PaymentTerms } from './core/responses.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The payment of a paid request without an API key, as far as it has got. */
    x402Attempt?: PaymentAttempt;
    x402Payment?: VerifiedPayment;
  }
}

export interface GateOptions {
  x402: PaymentSettings;
  facilitator: FacilitatorClient;
  /** How the payment records name the facilitator (never a URL with a key in it). */
  facilitatorName: string;
  /** The paid routes; read when the gate first initialises (after all routes are mounted). */
  paidRoutes: () => CatalogEntry[];
  publicBaseUrl: string;
  log: FastifyBaseLogger;
  /** Every payment attempt that reaches the facilitator, one record each. */
  records: PaymentRecords;
  /** Payment identifiers (idempotent retries). */
  paymentIds: PaymentIdStore;
  /** The schemes offered, in offer order (x402.ts builds them from the settings). */
  schemes: PaymentSchemes;
  /** The claims of authorizations in play: one request at a time per authorization, across instances (x402.ts gives them; a gate tested alone may not). */
  authorizationClaims?: AuthorizationClaims;
  /** The records' database health: while it is degraded, no payment is verified (it could not be recorded). */
  database: { readonly degraded: boolean };
  /** Resolves once the ledger is open (an opening in progress is waited for, DB_OPEN_WAIT_MS); undefined: not waited for. */
  ledgerOpened?: () => Promise<void>;
  metrics: PaymentMetrics;
  /** The longest a paid call without an EIP-3009 authorization can take: how long a retry with its identifier waits for it. */
  paidCallMs: number;
  /** Aborted when the server closes: waits for the chain end. */
  signal?: AbortSignal;
  /** Start the route's work while the facilitator verifies (X402_PREFETCH); default true. */
  prefetch?: boolean;
  /** Signed offers and receipts (X402_SIGNING_KEY); undefined: nothing is signed. */
  receipts?: OfferReceipts;
}

/** The gate, with what x402.ts drives at start-up and the terms it publishes (core/published-terms.ts). */
export interface X402Gate extends PaymentGate {
  prepare(): void;
  initialize(): Promise<void>;
  /** Every paid route's terms as its 402 states them, once the payment table is ready (for /openapi.json). */
  terms: PublishedTerms;
}

/** The headers and body a settle decided (core/settle.ts), set on the reply; returns the body to send. */
function applied(reply: FastifyReply, send: SendDecision): unknown {
  reply.code(send.status);
  for (const name of send.remove) reply.removeHeader(name);
  reply.headers(send.headers);
  if (send.contentType) reply.type(send.contentType);
  return send.body;
}

export function createPaymentGate(opts: GateOptions): X402Gate {
  const terms = paymentTerms(opts.x402);
  const idempotency = new PaymentIdempotency({ store: opts.paymentIds, log: opts.log });
  // The request of each attempt, for the route's work started while its payment is verified.
  const requests = new WeakMap<PaymentAttempt, FastifyRequest>();
  const server = new PaymentServer({
    schemes: opts.schemes,
    facilitator: opts.facilitator,
    paidRoutes: opts.paidRoutes,
    publicBaseUrl: opts.publicBaseUrl,
    records: { records: opts.records, metrics: opts.metrics, facilitator: opts.facilitatorName, log: opts.log, signal: opts.signal },
    prefetch:
      opts.prefetch === false
        ? undefined
        : (attempt) => {
            const req = requests.get(attempt);
            if (req) prefetch(req, attempt.entry);
          },
    receipts: opts.receipts,
  });
  const claims = opts.authorizationClaims;
  const authorizations = claims && new AuthorizationLocks({ claims, log: opts.log });
  // A scheme's lane (a repeat voucher without the SDK's per-call work, core/lane.ts); not with signed receipts, which
  // only the SDK's settle makes.
  const lane: LaneOptions | undefined = opts.receipts
    ? undefined
    : { schemes: opts.schemes, records: opts.records, metrics: opts.metrics, log: opts.log, publicBaseUrl: opts.publicBaseUrl, facilitator: opts.facilitatorName };
  const verify: VerifyOptions = { ...opts, terms, server, idempotency, authorizations, lane };
  const settle = { terms, server, idempotency, metrics: opts.metrics, log: opts.log, contentDigest: opts.receipts !== undefined, lane };

  const published = new PublishedTerms(server, opts.paidRoutes, opts.publicBaseUrl, opts.log);

  return {
    prepare: () => server.prepare(),
    terms: published,

    async initialize() {
      await server.ready();
    },

    async preHandler(req, reply, entry) {
      // payForAnswer's, when it left the payment to the route (nothing of it held): the header is not decoded twice.
      const attempt = req.x402Attempt ?? beginAttempt(req, entry, opts.publicBaseUrl, opts.schemes);
      requests.set(attempt, req);
      req.x402Attempt = attempt;
      try {
        const verdict = await verifyAndGrant(attempt, verify);
        if ('answer' in verdict) {
          const { status, headers, body } = verdict.answer;
          return reply.code(status).headers(headers ?? {}).send(body);
        }
        req.x402Payment = verdict.granted;
        req.grant = { entry, via: 'x402' };
      } finally {
        // Refused, replayed, or failed anywhere: whatever work was started for this request goes nowhere.
        if (!req.grant) discardPrefetch(req);
      }
    },

    async payForAnswer(req, reply, entry, remembered) {
      if (!lane || req.method !== 'GET') return false;
      const attempt = beginAttempt(req, entry, opts.publicBaseUrl, opts.schemes);
      // Set first: whatever ends the request (a refusal, an error thrown) gives up what the attempt holds (onResponse).
      req.x402Attempt = attempt;
      const verdict = await verifyByLane(attempt, verify);
      // Not the lane's: the route decides it, with this attempt (preHandler).
      if (verdict === undefined) return false;
      if ('answer' in verdict) {
        const { status, headers, body } = verdict.answer;
        reply.code(status).headers(headers ?? {}).send(body);
        return true;
      }
      req.grant = { entry, via: 'x402' };
      const answer = remembered();
      if (answer === undefined) {
        // Its time ran out meanwhile: the route makes it, granted, and it is settled on send.
        req.x402Payment = verdict.granted;
        return false;
      }
      const sent = { status: 200, headers: { ...reply.getHeaders(), 'content-type': 'application/json; charset=utf-8' } };
      const send = await settleOnSend(verdict.granted, attempt, sent, answer.body, settle);
      // Charged: the remembered bytes with settling's headers. Not charged (a refusal, a state that could not be
      // written): its answer instead of the data, as onSend sends it.
      if (send.status === 200 && send.body === answer.body) sendRemembered(reply, answer, { set: send.headers, remove: send.remove });
      else reply.send(applied(reply, send));
      return true;
    },

    async onSend(req, reply, payload) {
      const paid = req.x402Payment;
      if (!paid) return payload;
      req.x402Payment = undefined;
      const send = await settleOnSend(paid, req.x402Attempt, { status: reply.statusCode, headers: reply.getHeaders() }, payload, settle);
      return applied(reply, send);
    },

    async onResponse(req) {
      // Whatever ended the request without a stored success (a refusal, a failed handler or settlement, an error
      // thrown anywhere): its payment identifier is given up when nothing was taken, kept when money may have moved.
      const attempt = req.x402Attempt;
      attempt?.replay?.close();
      if (attempt) await Promise.all([idempotency.finish(attempt), authorizations?.finish(attempt)]);
    },
  };
}
