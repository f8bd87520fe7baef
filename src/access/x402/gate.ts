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
import type { ErrorBody } from '../../http/errors.ts';
import type { PaymentGate } from '../access-control.ts';
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

const PAYMENT_HEADERS = new Set(['payment-signature', 'x-payment']);

class FastifyAdapter implements HTTPAdapter {
  /** `hidePayment`: the payment header could not be decoded; the SDK sees none (and logs nothing). */
  constructor(
    private readonly req: FastifyRequest,
    private readonly hidePayment = false,
  ) {}
  getHeader(name: string) {
    const lower = name.toLowerCase();
    if (this.hidePayment && PAYMENT_HEADERS.has(lower)) return undefined;
    const v = this.req.headers[lower];
    return Array.isArray(v) ? v[0] : v;
  }
  getMethod() {
    return this.req.method;
  }
  getPath() {
    return this.req.url.split('?')[0]!;
  }
  getUrl() {
    return `${this.req.protocol}://${this.req.host}${this.req.url}`;
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

export function createPaymentGate(opts: GateOptions): PaymentGate & { initialize(): Promise<void> } {
  const terms = paymentTerms(opts.x402);
  const asset = opts.x402.asset!;
  let server: x402HTTPResourceServer | undefined;
  let init: Promise<void> | undefined;

  const build = (batch: BatchOffer | undefined) => {
    const resourceServer = new x402ResourceServer(opts.facilitator).register(opts.x402.network, new ExactEvmScheme());
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
        },
      ]),
    );
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
    async initialize() {
      await ready();
    },

    async preHandler(req, reply) {
      // Decode the payment header first: the SDK would print a stack trace for garbage; we answer 402 with the reason.
      const plain = new FastifyAdapter(req);
      const given = plain.getHeader('payment-signature') ?? plain.getHeader('x-payment');
      const malformed = given !== undefined && !decodes(given);
      const adapter = malformed ? new FastifyAdapter(req, true) : plain;
      const path = adapter.getPath();
      const context: HTTPRequestContext = {
        adapter,
        path,
        decodedPath: safeDecode(path),
        method: req.method,
        paymentHeader: adapter.getHeader('payment-signature') ?? adapter.getHeader('x-payment'),
      };
      let result: HTTPProcessResult;
      try {
        const http = await ready();
        result = await http.processHTTPRequest(context);
      } catch (err) {
        return sendFacilitatorFailure(reply, err, opts.log);
      }
      if (result.type === 'no-payment-required') return;
      if (result.type === 'payment-error') {
        const r = result.response;
        // A payment operation answered without the handler (a batch-settlement refund): the SDK's own answer.
        if (r.status < 400) return reply.code(r.status).headers(r.headers).send(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
        return reply.code(r.status).headers(r.headers).send(paymentRequiredBody(r.headers, terms, malformed ? MALFORMED_PAYMENT : undefined));
      }
      req.x402Payment = { ...result, context };
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
        const { status, body } = facilitatorFailure(err, opts.log);
        reply.code(status).type('application/json; charset=utf-8');
        return JSON.stringify(body);
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

function facilitatorFailure(err: unknown, log: FastifyBaseLogger): { status: number; body: ErrorBody } {
  const fe = getFacilitatorResponseError(err);
  if (fe) {
    const unavailable = fe instanceof FacilitatorUnavailableError || fe instanceof FacilitatorTimeoutError;
    log.warn({ err: fe.message }, 'x402 facilitator failure');
    return unavailable
      ? { status: 503, body: { error: 'payment facilitator unavailable; try again later', source: 'facilitator' } }
      : { status: 502, body: { error: 'payment facilitator gave an invalid answer', source: 'facilitator' } };
  }
  // Initialisation failures carry the facilitator error as their cause.
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause && getFacilitatorResponseError(cause)) return facilitatorFailure(cause, log);
  log.error({ err }, 'x402 payment processing failed');
  return { status: 503, body: { error: 'payment processing unavailable; try again later', source: 'facilitator' } };
}

function sendFacilitatorFailure(reply: FastifyReply, err: unknown, log: FastifyBaseLogger) {
  const { status, body } = facilitatorFailure(err, log);
  return reply.code(status).send(body);
}

function decodes(header: string): boolean {
  try {
    decodePaymentSignatureHeader(header);
    return true;
  } catch {
    return false;
  }
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
