// Each paid route's x402 terms, as its 402 states them, published ahead of the call (the OpenAPI document's
// `x-payment-info`: reference/payment-terms.ts), so that a client that read them pays its first call to a route
// with one request instead of a 402 and a second request.
//
// One source of truth: the terms are not built here but asked of the payment table that serves, exactly as a
// request without a payment asks it (the SDK's processHTTPRequest over a request with no headers), and read back
// from the PAYMENT-REQUIRED it answers: the same `accepts` entries, in the same order, with every scheme the table
// offers at that moment (exact on Base, batch settlement and exact on Solana once the facilitator's /supported
// lists them). They are made again each time a payment table becomes ready (PaymentServer.onTable), so they follow
// the offers. What is published of the 402's extensions is what a payment made from the terms carries
// (`payment-identifier`, so a client puts an id in its payment); not `bazaar` (the route's input and output schemas
// for discovery catalogs: the OpenAPI operation is that description already) nor `offer-receipt` (offers signed
// for one 402, valid for maxTimeoutSeconds: stale in a document kept for hours; its key is x-x402.receipts).
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { HTTPAdapter, x402HTTPResourceServer } from '@x402/core/server';
import type { PaymentRequired } from '@x402/core/types';
import type { CatalogEntry } from '../../catalog/route.ts';
import type { PaymentLog } from './log.ts';
import type { PaymentServer } from './resource-server.ts';

/** One route's terms as published: x402's own words (`protocols[].x402` of its x-payment-info). */
export interface RouteTerms {
  x402Version: number;
  accepts: PaymentRequired['accepts'];
  extensions?: Record<string, unknown>;
}

/** The 402's extensions that are not published beside its terms (see the top of this file). */
const UNPUBLISHED_EXTENSIONS = new Set(['bazaar', 'offer-receipt']);

/** A request to `entry` with nothing on it (no payment, no headers, no query): what a first call looks like. */
function bareRequest(entry: CatalogEntry, publicBaseUrl: string): HTTPAdapter {
  return {
    getHeader: () => undefined,
    getMethod: () => 'GET',
    getPath: () => entry.url,
    getUrl: () => `${publicBaseUrl}${entry.url}`,
    getAcceptHeader: () => 'application/json',
    getUserAgent: () => '',
    getQueryParams: () => ({}),
    getQueryParam: () => undefined,
  };
}

/** The terms of `entry` as `http`'s 402 states them now; undefined when it answers anything but a 402. */
export async function termsOf(http: x402HTTPResourceServer, entry: CatalogEntry, publicBaseUrl: string): Promise<RouteTerms | undefined> {
  const adapter = bareRequest(entry, publicBaseUrl);
  const result = await http.processHTTPRequest({ adapter, path: entry.url, decodedPath: entry.url, method: 'GET' });
  if (result.type !== 'payment-error' || result.response.status !== 402) return undefined;
  const headers = result.response.headers as Record<string, string>;
  const encoded = headers['PAYMENT-REQUIRED'] ?? headers['payment-required'];
  if (!encoded) return undefined;
  const required = decodePaymentRequiredHeader(encoded);
  const extensions = Object.fromEntries(Object.entries(required.extensions ?? {}).filter(([name]) => !UNPUBLISHED_EXTENSIONS.has(name)));
  return { x402Version: required.x402Version, accepts: required.accepts, ...(Object.keys(extensions).length ? { extensions } : {}) };
}

/**
 * The terms of every paid route, kept current: made from each payment table once it is ready, and handed to
 * whoever publishes them (onChange). Until a table is ready (the facilitator not asked yet, or unreachable),
 * there are none: a client then learns a route's terms from its first 402, as without them.
 */
export class PublishedTerms {
  private terms: ReadonlyMap<string, RouteTerms> | undefined;
  private readonly listeners: ((terms: ReadonlyMap<string, RouteTerms>) => void)[] = [];
  private asking: Promise<boolean> | undefined;

  constructor(
    private readonly server: PaymentServer,
    private readonly paidRoutes: () => readonly CatalogEntry[],
    private readonly publicBaseUrl: string,
    private readonly log: PaymentLog,
  ) {
    server.onTable((http) => void this.make(http));
  }

  /** Every paid route's terms, by route URL; undefined until a payment table is ready. */
  current(): ReadonlyMap<string, RouteTerms> | undefined {
    return this.terms;
  }

  /** Calls `listener` with the terms each time they are made (a payment table became ready). */
  onChange(listener: (terms: ReadonlyMap<string, RouteTerms>) => void): void {
    this.listeners.push(listener);
  }

  /**
   * While there are none, asks for the payment table (its facilitator's /supported) in the background, once at a
   * time: a document served meanwhile gets them for its next reader. Cheap when they are known. Resolves with
   * whether the table is ready (the terms are then made, or being made: onChange).
   */
  want(): Promise<boolean> {
    if (this.terms) return Promise.resolve(true);
    return (this.asking ??= this.server.ready().then(
      () => ((this.asking = undefined), true),
      () => ((this.asking = undefined), false),
    ));
  }

  private async make(http: x402HTTPResourceServer): Promise<void> {
    try {
      const made = new Map<string, RouteTerms>();
      for (const entry of this.paidRoutes()) {
        const terms = await termsOf(http, entry, this.publicBaseUrl);
        if (terms) made.set(entry.url, terms);
      }
      this.terms = made;
      for (const listener of this.listeners) listener(made);
    } catch (err) {
      // Not published: each route's first 402 states them, as without this.
      this.log.warn({ err: String((err as Error)?.message ?? err) }, 'x402: the payment terms could not be read from the payment table; /openapi.json goes without them');
    }
  }
}
