// A 401's WWW-Authenticate (RFC 9110 §11.6.1: every 401 carries at least one challenge): how to
// authenticate here. There is no registered scheme for an API key in a header, so the challenge names
// its own (ApiKey) and the header to send; where a payment is the other way in (a paid route with x402
// on), a second challenge names x402's header.
import { AppError } from '../lib/errors.ts';

export const KEY_CHALLENGE = 'ApiKey realm="marketgate", header="x-api-key"';
export const PAYMENT_CHALLENGE = 'x402 realm="marketgate", header="PAYMENT-SIGNATURE"';

/** A 401 with its challenge: the key, and the payment too when one would be taken for this route. */
export function unauthorized(message: string, payable: boolean): AppError {
  return new AppError(401, message, undefined, { headers: { 'www-authenticate': payable ? `${KEY_CHALLENGE}, ${PAYMENT_CHALLENGE}` : KEY_CHALLENGE } });
}
