// The SDK's view of one request (the x402 HTTPAdapter), and what the gate learns about its payment as
// it goes (the PaymentAttempt the SDK's hooks read and write through the adapter they are handed).
import { createHash } from 'node:crypto';
import type { HTTPAdapter } from '@x402/core/server';
import type { FastifyRequest } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import type { Eip3009Authorization } from './authorization.ts';

const PAYMENT_HEADERS = new Set(['payment-signature', 'x-payment']);

/** One paid request's payment, as far as it has got. */
export interface PaymentAttempt {
  req: FastifyRequest;
  entry: CatalogEntry;
  /** SHA-256 (hex) of the payment payload, canonical JSON: what ties an identifier to one payload. */
  payloadHash: string | undefined;
  /** The x402 payment-identifier the client sent, once this request holds its claim, and the claim's holder token. */
  paymentId: string | undefined;
  claimOwner?: string;
  /** The `exact` payment's EIP-3009 authorization, when it carries one. */
  authorization?: Eip3009Authorization;
  /** Why the facilitator refused to verify the payment (its invalidReason). */
  verifyRefusal?: string;
  /**
   * How far the settlement got: `sent` (asked, no outcome yet), `settled`, `refused` (the facilitator refused:
   * nothing moved), `not_landed` (the chain shows it never can), `unknown` (money may have moved).
   */
  settle?: 'sent' | 'settled' | 'refused' | 'not_landed' | 'unknown';
  /** A retry of a payment whose transfer already landed (its ledger row and transaction): answered without settling again. */
  resume?: { ledgerId: string; txHash: string | null; payer: string };
  /** The ledger row written when the facilitator verified the payment. */
  ledgerId: string | undefined;
  /** Set when the verified payment could not be recorded: the call is refused before anything is settled. */
  ledgerFailure: unknown;
  /** The answer was stored under the payment identifier (a retry gets it again). */
  answerStored: boolean;
}

/**
 * The SDK's view of a request. Path and URL are the *matched route's* (its catalog URL under the
 * public base URL), never the raw request line: an absolute-form URI, a HEAD, or any other spelling
 * of the path that Fastify routes to a paid handler must meet that route's payment requirements.
 */
export class FastifyAdapter implements HTTPAdapter {
  /** `hidePayment`: the SDK must see no payment (a header that cannot be decoded, a HEAD). */
  constructor(
    readonly attempt: PaymentAttempt,
    private readonly publicBaseUrl: string,
    private readonly hidePayment = false,
  ) {}
  getHeader(name: string) {
    const lower = name.toLowerCase();
    if (this.hidePayment && PAYMENT_HEADERS.has(lower)) return undefined;
    const v = this.attempt.req.headers[lower];
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
    return (this.attempt.req.query ?? {}) as Record<string, string | string[]>;
  }
  getQueryParam(name: string) {
    return this.getQueryParams()[name];
  }
  getBody() {
    return this.attempt.req.body;
  }
}

/** Whether this attempt may have taken the payer's money (then its payment identifier is never given to another payment). */
export function moneyMayHaveMoved(attempt: PaymentAttempt): boolean {
  if (attempt.resume) return true;
  return attempt.settle !== undefined && attempt.settle !== 'refused' && attempt.settle !== 'not_landed';
}

/** The attempt behind an SDK hook's context (its transport context carries our adapter), if any. */
export function attemptOf(context: { transportContext?: unknown }): PaymentAttempt | undefined {
  const adapter = (context.transportContext as { request?: { adapter?: unknown } } | undefined)?.request?.adapter;
  return adapter instanceof FastifyAdapter ? adapter.attempt : undefined;
}

/** SHA-256 of a value's canonical JSON (keys sorted at every level), hex. */
export function payloadHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
