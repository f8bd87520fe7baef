// The EIP-3009 authorization inside an `exact` EVM payment (transferWithAuthorization: from, to, value, a
// validity window and a random nonce, signed by the payer). It is what a payment's outcome hangs on: the token
// records each (authorizer, nonce) it has used, so whether the transfer landed can always be asked of the
// chain, and after `validBefore` an unused authorization can never land.
import type { PaymentPayload } from '@x402/core/types';

export interface Eip3009Authorization {
  from: `0x${string}`;
  to: `0x${string}`;
  value: string;
  /** Unix seconds; the transfer must be mined in a block whose timestamp is before it. */
  validBefore: number;
  /** bytes32, lowercase hex. */
  nonce: `0x${string}`;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^\d{1,78}$/;

/** The authorization of an `exact` payload, when it carries a well-formed one (a Permit2 payload does not). */
export function eip3009Of(payload: Pick<PaymentPayload, 'payload'> | { payload?: unknown }): Eip3009Authorization | undefined {
  const auth = (payload.payload as { authorization?: Record<string, unknown> } | null | undefined)?.authorization;
  if (!auth || typeof auth !== 'object') return undefined;
  const { from, to, value, validBefore, nonce } = auth;
  if (typeof from !== 'string' || !ADDRESS.test(from) || typeof to !== 'string' || !ADDRESS.test(to)) return undefined;
  if (typeof nonce !== 'string' || !BYTES32.test(nonce)) return undefined;
  const before = String(validBefore);
  if (!UINT.test(String(value)) || !UINT.test(before) || before.length > 15) return undefined;
  return { from: from as `0x${string}`, to: to as `0x${string}`, value: String(value), validBefore: Number(before), nonce: nonce.toLowerCase() as `0x${string}` };
}
