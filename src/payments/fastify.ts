// The x402 payment gate for Fastify: a thin adapter over the official x402HTTPResourceServer, shaped
// after @x402/express. Before the handler: no payment → 402 with PAYMENT-REQUIRED and a JSON body
// stating the price; a payment → its identifier looked up (a retry gets its first answer again), then
// verified by the facilitator and recorded in the ledger. After the handler (onSend, where status and
// body are known but nothing is written yet): success → settle, add PAYMENT-RESPONSE, keep the answer
// under the payment's identifier; failure → cancel, so nobody pays for an error.
//
// A settle that has been sent is waited for as long as its authorization could land (facilitator.ts), and an
// outcome the facilitator did not tell is read from the chain (record-attempts.ts); a retry of a payment whose
// first attempt never answered is answered from the chain too (resume.ts). Whatever happens, a payment that may
// have been taken is never answered "try again later".
//
// Prefetch (X402_PREFETCH, on by default): when the SDK is about to ask the facilitator to verify an
// `exact` payment — the header decoded, it matches the route's requirements, its extensions are valid,
// no stored answer or running twin took it (idempotency) — the route's work starts at the same time
// (grant.ts holds its answer, unsent, until the grant exists). A paid call then costs
// max(verify, handler) + settle instead of verify + handler + settle. A payment that is refused drops
// the held answer (its upstream data stays in the cache); nothing is settled for it.
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import {
  SETTLEMENT_OVERRIDES_HEADER,
  withPrivateCacheControl,
  x402HTTPResourceServer,
  x402ResourceServer,
  type FacilitatorClient,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type RoutesConfig,
} from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { CatalogEntry } from '../catalog/route.ts';
import type { PaymentIdStore } from '../db/payment-ids.ts';
import type { PaymentLedger } from '../db/payments.ts';
import { DatabaseUnavailableError } from '../db/service.ts';
import { AppError, type ErrorBody } from '../lib/errors.ts';
import type { PaymentMetrics } from '../metrics/metrics.ts';
import type { PaymentGate } from '../access/access-control.ts';
import { discardPrefetch, prefetch } from '../access/grant.ts';
import { attemptOf, FastifyAdapter, type PaymentAttempt } from './attempt.ts';
import { checkValidityWindow, eip3009Of } from './authorization.ts';
import { assertBazaarDeclarations, bazaarResourceServerExtension, discoveryConfig } from './bazaar.ts';
import type { BatchOffer } from './batch/batch-settlement.ts';
import { CHAIN_GRACE_MS, type AuthorizationChain } from './chain.ts';
import { SETTLE_ANSWER_GRACE_MS } from './facilitator.ts';
import { PAYMENT_IDENTIFIER_DECLARATION, PaymentIdempotency, type ClaimBounds } from './idempotency.ts';
import { recordPaymentsInLedger } from './record-attempts.ts';
import { facilitatorFailure, HEAD_PAYMENT, MALFORMED_PAYMENT, NOT_CHARGED, outcomeUnconfirmed, paymentRequiredBody, paymentTerms } from './responses.ts';
import { resumePayment } from './resume.ts';

export { HEAD_PAYMENT, MALFORMED_PAYMENT, paymentTerms, type PaymentTerms } from './responses.ts';

type Verified = Extract<HTTPProcessResult, { type: 'payment-verified' }> & { context: HTTPRequestContext };

declare module 'fastify' {
  interface FastifyRequest {
    /** The payment of a paid request without an API key, as far as it has got. */
    x402Attempt?: PaymentAttempt;
    x402Payment?: Verified;
  }
}

export interface GateOptions {
  x402: Config['x402'];
  facilitator: FacilitatorClient;
  /** How the ledger names the facilitator (never a URL with a key in it). */
  facilitatorName: string;
  /** The paid routes; read when the gate first initialises (after all routes are mounted). */
  paidRoutes: () => CatalogEntry[];
  publicBaseUrl: string;
  log: FastifyBaseLogger;
  /** Every payment attempt that reaches the facilitator, one row each. */
  ledger: PaymentLedger;
  /** Payment identifiers (idempotent retries). */
  paymentIds: PaymentIdStore;
  /** The ledger database's health: while it is degraded, no payment is verified (it could not be recorded). */
  database: { readonly degraded: boolean };
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
}

