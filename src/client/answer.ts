// Reading marketgate's answers: the `{ data, meta }` envelope of a success, the `{ error, source? }` body of a
// failure, and the x402 headers (PAYMENT-REQUIRED on a 402, PAYMENT-RESPONSE on a paid answer).
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';

export interface ErrorBody {
  error: string;
  source?: string;
}

/** The `{ error, source? }` of a failure; undefined when the body is not marketgate's (a proxy's page, garbage). */
export function errorBody(body: string): ErrorBody | undefined {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed === null || typeof parsed !== 'object' || typeof (parsed as ErrorBody).error !== 'string') return undefined;
    const { error, source } = parsed as ErrorBody;
    return typeof source === 'string' ? { error, source } : { error };
  } catch {
    return undefined;
  }
}

/** The decoded PAYMENT-RESPONSE header, when there is a readable one. */
export function paymentResponse(headers: Headers): SettleResponse | undefined {
  const raw = headers.get('payment-response') ?? headers.get('x-payment-response');
  if (!raw) return undefined;
  try {
    return decodePaymentResponseHeader(raw);
  } catch {
    return undefined;
  }
}

/** The decoded PAYMENT-REQUIRED header of a 402, when there is a readable one. */
export function paymentRequired(headers: Headers): PaymentRequired | undefined {
  const raw = headers.get('payment-required');
  if (!raw) return undefined;
  try {
    return decodePaymentRequiredHeader(raw);
  } catch {
    return undefined;
  }
}

/** Seconds from a Retry-After header given as seconds. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;
}
