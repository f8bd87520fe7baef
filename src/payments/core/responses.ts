// What the gate answers besides the data: the 402 body that states the price in words (beside the
// machine-readable PAYMENT-REQUIRED header), and the error a facilitator failure becomes.
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { FacilitatorTimeoutError, getFacilitatorResponseError } from '@x402/core/server';
import type { PaymentLog } from './log.ts';
import type { PaymentSettings } from '../settings.ts';
import { AppError } from '../../lib/errors.ts';
import { FacilitatorUnavailableError } from './facilitator.ts';
import { atomicAmount } from './price.ts';

/** What a 402 body tells people and agents, besides the PAYMENT-REQUIRED header. */
export interface PaymentTerms {
  price: string;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
}

export function paymentTerms(x402: PaymentSettings): PaymentTerms {
  return {
    price: x402.price,
    network: x402.network,
    asset: x402.asset!.address,
    payTo: x402.payTo!,
    amount: atomicAmount(x402.price, x402.asset!.decimals),
  };
}

/** The reason given for a payment header that cannot even be decoded. */
export const MALFORMED_PAYMENT = 'malformed payment header: PAYMENT-SIGNATURE must be a base64-encoded x402 payment payload';

/**
 * The reason given for a payment sent in x402 v1's X-PAYMENT header, whatever it holds (never verified, never
 * replayed): the server speaks x402 v2, whose payment header is PAYMENT-SIGNATURE.
 */
export const V1_PAYMENT_HEADER =
  'x402_v1_not_supported: payments in X-PAYMENT (x402 v1) are not accepted; this server speaks x402 v2: sign the payment from this 402 (PAYMENT-REQUIRED, CAIP-2 network) and send it in PAYMENT-SIGNATURE. Clients that do: @x402/fetch and @x402/axios 2.x, the x402 Python SDK 2.x; x402-fetch 1.x and x402-axios 0.x do not';

/** The reason given for a payment sent with HEAD, which has no body to deliver for it. */
export const HEAD_PAYMENT = 'payments are taken on GET only: a HEAD answer has no body to deliver for the payment';

/** 402 body: the price in words, the reason when a payment was rejected, and what is accepted. */
export function paymentRequiredBody(headers: Record<string, string>, terms: PaymentTerms, reason?: string) {
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
    networks: [...new Set((required?.accepts ?? []).map((a) => a.network))],
    accepts: required?.accepts ?? [],
  };
}

/** Seconds a client is told to wait when the facilitator is down. */
const FACILITATOR_RETRY_AFTER_S = 10;

/** The error a facilitator failure is answered with: 503 when it is down (with Retry-After), 502 when it answered nonsense. */
export function facilitatorFailure(err: unknown, log: PaymentLog): AppError {
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

/** The reason of the 402 for a payment whose settlement never landed and can no longer land. */
export const NOT_CHARGED = 'the payment was not settled before its authorization expired (validBefore), and can no longer be: nothing was charged; sign a new payment';

/**
 * A payment that may have been taken, whose outcome neither the facilitator nor the chain told in time: a 503
 * (interface B's contract has no 504) with Retry-After, whose body never says "pay again" but "send this same
 * payment again": its retry is answered from the ledger and the chain, never charged twice.
 */
export function outcomeUnconfirmed(): AppError {
  return new AppError(
    503,
    "the payment's outcome cannot be told yet (neither the facilitator nor the chain answered in time): resend this same PAYMENT-SIGNATURE (with the same payment identifier, if it has one) after Retry-After to get this call's answer; it will not be charged twice; do not sign a new payment",
    'facilitator',
    { retryAfterS: FACILITATOR_RETRY_AFTER_S },
  );
}
