// The x402 payment gate for Fastify: a thin adapter over the official x402HTTPResourceServer,
// shaped after @x402/express. Before the handler: no payment → 402 with PAYMENT-REQUIRED and a
// JSON body stating the price; a payment → verified by the facilitator. After the handler (onSend,
// where status and body are known but nothing is written yet): success → settle, add
// PAYMENT-RESPONSE; failure → cancel, so nobody pays for an error.
import {
  getFacilitatorResponseError,
  SETTLEMENT_OVERRIDES_HEADER,
  withPrivateCacheControl,
  x402HTTPResourceServer,
  x402ResourceServer,
  type FacilitatorClient,
  type HTTPAdapter,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type RoutesConfig,
} from '@x402/core/server';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { FacilitatorTimeoutError } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import type { CatalogEntry } from '../../catalog/route.ts';
import { AppError, type ErrorBody } from '../../http/errors.ts';
import type { PaymentGate } from '../access-control.ts';
import { assertBazaarDeclarations, bazaarResourceServerExtension, discoveryConfig } from './bazaar.ts';
import type { BatchOffer } from './batch-settlement.ts';
import { FacilitatorUnavailableError } from './facilitator.ts';
import { atomicAmount } from './price.ts';

type Verified = Extract<HTTPProcessResult, { type: 'payment-verified' }> & { context: HTTPRequestContext };

declare module 'fastify' {
  interface FastifyRequest {
    x402Payment?: Verified;
  }
}

/** What a 402 body tells people and agents, besides the PAYMENT-REQUIRED header. */
export interface PaymentTerms {
  price: string;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
}

export function paymentTerms(x402: Config['x402']): PaymentTerms {
  return {
    price: x402.price,
    network: x402.network,
    asset: x402.asset!.address,
    payTo: x402.payTo!,
    amount: atomicAmount(x402.price, x402.asset!.decimals),
  };
}

/** The reason given for a payment header that cannot even be decoded. */
export const MALFORMED_PAYMENT = 'malformed payment header: PAYMENT-SIGNATURE (or X-PAYMENT) must be a base64-encoded x402 payment payload';

/** The reason given for a payment sent with HEAD, which has no body to deliver for it. */
export const HEAD_PAYMENT = 'payments are taken on GET only: a HEAD answer has no body to deliver for the payment';

const PAYMENT_HEADERS = new Set(['payment-signature', 'x-payment']);

/**
 * The SDK's view of a request. Path and URL are the *matched route's* (its catalog URL under the
 * public base URL), never the raw request line: an absolute-form URI, a HEAD, or any other spelling
 * of the path that Fastify routes to a paid handler must meet that route's payment requirements.
 */
class FastifyAdapter implements HTTPAdapter {
  /** `hidePayment`: the payment header could not be decoded; the SDK sees none (and logs nothing). */
  constructor(
    private readonly req: FastifyRequest,
    private readonly entry: CatalogEntry,
    private readonly publicBaseUrl: string,
    private readonly hidePayment = false,
  ) {}
  getHeader(name: string) {
    const lower = name.toLowerCase();
    if (this.hidePayment && PAYMENT_HEADERS.has(lower)) return undefined;
    const v = this.req.headers[lower];
    return Array.isArray(v) ? v[0] : v;
  }
  getMethod() {
    return 'GET';
  }
  getPath() {
    return this.entry.url;
  }
  getUrl() {
    return `${this.publicBaseUrl}${this.entry.url}`;
  }
  getAcceptHeader() {
    return this.getHeader('accept') ?? '';
  }
  getUserAgent() {
    return this.getHeader('user-agent') ?? '';
  }
  getQueryParams() {
    return (this.req.query ?? {}) as Record<string, string | string[]>;
  }
  getQueryParam(name: string) {
    return this.getQueryParams()[name];
  }
  getBody() {
    return this.req.body;
  }
}

export interface GateOptions {
  x402: Config['x402'];
  facilitator: FacilitatorClient;
  /** The paid routes; read when the gate first initialises (after all routes are mounted). */
  paidRoutes: () => CatalogEntry[];
  publicBaseUrl: string;
  log: FastifyBaseLogger;
  /** batch-settlement beside exact (X402_BATCH_SETTLEMENT), when the facilitator offers it. */
  batch?: { offer(): Promise<BatchOffer | undefined> };
}

