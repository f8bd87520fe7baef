// The facilitator the server verifies and settles payments with: any x402 facilitator by URL,
// or Coinbase CDP's (authenticated with CDP_API_KEY_ID / CDP_API_KEY_SECRET).
// The client is wrapped so that a facilitator that cannot be reached surfaces as
// FacilitatorUnavailableError (our 503) — the SDK would otherwise report it as a rejected payment.
import { FacilitatorResponseError, HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import { SettleError, VerifyError } from '@x402/core/types';
import type { Config } from '../../config.ts';

export class FacilitatorUnavailableError extends FacilitatorResponseError {
  override name = 'FacilitatorUnavailableError';
  constructor(operation: string, cause: unknown) {
    super(`facilitator ${operation} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.cause = cause;
  }
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

export async function createFacilitatorClient(x402: Config['x402']): Promise<FacilitatorClient> {
  // @coinbase/x402 pulls in the CDP SDK: load it only when that facilitator is chosen.
  const base =
    x402.facilitator === 'coinbase-cdp'
      ? (await import('@coinbase/x402')).createFacilitatorConfig(x402.cdp.keyId, x402.cdp.keySecret)
      : { url: x402.facilitator };
  return guardFacilitator(new HTTPFacilitatorClient({ ...base, timeoutMs: x402.facilitatorTimeoutMs } as ConstructorParameters<typeof HTTPFacilitatorClient>[0]));
}