export function createPaymentGate(opts: GateOptions): PaymentGate & { prepare(): void; initialize(): Promise<void> } {
  const terms = paymentTerms(opts.x402);
  const asset = opts.x402.asset!;
  const idempotency = new PaymentIdempotency({ store: opts.paymentIds, log: opts.log });
  let server: x402HTTPResourceServer | undefined;
  let init: Promise<void> | undefined;

  const build = (batch: BatchOffer | undefined) => {
    const resourceServer = new x402ResourceServer(opts.facilitator)
      .register(opts.x402.network, new ExactEvmScheme())
      // Adds the request's method to each 402's Bazaar declaration, which fails validation without it (as @x402/express does).
      .registerExtension(bazaarResourceServerExtension);
    batch?.install(resourceServer);
    recordPaymentsInLedger(resourceServer, {
      ledger: opts.ledger,
      metrics: opts.metrics,
      facilitator: opts.facilitatorName,
      log: opts.log,
      isRefund: batch?.isRefund,
      publicBaseUrl: opts.publicBaseUrl,
      chain: opts.chain,
      signal: opts.signal,
    });
    // The SDK calls this right before it asks the facilitator to verify, once the payment decoded, matched the
    // route's requirements and passed its extensions' checks: only a payment that goes to verify starts the work.
    // Only `exact`: its verify is a facilitator round trip. A batch-settlement voucher is checked by this
    // server in milliseconds (nothing to overlap), and some of its payloads never reach the handler (a
    // refund) or are refused by the scheme's own hook after this one (a busy channel): prefetching them
    // would only spend upstream calls.
    if (opts.prefetch !== false) {
      resourceServer.onBeforeVerify(async (ctx) => {
        const attempt = attemptOf(ctx);
        if (attempt && ctx.requirements.scheme === 'exact') prefetch(attempt.req, attempt.entry);
      });
    }
    const routes: RoutesConfig = Object.fromEntries(
      opts.paidRoutes().map((e) => {
        const discovery = discoveryConfig(e);
        return [
          `GET ${e.url}`,
          {
            accepts: [
              {
                scheme: 'exact',
                network: opts.x402.network,
                payTo: terms.payTo,
                price: { amount: terms.amount, asset: asset.address, extra: { name: asset.name, version: asset.version } },
                maxTimeoutSeconds: opts.x402.maxTimeoutS,
              },
              ...(batch ? [batch.accepts] : []),
            ],
            resource: `${opts.publicBaseUrl}${e.url}`,
            description: e.def.summary,
            mimeType: 'application/json',
            ...discovery,
            extensions: { ...discovery.extensions, ...PAYMENT_IDENTIFIER_DECLARATION },
          },
        ];
      }),
    );
    assertBazaarDeclarations(routes);
    return new x402HTTPResourceServer(resourceServer, routes);
  };

  /** Fetches the facilitator's supported kinds; retried on the next request if it failed. */
  const ready = async (): Promise<x402HTTPResourceServer> => {
    if (!server) {
      const batch = await opts.batch?.offer(); // throws while the facilitator cannot be reached: asked again next time
      server ??= build(batch);
    }
    init ??= server.initialize();
    try {
      await init;
    } catch (err) {
      init = undefined;
      throw err;
    }
    return server;
  };

  /** Before the handler: answers 402/503 (or a stored answer) itself, or grants the request once its payment is verified. */
  const verifyAndGrant = async (req: FastifyRequest, reply: FastifyReply, entry: CatalogEntry): Promise<unknown> => {
    const attempt: PaymentAttempt = { req, entry, payloadHash: undefined, paymentId: undefined, ledgerId: undefined, ledgerFailure: undefined, answerStored: false };
    req.x402Attempt = attempt;
    // Decode the payment header first: the SDK would print a stack trace for garbage; we answer 402 with the reason.
    const plain = new FastifyAdapter(attempt, opts.publicBaseUrl);
    const given = plain.getHeader('payment-signature') ?? plain.getHeader('x-payment');
    const decoded = given === undefined ? undefined : decodedPayment(given);
    const malformed = given !== undefined && !decoded;
    // HEAD delivers no body, so it never takes a payment: it gets the route's challenge, as GET would without one.
    const headWithPayment = req.method === 'HEAD' && given !== undefined;
    const hidden = malformed || headWithPayment;
    const adapter = hidden ? new FastifyAdapter(attempt, opts.publicBaseUrl, true) : plain;

    if (given !== undefined && !hidden) {
      // No payment is taken that cannot be recorded: with the ledger down, refuse before anything is verified.
      if (opts.database.degraded) throw new DatabaseUnavailableError('the payments ledger is unavailable; no payment is taken that cannot be recorded: try again shortly');
      attempt.authorization = decoded?.accepted?.scheme === 'exact' ? eip3009Of(decoded) : undefined;
      // Its outcome is waited for until validBefore: an authorization valid for longer than offered is refused.
      const tooLong = attempt.authorization && checkValidityWindow(attempt.authorization, opts.x402.maxTimeoutS);
      if (tooLong) return reply.code(402).send(paymentRequiredBody({}, terms, tooLong));
      // A retry of a payment already answered gets that answer (before the facilitator sees it again).
      const decision = await idempotency.decide(attempt, given, claimBounds(req, entry, attempt, opts.paidCallMs));
      if (decision.kind === 'replay') {
        const { status, headers, body } = decision.response;
        return reply.code(status).headers(headers).send(body);
      }
    }

    const context: HTTPRequestContext = { adapter, path: entry.url, decodedPath: entry.url, method: 'GET', paymentHeader: adapter.getHeader('payment-signature') ?? adapter.getHeader('x-payment') };
    let result: HTTPProcessResult;
    try {
      const http = await ready();
      result = await http.processHTTPRequest(context);
      if (result.type === 'payment-error' && attempt.verifyRefusal) {
        // Refused: a used or expiring authorization may be this very payment, whose first attempt never answered.
        const resumed = await resumePayment(attempt, { ledger: opts.ledger, chain: opts.chain, network: opts.x402.network, signal: opts.signal });
        if (resumed.kind === 'not_landed') return reply.code(402).send(paymentRequiredBody({}, terms, NOT_CHARGED));
        if (resumed.kind === 'unknown') {
          attempt.settle = 'unknown';
          throw outcomeUnconfirmed();
        }
        if (resumed.kind === 'landed') {
          attempt.resume = { ledgerId: resumed.ledgerId, txHash: resumed.txHash, payer: resumed.payer };
          attempt.verifyRefusal = undefined;
          result = await http.processHTTPRequest(context);
        }
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw facilitatorFailure(err, opts.log);
    }
    // The facilitator verified it, but the ledger could not record it: refused before anything is settled.
    if (attempt.ledgerFailure) throw attempt.ledgerFailure;
    if (result.type === 'no-payment-required') {
      // The catalog says paid; the SDK's table does not know the route. Fail closed.
      opts.log.error({ route: entry.url }, 'x402: the payment table has no entry for a paid route; answering 402');
      return reply.code(402).send(paymentRequiredBody({}, terms));
    }
    if (result.type === 'payment-error') {
      const r = result.response;
      // A payment operation answered without the handler (a batch-settlement refund): the SDK's own answer.
      if (r.status < 400) return reply.code(r.status).headers(r.headers).send(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
      const reason = malformed ? MALFORMED_PAYMENT : headWithPayment ? HEAD_PAYMENT : undefined;
      return reply.code(r.status).headers(r.headers).send(paymentRequiredBody(r.headers, terms, reason));
    }
    req.x402Payment = { ...result, context };
    req.grant = { entry, via: 'x402' };
  };

  return {
    /** Builds the payment table once routes exist; throws when a route's Bazaar declaration is invalid. */
    prepare() {
      const built = build(undefined);
      // With batch settlement, the table that serves waits for the facilitator's offer (ready()).
      if (!opts.batch) server ??= built;
    },

    async initialize() {
      await ready();
    },

    async preHandler(req, reply, entry) {
      try {
        return await verifyAndGrant(req, reply, entry);
      } finally {
        // Refused, replayed, or failed anywhere: whatever work was started for this request goes nowhere.
        if (!req.grant) discardPrefetch(req);
      }
    },

    async onSend(req, reply, payload) {
      const paid = req.x402Payment;
      if (!paid) return payload;
      req.x402Payment = undefined;
      const http = server!;
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
      const started = performance.now();
      const attempt = req.x402Attempt;
      // From here money may move: the payment's identifier is never given to another payment until the outcome is known.
      if (attempt) attempt.settle ??= 'sent';
      try {
        const settled = await http.processSettlement(
          paid.paymentPayload,
          paid.paymentRequirements,
          paid.declaredExtensions,
          { request: paid.context, responseBody: Buffer.from(typeof payload === 'string' ? payload : ''), responseHeaders },
          undefined,
          paid.beforeHandlerSettlement,
        );
        opts.metrics.settleLatency((performance.now() - started) / 1000);
        if (!settled.success) {
          // Refused and the chain could not tell (another attempt of the authorization may have paid): never "pay again".
          if (attempt?.settle === 'unknown') return unconfirmed(reply);
          const r = settled.response;
          reply.code(r.status).headers(r.headers).type('application/json; charset=utf-8');
          return JSON.stringify(paymentRequiredBody(r.headers, terms, attempt?.settle === 'not_landed' ? NOT_CHARGED : settled.errorReason));
        }
        reply.headers(settled.headers);
        reply.header('cache-control', withPrivateCacheControl(cacheControl()));
        // Kept under the payment's identifier before the answer leaves: a retry that crosses it gets the same.
        if (attempt) await idempotency.complete(attempt, reply.statusCode, reply.getHeaders(), typeof payload === 'string' ? payload : String(payload));
        return payload;
      } catch (err) {
        opts.metrics.settleLatency((performance.now() - started) / 1000);
        // Unheard, then the chain said: never landed (nothing was charged: pay again), or could not tell (send the same payment again).
        if (attempt?.settle === 'not_landed') {
          reply.code(402).type('application/json; charset=utf-8');
          return JSON.stringify(paymentRequiredBody({}, terms, NOT_CHARGED));
        }
        if (attempt?.settle === 'refused') return errorBody(reply, facilitatorFailure(err, opts.log));
        if (attempt) attempt.settle = 'unknown';
        return unconfirmed(reply);
      }
    },

    async onResponse(req) {
      // Whatever ended the request without a stored success (a refusal, a failed handler or settlement, an error
      // thrown anywhere): its payment identifier is given up when nothing was taken, kept when money may have moved.
      const attempt = req.x402Attempt;
      if (attempt) await idempotency.finish(attempt);
    },
  };
}

/** An error as the body onSend returns (the reply's status and Retry-After set). */
function errorBody(reply: FastifyReply, failure: AppError): string {
  reply.code(failure.statusCode).type('application/json; charset=utf-8');
  if (failure.retryAfterS !== undefined) reply.header('retry-after', String(failure.retryAfterS));
  return JSON.stringify({ error: failure.message, source: failure.source } satisfies ErrorBody);
}

/** 504 for a payment that may have been taken and whose outcome nobody could tell: send the same payment again. */
const unconfirmed = (reply: FastifyReply) => errorBody(reply, outcomeUnconfirmed());

/** The payment payload of a header, or undefined when it cannot be decoded. */
function decodedPayment(header: string): PaymentPayload | undefined {
  try {
    return decodePaymentSignatureHeader(header);
  } catch {
    return undefined;
  }
}

/** What a payment identifier is bound to (method, matched route, sorted query) and how long its claim may last. */
function claimBounds(req: FastifyRequest, entry: CatalogEntry, attempt: PaymentAttempt, paidCallMs: number): ClaimBounds {
  const q = req.url.indexOf('?');
  const sorted = [...new URLSearchParams(q >= 0 ? req.url.slice(q + 1) : '')].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  const query = new URLSearchParams(sorted).toString();
  const validBeforeMs = attempt.authorization ? attempt.authorization.validBefore * 1000 : undefined;
  return {
    request: `${req.method} ${entry.url}${query ? `?${query}` : ''}`,
    leaseCap: validBeforeMs ?? Infinity,
    // A twin's settle may be listened to until validBefore (+ its grace), then the chain until it is sure.
    waitUntil: validBeforeMs !== undefined ? validBeforeMs + SETTLE_ANSWER_GRACE_MS + CHAIN_GRACE_MS : Date.now() + paidCallMs,
  };
}