export function createPaymentGate(opts: GateOptions): PaymentGate & { prepare(): void; initialize(): Promise<void> } {
  const terms = paymentTerms(opts.x402);
  const asset = opts.x402.asset!;
  let server: x402HTTPResourceServer | undefined;
  let init: Promise<void> | undefined;

  const build = (batch: BatchOffer | undefined) => {
    const resourceServer = new x402ResourceServer(opts.facilitator)
      .register(opts.x402.network, new ExactEvmScheme())
      // Adds the request's method to each 402's Bazaar declaration, which fails validation without it (as @x402/express does).
      .registerExtension(bazaarResourceServerExtension);
    batch?.install(resourceServer);
    const routes: RoutesConfig = Object.fromEntries(
      opts.paidRoutes().map((e) => [
        `GET ${e.url}`,
        {
          accepts: [{
            scheme: 'exact',
            network: opts.x402.network,
            payTo: terms.payTo,
            price: { amount: terms.amount, asset: asset.address, extra: { name: asset.name, version: asset.version } },
            maxTimeoutSeconds: opts.x402.maxTimeoutS,
          }, ...(batch ? [batch.accepts] : [])],
          resource: `${opts.publicBaseUrl}${e.url}`,
          description: e.def.summary,
          mimeType: 'application/json',
          ...discoveryConfig(e),
        },
      ]),
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
      // Decode the payment header first: the SDK would print a stack trace for garbage; we answer 402 with the reason.
      const plain = new FastifyAdapter(req, entry, opts.publicBaseUrl);
      const given = plain.getHeader('payment-signature') ?? plain.getHeader('x-payment');
      const malformed = given !== undefined && !decodes(given);
      // HEAD delivers no body, so it never takes a payment: it gets the route's challenge, as GET would without one.
      const headWithPayment = req.method === 'HEAD' && given !== undefined;
      const adapter = malformed || headWithPayment ? new FastifyAdapter(req, entry, opts.publicBaseUrl, true) : plain;
      const context: HTTPRequestContext = {
        adapter,
        path: entry.url,
        decodedPath: entry.url,
        method: 'GET',
        paymentHeader: adapter.getHeader('payment-signature') ?? adapter.getHeader('x-payment'),
      };
      let result: HTTPProcessResult;
      try {
        const http = await ready();
        result = await http.processHTTPRequest(context);
      } catch (err) {
        throw facilitatorFailure(err, opts.log);
      }
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
      try {
        const settled = await http.processSettlement(
          paid.paymentPayload,
          paid.paymentRequirements,
          paid.declaredExtensions,
          { request: paid.context, responseBody: Buffer.from(typeof payload === 'string' ? payload : ''), responseHeaders },
          undefined,
          paid.beforeHandlerSettlement,
        );
        if (!settled.success) {
          const r = settled.response;
          reply.code(r.status).headers(r.headers).type('application/json; charset=utf-8');
          return JSON.stringify(paymentRequiredBody(r.headers, terms, settled.errorReason));
        }
        reply.headers(settled.headers);
        reply.header('cache-control', withPrivateCacheControl(cacheControl()));
        return payload;
      } catch (err) {
        const failure = facilitatorFailure(err, opts.log);
        reply.code(failure.statusCode).type('application/json; charset=utf-8');
        if (failure.retryAfterS !== undefined) reply.header('retry-after', String(failure.retryAfterS));
        return JSON.stringify({ error: failure.message, source: failure.source } satisfies ErrorBody);
      }
    },
  };
}

/** 402 body: the price in words, the reason when a payment was rejected, and what is accepted. */
function paymentRequiredBody(headers: Record<string, string>, terms: PaymentTerms, reason?: string) {
  const encoded = headers['PAYMENT-REQUIRED'] ?? headers['payment-required'];
  const required = encoded ? decodePaymentRequiredHeader(encoded) : undefined;
  const why = reason ?? (required?.error && required.error !== 'Payment required' ? required.error : undefined);
  return {
    error: why ? `payment rejected: ${why}` : 'payment required',
    ...(why ? { reason: why } : {}),
    price: terms.price,
    network: terms.network,
    asset: terms.asset,
    payTo: terms.payTo,
    accepts: required?.accepts ?? [],
  };
}

/** Seconds a client is told to wait when the facilitator is down. */
const FACILITATOR_RETRY_AFTER_S = 10;

/** The error a facilitator failure is answered with: 503 when it is down (with Retry-After), 502 when it answered nonsense. */
function facilitatorFailure(err: unknown, log: FastifyBaseLogger): AppError {
  const fe = getFacilitatorResponseError(err);
  if (fe) {
    const unavailable = fe instanceof FacilitatorUnavailableError || fe instanceof FacilitatorTimeoutError;
    log.warn({ err: fe.message }, 'x402 facilitator failure');
    return unavailable
      ? new AppError(503, 'payment facilitator unavailable; try again later', 'facilitator', { retryAfterS: FACILITATOR_RETRY_AFTER_S })
      : new AppError(502, 'payment facilitator gave an invalid answer', 'facilitator');
  }
  // Initialisation failures carry the facilitator error as their cause.
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause && getFacilitatorResponseError(cause)) return facilitatorFailure(cause, log);
  log.error({ err }, 'x402 payment processing failed');
  return new AppError(503, 'payment processing unavailable; try again later', 'facilitator', { retryAfterS: FACILITATOR_RETRY_AFTER_S });
}

function decodes(header: string): boolean {
  try {
    decodePaymentSignatureHeader(header);
    return true;
  } catch {
    return false;
  }
}
