// The request adapter: what the payments core and the x402 SDK see of a Fastify request. With fastify.ts, the
// only file of payments that reads a request. It makes the request's PaymentAttempt (beginAttempt: the payment
// header decoded, its scheme's authorization read, the request line a payment identifier is bound to), and the
// SDK's HTTPAdapter over it (as @x402/express's ExpressAdapter is over an Express request), which the SDK hands
// back to every hook it runs (in its transport context): that is how a hook finds its attempt (attemptOf).
import type { HTTPAdapter } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyRequest } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import { newAttempt, type PaidRequest, type PaymentAttempt } from './core/attempt.ts';
import { decodePaymentHeader } from './core/header-codec.ts';
import type { PaymentSchemes } from './core/scheme.ts';

const PAYMENT_HEADERS = new Set(['payment-signature', 'x-payment']);

/**
 * The SDK's view of a request. Path and URL are the *matched route's* (its catalog URL under the
 * public base URL), never the raw request line: an absolute-form URI, a HEAD, or any other spelling
 * of the path that Fastify routes to a paid handler must meet that route's payment requirements.
 */
export class RequestAdapter implements HTTPAdapter {
  /** `hidePayment`: the SDK must see no payment (a header that cannot be decoded, a HEAD). */
  constructor(
    readonly attempt: PaymentAttempt,
    private readonly req: FastifyRequest,
    private readonly publicBaseUrl: string,
    private readonly hidePayment = false,
  ) {}
  getHeader(name: string) {
    const lower = name.toLowerCase();
    if (this.hidePayment && PAYMENT_HEADERS.has(lower)) return undefined;
    return header(this.req, lower);
  }
  getMethod() {
    return 'GET';
  }
  getPath() {
    return this.attempt.entry.url;
  }
  getUrl() {
    return `${this.publicBaseUrl}${this.attempt.entry.url}`;
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

/** The attempt of a request: made before anything is looked at, so whatever ends the request can give it up. */
export function beginAttempt(req: FastifyRequest, entry: CatalogEntry, publicBaseUrl: string, schemes: PaymentSchemes): PaymentAttempt {
  // x402 v2's PAYMENT-SIGNATURE (v1's X-PAYMENT is refused, never read).
  const given = header(req, 'payment-signature');
  const payload = given === undefined ? undefined : decodedPayment(given);
  const request: PaidRequest = {
    id: req.id,
    method: req.method,
    get line() {
      return requestLine(req, entry);
    },
    paymentHeader: given,
    v1Header: req.headers['x-payment'] !== undefined,
    adapter: (hidePayment) => new RequestAdapter(attempt, req, publicBaseUrl, hidePayment),
  };
  const attempt = newAttempt(request, entry, payload, payload && schemes.authorizationOf(payload));
  return attempt;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The payment payload of a header, or undefined when it cannot be decoded. */
function decodedPayment(header: string): PaymentPayload | undefined {
  try {
    return decodePaymentHeader(header);
  } catch {
    return undefined;
  }
}

/** What a payment identifier is bound to: method, matched route, sorted query (pairs ordered by name, then value). */
function requestLine(req: FastifyRequest, entry: CatalogEntry): string {
  const q = req.url.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? req.url.slice(q + 1) : '');
  // Most queries arrive sorted (a single parameter, a client that sorts): written as they are, without a sorted copy.
  const query = (inOrder(params) ? params : new URLSearchParams([...params].sort(byPair))).toString();
  return `${req.method} ${entry.url}${query ? `?${query}` : ''}`;
}

function byPair([a, x]: [string, string], [b, y]: [string, string]): number {
  return a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1;
}

function inOrder(params: URLSearchParams): boolean {
  let previous: [string, string] | undefined;
  for (const pair of params) {
    if (previous && byPair(previous, pair) > 0) return false;
    previous = pair;
  }
  return true;
}
