// The one rule for an EVM address written by a caller (a query parameter, an env variable): `0x` or
// `0X` and 40 hex digits. All lower-case or all upper-case digits carry no checksum and are accepted;
// mixed case is an EIP-55 checksum, and a wrong one is refused (it usually means a mistyped digit, so
// the message does not offer the "corrected" form). Answers always carry the checksummed form.
import { getAddress, isAddress, type Address } from 'viem';

export type AddressCheck = { ok: true; address: Address } | { ok: false; reason: 'malformed' | 'checksum' };

const HEX_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;

export function checkEvmAddress(input: string): AddressCheck {
  if (!HEX_ADDRESS.test(input)) return { ok: false, reason: 'malformed' };
  const digits = input.slice(2);
  const sameCase = digits === digits.toLowerCase() || digits === digits.toUpperCase();
  if (!sameCase && !isAddress(`0x${digits}`, { strict: true })) return { ok: false, reason: 'checksum' };
  return { ok: true, address: getAddress(`0x${digits.toLowerCase()}`) };
}

/** The 400 wording of a failed check, after "query parameter 'x' ". */
export function addressProblem(reason: 'malformed' | 'checksum', accepted: string): string {
  return reason === 'checksum'
    ? 'has a wrong EIP-55 checksum (a digit may be mistyped): mixed case must be the exact checksummed form; all lower-case or all upper-case is accepted'
    : `must be ${accepted}`;
}
