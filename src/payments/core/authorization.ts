// The one-time authorization a payment carries, whatever its scheme (an EIP-3009 authorization on an EVM
// network, a signed transaction on Solana): who pays, what makes it unique, and until when it can land. It is
// what a payment's outcome hangs on: one request at a time per authorization (authorization-claim.ts), a
// settle waited for until `validBefore` (facilitator.ts), an unknown outcome read from its chain (outcome.ts).
// A scheme says how a payload carries one (PaymentScheme.authorizationOf).

export interface PaymentAuthorization {
  /** CAIP-2 network the authorization moves money on. */
  network: string;
  /** Who pays, as its network spells an address (EIP-55 hex, base58). */
  payer: string;
  /** What makes it unique for that payer: the EIP-3009 nonce, a transaction's signature. */
  nonce: string;
  /** Unix seconds: after it, unused, it can never land. */
  validBefore: number;
}

/** Seconds of clock difference allowed between a payer's clock and this server's. */
export const CLOCK_SKEW_S = 30;

/**
 * An authorization valid for longer than the server offers (its 402 says `maxTimeoutSeconds`) is refused before
 * verification: the server waits for a settlement's outcome until `validBefore`, so that wait is bounded by
 * X402_MAX_TIMEOUT_S (plus the clock skew allowed). Returns the reason of the refusal, or undefined.
 */
export function checkValidityWindow(auth: Pick<PaymentAuthorization, 'validBefore'>, maxTimeoutS: number, nowMs = Date.now()): string | undefined {
  const latest = Math.floor(nowMs / 1000) + maxTimeoutS + CLOCK_SKEW_S;
  if (auth.validBefore <= latest) return undefined;
  return `authorization_valid_too_long: the authorization's validBefore (${auth.validBefore}, unix seconds) is more than maxTimeoutSeconds (${maxTimeoutS} s) from now; sign it with validBefore at most ${maxTimeoutS} s ahead`;
}
