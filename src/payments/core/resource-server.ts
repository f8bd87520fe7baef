// The x402 SDK's resource server for the paid routes, built with marketgate's hooks: every scheme offered
// (scheme.ts: each registers itself), Bazaar's request method on every 402, the payment records written from the
// SDK's own hooks (record-attempts.ts), and the prefetch of the route's work as a payment goes to verify. It is
// built once routes exist (prepare: the payment table's Bazaar declarations are checked at start-up) and made
// ready on first use (ready: the facilitator's supported kinds, asked again after a failure).
import { x402HTTPResourceServer, x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { CatalogEntry } from '../../catalog/route.ts';
import { attemptOf, type PaymentAttempt } from './attempt.ts';
import { bazaarResourceServerExtension } from './bazaar.ts';
import type { OfferReceipts } from './offer-receipt.ts';
import { recordPaymentAttempts, type AttemptRecordOptions } from './record-attempts.ts';
import { paymentRoutes } from './route-table.ts';
import type { PaymentSchemes, SchemeOffer } from './scheme.ts';

export interface ResourceServerOptions {
  /** The schemes offered, in offer order. */
  schemes: PaymentSchemes;
  facilitator: FacilitatorClient;
  /** The paid routes; read when the server is first built (after all routes are mounted). */
  paidRoutes: () => CatalogEntry[];
  publicBaseUrl: string;
  /** What the payment records are written with (the SDK's verify and settle hooks). */
  records: Omit<AttemptRecordOptions, 'schemes' | 'publicBaseUrl'>;
  /** Starts the route's work of a payment about to be verified, when its scheme allows it (X402_PREFETCH); undefined: none. */
  prefetch?: (attempt: PaymentAttempt) => void;
  /** X402_SIGNING_KEY: signed offers on every 402, a signed receipt on every paid answer (offer-receipt.ts). */
  receipts?: OfferReceipts;
}

/** What a challenge's headers a refusal repeats: the requirements, and the 402's own caching rule. */
const CHALLENGE_HEADERS = ['payment-required', 'cache-control'];

function pick(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => names.includes(k.toLowerCase())));
}

export class PaymentServer {
  private server: x402HTTPResourceServer | undefined;
  private init: Promise<void> | undefined;
  /** The table whose readiness the listeners were last told of. */
  private announced: x402HTTPResourceServer | undefined;
  private readonly tableListeners: ((http: x402HTTPResourceServer) => void)[] = [];

  constructor(private readonly opts: ResourceServerOptions) {}

  /** Builds the payment table once routes exist; throws when a route's Bazaar declaration is invalid. */
  prepare(): void {
    const { offers, complete } = this.opts.schemes.offersNow();
    const built = this.build(offers);
    // A scheme offered once the facilitator says (batch settlement, Solana): the table that serves waits for it (ready()).
    if (complete) this.server ??= built;
  }

  /** The server, its facilitator's supported kinds fetched; a failure is thrown, and asked again next time. */
  async ready(): Promise<x402HTTPResourceServer> {
    if (!this.server) {
      const offers = await this.opts.schemes.offers(); // throws while the facilitator cannot be reached: asked again next time
      this.server ??= this.build(offers);
    }
    this.init ??= this.server.initialize();
    try {
      await this.init;
    } catch (err) {
      this.init = undefined;
      throw err;
    }
    if (this.announced !== this.server) {
      this.announced = this.server;
      for (const listener of this.tableListeners) listener(this.server);
    }
    return this.server;
  }

  /**
   * Calls `listener` each time a payment table becomes ready to serve (its facilitator's supported kinds fetched):
   * what its 402s offer is final then (published-terms.ts reads it).
   */
  onTable(listener: (http: x402HTTPResourceServer) => void): void {
    this.tableListeners.push(listener);
  }

  /**
   * The headers of `attempt`'s route's challenge (PAYMENT-REQUIRED, with its offers), as a request without a payment
   * gets them: for a 402 that refuses a payment and asks for a new one. Empty when the server cannot make one (its
   * facilitator unreachable): the 402 then states the price in its body alone.
   */
  async challengeHeaders(attempt: PaymentAttempt): Promise<Record<string, string>> {
    try {
      const http = await this.ready();
      const adapter = attempt.request.adapter(true);
      const url = attempt.entry.url;
      const result = await http.processHTTPRequest({ adapter, path: url, decodedPath: url, method: 'GET' });
      return result.type === 'payment-error' && result.response.status === 402 ? pick(result.response.headers, CHALLENGE_HEADERS) : {};
    } catch {
      return {};
    }
  }

  /** The server a verified payment went through (ready() resolved for it). */
  get current(): x402HTTPResourceServer {
    return this.server!;
  }

  private build(offers: readonly SchemeOffer[]): x402HTTPResourceServer {
    const { schemes, prefetch } = this.opts;
    // Adds the request's method to each 402's Bazaar declaration, which fails validation without it (as @x402/express does).
    const resourceServer = new x402ResourceServer(this.opts.facilitator).registerExtension(bazaarResourceServerExtension);
    for (const offer of offers) offer.register(resourceServer);
    const receipts = this.opts.receipts?.forServer(schemes.isRefund);
    if (receipts) resourceServer.registerExtension(receipts.extension);
    recordPaymentAttempts(resourceServer, { ...this.opts.records, schemes, publicBaseUrl: this.opts.publicBaseUrl, receipts });
    // The SDK calls this right before it asks the facilitator to verify, once the payment decoded, matched the
    // route's requirements and passed its extensions' checks: only a payment that goes to verify starts the work.
    // Only for a scheme that says so (`prefetch`): exact's verify is a facilitator round trip. A batch-settlement
    // voucher is checked by this server in milliseconds (nothing to overlap), and some of its payloads never
    // reach the handler (a refund) or are refused by the scheme's own hook after this one (a busy channel):
    // prefetching them would only spend upstream calls.
    // Then a payment its scheme can check itself (localVerify: exact's EOA-signed EIP-3009 authorization) skips
    // the facilitator's /verify when its authorization is new to the ledger (firstSeen); the after-verify hooks
    // still record it. A retry of an authorization already seen keeps the facilitator's verify: its refusal ("nonce
    // used") is what resume.ts answers a lost answer from. A resumed payment was skipped by the resume hook before.
    resourceServer.onBeforeVerify(async (ctx) => {
      const attempt = attemptOf(ctx);
      const scheme = schemes.of(ctx.requirements);
      if (!attempt || !scheme) return;
      if (prefetch && scheme.prefetch) prefetch(attempt);
      if (!attempt.firstSeen || !scheme.localVerify) return;
      const result = await scheme.localVerify(ctx.paymentPayload, ctx.requirements);
      if (result?.isValid) return { skip: true, result };
    });
    const routes = paymentRoutes(this.opts.paidRoutes(), { accepts: offers.map((o) => o.accepts), publicBaseUrl: this.opts.publicBaseUrl, receipts: this.opts.receipts?.declaration });
    return new x402HTTPResourceServer(resourceServer, routes);
  }
}
