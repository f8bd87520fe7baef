// The facilitator the server verifies and settles payments with: any x402 facilitator by URL,
// or Coinbase CDP's (authenticated with CDP_API_KEY_ID / CDP_API_KEY_SECRET).
// The client is wrapped so that a facilitator that cannot be reached surfaces as
// FacilitatorUnavailableError (our 503) — the SDK would otherwise report it as a rejected payment.
//
// Verify and settle are bounded apart. A verify that takes too long moved no money: X402_FACILITATOR_TIMEOUT_MS,
// then 503. A settle that has been sent may move money whenever it lands, so it is listened to for
// X402_SETTLE_TIMEOUT_MS, and never past the authorization's validBefore (after which the chain alone can say
// what happened: see the ledger hooks' onSettleFailure).
import { FacilitatorResponseError, FacilitatorTimeoutError, HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import { SettleError, VerifyError, type PaymentPayload, type PaymentRequirements } from '@x402/core/types';
import type { PaymentSettings } from '../settings.ts';

export class FacilitatorUnavailableError extends FacilitatorResponseError {
  override name = 'FacilitatorUnavailableError';
  /** The request never left: no connection could be made (refused, no such host), so nothing was sent. */
  readonly notSent: boolean;
  constructor(operation: string, cause: unknown) {
    super(`facilitator ${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.cause = cause;
    this.notSent = connectFailed(cause);
  }
}

/** Errors of a connection that was never made (before any byte of the request was written). */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Whether `err` (or its cause, as fetch wraps it: TypeError "fetch failed" → { code }) is a connection never made. */
function connectFailed(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NOT_CONNECTED.has(code)) return true;
  const errors = (err as { errors?: unknown }).errors; // an AggregateError of each address tried
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => connectFailed(e, depth + 1))) return true;
  return connectFailed((err as { cause?: unknown }).cause, depth + 1);
}

/** Transport failures → FacilitatorUnavailableError; the facilitator's own answers pass through. */
export function guardFacilitator(inner: FacilitatorClient): FacilitatorClient {
  const guard = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof FacilitatorResponseError || err instanceof VerifyError || err instanceof SettleError) throw err;
      throw new FacilitatorUnavailableError(operation, err);
    }
  };
  return {
    verify: (payload, requirements) => guard('verify', () => inner.verify(payload, requirements)),
    settle: (payload, requirements) => guard('settle', () => inner.settle(payload, requirements)),
    getSupported: () => guard('supported', () => inner.getSupported()),
  };
}

/** A settle is listened to this long past its authorization's validBefore (the facilitator may answer a transfer mined just before). */
export const SETTLE_ANSWER_GRACE_MS = 5000;

/** A payment's authorization deadline (unix seconds), as its scheme reads it; undefined: it has none. */
export type ValidBeforeOf = (payload: PaymentPayload, requirements: PaymentRequirements) => number | undefined;

/** `settle` of `inner`, given up (FacilitatorTimeoutError) at `settleTimeoutMs` or its authorization's validBefore, whichever comes first. */
export function boundSettle(inner: FacilitatorClient['settle'], settleTimeoutMs: number, validBeforeOf: ValidBeforeOf, clock = Date.now): FacilitatorClient['settle'] {
  return async (payload, requirements) => {
    const validBefore = validBeforeOf(payload, requirements);
    const ms = validBefore !== undefined ? Math.max(0, Math.min(settleTimeoutMs, validBefore * 1000 + SETTLE_ANSWER_GRACE_MS - clock())) : settleTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new FacilitatorTimeoutError('settle', ms)), ms)));
    try {
      return await Promise.race([inner(payload, requirements), deadline]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The facilitator of X402_FACILITATOR; a settle bounded by the authorization deadline `validBeforeOf` reads. */
export async function createFacilitatorClient(x402: PaymentSettings, validBeforeOf: ValidBeforeOf): Promise<FacilitatorClient> {
  // @coinbase/x402 pulls in the CDP SDK: load it only when that facilitator is chosen.
  const base =
    x402.facilitator === 'coinbase-cdp'
      ? (await import('@coinbase/x402')).createFacilitatorConfig(x402.cdp.keyId, x402.cdp.keySecret)
      : { url: x402.facilitator };
  const client = (timeoutMs: number) => new HTTPFacilitatorClient({ ...base, timeoutMs } as ConstructorParameters<typeof HTTPFacilitatorClient>[0]);
  const verifying = client(x402.facilitatorTimeoutMs);
  const settling = client(x402.settleTimeoutMs);
  return guardFacilitator({
    verify: (payload, requirements) => verifying.verify(payload, requirements),
    settle: boundSettle((payload, requirements) => settling.settle(payload, requirements), x402.settleTimeoutMs, validBeforeOf),
    getSupported: () => verifying.getSupported(),
  });
}
