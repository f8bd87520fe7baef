// The x402 payment gate for Fastify: the thin adapter over the payments core, as @x402/express is over
// @x402/core. It gives access-control.ts the three hooks of a paid request without an API key, and writes what
// the core decides: before the handler, verify-and-grant (verify.ts: the answer to send, or the grant of the
// matched route); on send, settle or cancel (settle.ts); once the answer is out, the payment identifier kept or
// given up (idempotency.ts). The payment table and the SDK's resource server are resource-server.ts's.
//
// Prefetch (X402_PREFETCH, on by default): when the SDK is about to ask the facilitator to verify an `exact`
// payment — the header decoded, it matches the route's requirements, its extensions are valid, no stored
// answer or running twin took it (idempotency) — the route's work starts at the same time (grant.ts holds its
// answer, unsent, until the grant exists). A paid call then costs max(verify, handler) + settle instead of
// verify + handler + settle. A payment that is refused drops the held answer (its upstream data stays in the
// cache); nothing is settled for it.
import type { FacilitatorClient } from '@x402/core/server';
import type { FastifyBaseLogger } from 'fastify';
import type { PaymentGate } from '../access/access-control.ts';
import { discardPrefetch, prefetch } from '../access/grant.ts';
import type { CatalogEntry } from '../catalog/route.ts';
import type { AuthorizationClaims } from '../db/authorization-claims.ts';
import type { PaymentIdStore } from '../db/payment-ids.ts';
import type { PaymentRecords } from '../db/payments.ts';
import type { PaymentMetrics } from '../metrics/metrics.ts';
import type { PaymentAttempt } from './attempt.ts';
import type { BatchOffer } from './batch/batch-settlement.ts';
import type { AuthorizationChain } from './chain.ts';
import { AuthorizationLocks } from './authorization-claim.ts';
import { PaymentIdempotency } from './idempotency.ts';
import { PaymentServer } from './resource-server.ts';
import { paymentTerms } from './responses.ts';
import type { PaymentSettings } from './settings.ts';
import { settleOnSend } from './settle.ts';
import type { OfferReceipts } from './offer-receipt.ts';
import { beginAttempt, verifyAndGrant, type VerifiedPayment, type VerifyOptions } from './verify.ts';

export { HEAD_PAYMENT, MALFORMED_PAYMENT, paymentTerms, type PaymentTerms } from './responses.ts';

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
  /** The claims of `exact` authorizations in play: one request at a time per authorization, across instances (x402.ts gives them; a gate tested alone may not). */
  authorizationClaims?: AuthorizationClaims;
  /** The records' database health: while it is degraded, no payment is verified (it could not be recorded). */
  database: { readonly degraded: boolean };
  /** Resolves once the ledger is open (an opening in progress is waited for, DB_OPEN_WAIT_MS); undefined: not waited for. */
  ledgerOpened?: () => Promise<void>;
  metrics: PaymentMetrics;
  /** The longest a paid call without an EIP-3009 authorization can take: how long a retry with its identifier waits for it. */
  paidCallMs: number;
  /** The payment network's chain (X402_RPC_URL): where outcomes the facilitator did not tell are read. */
  chain?: AuthorizationChain;
  /** Aborted when the server closes: waits for the chain end. */
  signal?: AbortSignal;
  /** batch-settlement beside exact (X402_BATCH_SETTLEMENT), when the facilitator offers it. */
  batch?: { offer(): Promise<BatchOffer | undefined> };
  /** Start the route's work while the facilitator verifies (X402_PREFETCH); default true. */
  prefetch?: boolean;
  /** Signed offers and receipts (X402_SIGNING_KEY); undefined: nothing is signed. */
  receipts?: OfferReceipts;
}

export function createPaymentGate(opts: GateOptions): PaymentGate & { prepare(): void; initialize(): Promise<void> } {
  const terms = paymentTerms(opts.x402);
  const idempotency = new PaymentIdempotency({ store: opts.paymentIds, log: opts.log });
  const server = new PaymentServer({
    x402: opts.x402,
    terms,
    facilitator: opts.facilitator,
    paidRoutes: opts.paidRoutes,
    publicBaseUrl: opts.publicBaseUrl,
    records: { records: opts.records, metrics: opts.metrics, facilitator: opts.facilitatorName, log: opts.log, chain: opts.chain, signal: opts.signal },
    batch: opts.batch,
    prefetch: opts.prefetch === false ? undefined : (attempt) => prefetch(attempt.request, attempt.entry),
    receipts: opts.receipts,
  });
  const claims = opts.authorizationClaims;
  const authorizations = claims && new AuthorizationLocks({ claims, network: opts.x402.network, log: opts.log });
  const verify: VerifyOptions = { ...opts, terms, server, idempotency, authorizations };
  const settle = { terms, server, idempotency, metrics: opts.metrics, log: opts.log, contentDigest: opts.receipts !== undefined };

  return {
    prepare: () => server.prepare(),

    async initialize() {
      await server.ready();
    },

    async preHandler(req, reply, entry) {
      const attempt = beginAttempt(req, entry);
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

    async onSend(req, reply, payload) {
      const paid = req.x402Payment;
      if (!paid) return payload;
      req.x402Payment = undefined;
      return settleOnSend(paid, req.x402Attempt, reply, payload, settle);
    },

    async onResponse(req) {
      // Whatever ended the request without a stored success (a refusal, a failed handler or settlement, an error
      // thrown anywhere): its payment identifier is given up when nothing was taken, kept when money may have moved.
      const attempt = req.x402Attempt;
      if (attempt) await Promise.all([idempotency.finish(attempt), authorizations?.finish(attempt)]);
    },
  };
}
