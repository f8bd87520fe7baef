// The x402 SDK's view of one paid request (its HTTPAdapter, as @x402/express's ExpressAdapter is over an
// Express request), carrying the request's PaymentAttempt: the SDK hands the adapter back to every hook it runs
// (in its transport context), which is how a hook finds the attempt it is about (attemptOf).
import type { HTTPAdapter } from '@x402/core/server';
import type { PaymentAttempt } from './attempt.ts';

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
    private readonly publicBaseUrl: string,
    private readonly hidePayment = false,
  ) {}
  getHeader(name: string) {
    const lower = name.toLowerCase();
    if (this.hidePayment && PAYMENT_HEADERS.has(lower)) return undefined;
    const v = this.attempt.request.headers[lower];
    return Array.isArray(v) ? v[0] : v;
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
    return (this.attempt.request.query ?? {}) as Record<string, string | string[]>;
  }
  getQueryParam(name: string) {
    return this.getQueryParams()[name];
  }
  getBody() {
    return this.attempt.request.body;
  }
}

/** The attempt behind an SDK hook's context (its transport context carries our adapter), if any. */
export function attemptOf(context: { transportContext?: unknown }): PaymentAttempt | undefined {
  const adapter = (context.transportContext as { request?: { adapter?: unknown } } | undefined)?.request?.adapter;
  return adapter instanceof RequestAdapter ? adapter.attempt : undefined;
}
