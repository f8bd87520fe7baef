// The x402 SDK's resource server for the paid routes, built with marketgate's hooks: the `exact` scheme (and
// batch-settlement's, when offered), Bazaar's request method on every 402, the payment records written from the
// SDK's own hooks (record-attempts.ts), and the prefetch of the route's work as a payment goes to verify. It is
// built once routes exist (prepare: the payment table's Bazaar declarations are checked at start-up) and made
// ready on first use (ready: the facilitator's supported kinds, asked again after a failure).
import { x402HTTPResourceServer, x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { CatalogEntry } from '../catalog/route.ts';
import type { PaymentAttempt } from './attempt.ts';
import { bazaarResourceServerExtension } from './bazaar.ts';
import type { BatchOffer } from './batch/batch-settlement.ts';
import type { OfferReceipts } from './offer-receipt.ts';
import { recordPaymentAttempts, type AttemptRecordOptions } from './record-attempts.ts';
import { attemptOf, RequestAdapter } from './request-adapter.ts';
import type { PaymentTerms } from './responses.ts';
import { paymentRoutes } from './route-table.ts';
import type { PaymentSettings } from './settings.ts';

export interface ResourceServerOptions {
  x402: PaymentSettings;
  terms: PaymentTerms;
  facilitator: FacilitatorClient;
  /** The paid routes; read when the server is first built (after all routes are mounted). */
  paidRoutes: () => CatalogEntry[];
  publicBaseUrl: string;
  /** What the payment records are written with (the SDK's verify and settle hooks). */
  records: Omit<AttemptRecordOptions, 'isRefund' | 'publicBaseUrl'>;
  /** batch-settlement beside exact (X402_BATCH_SETTLEMENT), when the facilitator offers it. */
  batch?: { offer(): Promise<BatchOffer | undefined> };
  /** Starts the route's work of an `exact` payment about to be verified (X402_PREFETCH); undefined: none. */
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

  constructor(private readonly opts: ResourceServerOptions) {}

  /** Builds the payment table once routes exist; throws when a route's Bazaar declaration is invalid. */
  prepare(): void {
    const built = this.build(undefined);
    // With batch settlement, the table that serves waits for the facilitator's offer (ready()).
    if (!this.opts.batch) this.server ??= built;
  }

  /** The server, its facilitator's supported kinds fetched; a failure is thrown, and asked again next time. */
  async ready(): Promise<x402HTTPResourceServer> {
    if (!this.server) {
      const batch = await this.opts.batch?.offer(); // throws while the facilitator cannot be reached: asked again next time
      this.server ??= this.build(batch);
    }
    this.init ??= this.server.initialize();
    try {
      await this.init;
    } catch (err) {
      this.init = undefined;
      throw err;
    }
    return this.server;
  }

  /**
   * The headers of `attempt`'s route's challenge (PAYMENT-REQUIRED, with its offers), as a request without a payment
   * gets them: for a 402 that refuses a payment and asks for a new one. Empty when the server cannot make one (its
   * facilitator unreachable): the 402 then states the price in its body alone.
   */
  async challengeHeaders(attempt: PaymentAttempt): Promise<Record<string, string>> {
    try {
      const http = await this.ready();
      const adapter = new RequestAdapter(attempt, this.opts.publicBaseUrl, true);
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

  private build(batch: BatchOffer | undefined): x402HTTPResourceServer {
    const { x402, prefetch } = this.opts;
    const resourceServer = new x402ResourceServer(this.opts.facilitator)
      .register(x402.network, new ExactEvmScheme())
      // Adds the request's method to each 402's Bazaar declaration, which fails validation without it (as @x402/express does).
      .registerExtension(bazaarResourceServerExtension);
    batch?.install(resourceServer);
    const receipts = this.opts.receipts?.forServer(batch?.isRefund);
    if (receipts) resourceServer.registerExtension(receipts.extension);
    recordPaymentAttempts(resourceServer, { ...this.opts.records, isRefund: batch?.isRefund, publicBaseUrl: this.opts.publicBaseUrl, receipts });
    // The SDK calls this right before it asks the facilitator to verify, once the payment decoded, matched the
    // route's requirements and passed its extensions' checks: only a payment that goes to verify starts the work.
    // Only `exact`: its verify is a facilitator round trip. A batch-settlement voucher is checked by this
    // server in milliseconds (nothing to overlap), and some of its payloads never reach the handler (a
    // refund) or are refused by the scheme's own hook after this one (a busy channel): prefetching them
    // would only spend upstream calls.
    if (prefetch) {
      resourceServer.onBeforeVerify(async (ctx) => {
        const attempt = attemptOf(ctx);
        if (attempt && ctx.requirements.scheme === 'exact') prefetch(attempt);
      });
    }
    const routes = paymentRoutes(this.opts.paidRoutes(), { x402, terms: this.opts.terms, publicBaseUrl: this.opts.publicBaseUrl, batch: batch?.accepts, receipts: this.opts.receipts?.declaration });
    return new x402HTTPResourceServer(resourceServer, routes);
  }
}
