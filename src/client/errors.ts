// The one error every failed call throws, with what a caller needs to decide what to do next: the HTTP status
// (none when no answer came back), the server's `error` and `source`, and whether the call was charged —
// `true`, `false`, or `'unknown'` when a payment was sent and no answer said what became of it.

/**
 * - `http`: the server answered with an error status (its `error` and `source` are here);
 * - `network` / `timeout`: no answer within the call's retries and deadline;
 * - `payment-required`: a paid route, and the client has neither an API key nor a wallet;
 * - `spend-limit`: paying would pass `maxSpendUsd` (nothing was signed);
 * - `payment`: the 402's terms cannot be paid by this client (no scheme it knows), or signing failed;
 * - `not-allowed`: the 402 asks to be paid on a network or in an asset this client was not configured for
 *   (`networks`, `assets`): nothing was signed;
 * - `redirect`: the server sent the call to another origin, which is not followed (the API key and the
 *   payment go to the configured origin only); `error` says where;
 * - `receipt`: the answer's bytes do not match its Content-Digest, or (with `verifyReceipts`) its signed receipt
 *   is missing, does not verify against the server's key, or does not match the call (a paid call: charged);
 * - `config`: `createClient` was given an invalid option.
 */
export type MarketgateErrorKind = 'http' | 'network' | 'timeout' | 'payment-required' | 'spend-limit' | 'payment' | 'not-allowed' | 'redirect' | 'receipt' | 'config';

/** A payment the client signed and sent for a call. */
export interface SentPayment {
  scheme: string;
  network: string;
  /** Atomic units of `asset`. */
  amount: string;
  asset: string;
  /** The same amount in US dollars (the token taken as a USD stablecoin). */
  usd: string;
  /** The x402 payment-identifier sent with it, when the server declares the extension. */
  identifier: string | undefined;
  /** The PAYMENT-SIGNATURE header as sent: resending it exactly is how to recover a lost answer without paying twice. */
  signature: string;
}

export interface MarketgateErrorDetails {
  kind: MarketgateErrorKind;
  /** The route's path (`/v1/price`), or the option's name for `config`. */
  path: string;
  status?: number;
  error: string;
  source?: string;
  charged?: boolean | 'unknown';
  requestId?: string;
  attempts?: number;
  payment?: SentPayment;
  /** Seconds the server asked to wait before trying again. */
  retryAfterS?: number;
  cause?: unknown;
}

export class MarketgateError extends Error {
  override name = 'MarketgateError';
  readonly kind: MarketgateErrorKind;
  readonly path: string;
  /** The HTTP status, when an answer came back. */
  readonly status: number | undefined;
  /** The server's `error` message (or the client's, for the kinds the client decides). */
  readonly error: string;
  /** The server's `source`: the provider or service that failed, when it names one. */
  readonly source: string | undefined;
  readonly charged: boolean | 'unknown';
  readonly requestId: string | undefined;
  /** Requests sent for this call (1 when it was not retried; 0 when nothing was sent). */
  readonly attempts: number;
  readonly payment: SentPayment | undefined;
  readonly retryAfterS: number | undefined;

  constructor(d: MarketgateErrorDetails) {
    super(shortMessage(d), d.cause === undefined ? undefined : { cause: d.cause });
    this.kind = d.kind;
    this.path = d.path;
    this.status = d.status;
    this.error = d.error;
    this.source = d.source;
    this.charged = d.charged ?? false;
    this.requestId = d.requestId;
    this.attempts = d.attempts ?? 0;
    this.payment = d.payment;
    this.retryAfterS = d.retryAfterS;
  }
}

/** `/v1/price: 502 binance did not answer (source: binance); not charged` */
function shortMessage(d: MarketgateErrorDetails): string {
  const what = d.status === undefined ? d.error : `${d.status} ${d.error}`;
  const source = d.source ? ` (source: ${d.source})` : '';
  if (d.kind === 'config') return `${d.path}: ${d.error}`;
  return `${d.path}: ${what}${source}; ${chargedWords(d.charged ?? false)}`;
}

export function chargedWords(charged: boolean | 'unknown'): string {
  return charged === true ? 'charged' : charged === 'unknown' ? 'charge unknown' : 'not charged';
}
