// An `exact` payment checked by this server instead of the facilitator's /verify (X402_EXACT_VERIFY=local): the
// facilitator's /settle verifies the payment again itself before it sends the transfer (signature, recipient,
// amount, validity window; the token refuses a used nonce or a short balance), so /verify only told earlier what
// /settle will tell anyway, at the price of one round trip (150 ms or more) on every paid call. What is checked
// here is what /verify checks of an EIP-3009 authorization signed by an externally owned account:
//
//   the payload carries an EIP-3009 authorization (a Permit2 payload does not) with a 65-byte ECDSA signature
//   to = the route's payTo, value = its amount, validAfter ≤ now, validBefore ≥ now + 6 s (the facilitator's margin)
//   the EIP-712 TransferWithAuthorization signature, over the token's domain (name and version from the
//   requirements' extra, the network's chain id, the asset as verifying contract), recovers to `from`
//
// Anything else is undefined, for the facilitator to decide as before: a smart-contract wallet (ERC-1271, its
// signature recovers to no owner) or an undeployed one (ERC-6492, a longer signature), Permit2, a mismatch. A local
// mismatch is never a refusal. What /verify checks and this does not, the payer's balance (its simulation), /settle
// checks: such a payment is refused there (402, nothing charged, the handler's answer never sent).
import type { PaymentRequirements, VerifyResponse } from '@x402/core/types';
import type { LocalPayment } from '../../core/scheme.ts';
import { recoverSigner } from '../../../lib/ecdsa-recover.ts';
import { loadViem } from '../../../sources/viem.ts';

/** The facilitator refuses an authorization that expires within this many seconds (@x402/evm's verify). */
const VALID_BEFORE_MARGIN_S = 6;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
/** A plain ECDSA signature (r, s, v): what an externally owned account signs. */
const ECDSA_SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const UINT = /^\d{1,78}$/;
const CHAIN = /^eip155:(\d{1,15})$/;

const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

interface Authorization {
  from: `0x${string}`;
  to: `0x${string}`;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: `0x${string}`;
}

/** The authorization and signature of an exact EIP-3009 payload, when it is well-formed and EOA-signed. */
function eoaAuthorization(payload: unknown): { authorization: Authorization; signature: `0x${string}` } | undefined {
  const p = payload as { authorization?: Record<string, unknown>; signature?: unknown } | null | undefined;
  const a = p?.authorization;
  if (!a || typeof a !== 'object' || typeof p.signature !== 'string' || !ECDSA_SIGNATURE.test(p.signature)) return undefined;
  const { from, to, value, validAfter, validBefore, nonce } = a;
  if (typeof from !== 'string' || !ADDRESS.test(from) || typeof to !== 'string' || !ADDRESS.test(to)) return undefined;
  if (typeof nonce !== 'string' || !BYTES32.test(nonce)) return undefined;
  for (const n of [value, validAfter, validBefore]) if ((typeof n !== 'string' && typeof n !== 'number') || !UINT.test(String(n))) return undefined;
  return {
    authorization: { from: from as `0x${string}`, to: to as `0x${string}`, value: String(value), validAfter: String(validAfter), validBefore: String(validBefore), nonce: nonce as `0x${string}` },
    signature: p.signature as `0x${string}`,
  };
}

/**
 * `{ isValid: true, payer }` when the payment is an EOA-signed EIP-3009 authorization that pays `requirements`
 * exactly and is valid now; undefined otherwise (the facilitator's /verify decides). Never throws.
 */
export async function verifyExactLocally(payment: LocalPayment, requirements: Readonly<PaymentRequirements>, nowMs = Date.now()): Promise<VerifyResponse | undefined> {
  try {
    if (requirements.scheme !== 'exact' || payment.accepted?.scheme !== 'exact' || payment.accepted.network !== requirements.network) return undefined;
    const chain = CHAIN.exec(requirements.network);
    const extra = requirements.extra as { name?: unknown; version?: unknown } | undefined;
    if (!chain || typeof extra?.name !== 'string' || !extra.name || typeof extra.version !== 'string' || !extra.version) return undefined;
    if (!ADDRESS.test(requirements.asset) || !ADDRESS.test(requirements.payTo) || !UINT.test(requirements.amount)) return undefined;
    const found = eoaAuthorization(payment.payload);
    if (!found) return undefined;
    const { authorization: a, signature } = found;
    if (a.to.toLowerCase() !== requirements.payTo.toLowerCase() || BigInt(a.value) !== BigInt(requirements.amount)) return undefined;
    const now = BigInt(Math.floor(nowMs / 1000));
    if (BigInt(a.validAfter) > now || BigInt(a.validBefore) < now + BigInt(VALID_BEFORE_MARGIN_S)) return undefined;
    const viem = await loadViem();
    // The digest in viem, the recovery in WebAssembly (lib/ecdsa-recover.ts: strict ECDSA, a fraction of viem's cost).
    const digest = viem.hashTypedData({
      domain: { name: extra.name, version: extra.version, chainId: Number(chain[1]), verifyingContract: requirements.asset as `0x${string}` },
      types: TRANSFER_WITH_AUTHORIZATION,
      primaryType: 'TransferWithAuthorization',
      message: { from: a.from, to: a.to, value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce },
    });
    if ((await recoverSigner(digest, signature)) !== a.from.toLowerCase()) return undefined;
    return { isValid: true, payer: viem.getAddress(a.from) };
  } catch {
    return undefined;
  }
}
