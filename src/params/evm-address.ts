// The one rule for every EVM address a client sends (interface A's token, interface B's address
// parameters): `0x` (or `0X`) + 40 hex characters; all lower-case and all upper-case carry no checksum
// and are accepted as they are; a mixed-case address must match its EIP-55 checksum, because a
// mismatch almost always means a mistyped character, and answering for a different address than the
// one the client meant would be worse than a 400. Interface A answers the lower-case form (GoPlus keys
// its results so); interface B answers the checksummed one.
import type { Address } from 'viem';
// @noble/hashes's Keccak-256 (the audited one viem uses): a few small modules, where viem itself is ~360.
import { keccak_256 as keccak256 } from '@noble/hashes/sha3';
import { requiredString } from './query.ts';

/** What an EVM address parameter accepts, for messages and docs. */
export const ACCEPTED_EVM_ADDRESS = 'an EVM address (0x + 40 hex characters; all lower-case, all upper-case, or EIP-55 mixed case)';

const SHAPE = /^0[xX][0-9a-fA-F]{40}$/;

/**
 * The addresses OpenAPI's pattern lists (without ^ and $): 40 hex digits all lower-case or all upper-case,
 * the forms with no checksum to get right. EIP-55 mixed case is accepted too, when its checksum matches,
 * which no pattern can say: the parameters' descriptions say it, so a fuzzer drawing from the pattern never
 * sends a mixed-case address with a wrong checksum (a 400).
 */
export const EVM_ADDRESS_FORMS = '0[xX](?:[0-9a-f]{40}|[0-9A-F]{40})';

/** True when `input` has the shape of an EVM address (checksum not considered). */
export function looksLikeEvmAddress(input: string): boolean {
  return SHAPE.test(input);
}

/** Checksums already computed (clients repeat addresses), bounded: cleared when full. */
const checksums = new Map<string, Address>();
const CHECKSUMS_KEPT = 4096;
const ascii = new TextEncoder();

/**
 * The EIP-55 form of a 0x address (40 hex digits, any case): a letter is upper case where the
 * Keccak-256 of the lower-case hex digits has a nibble of 8 or more at the same position.
 */
export function checksumEvmAddress(input: string): Address {
  const hex = input.slice(2).toLowerCase();
  const known = checksums.get(hex);
  if (known) return known;
  const hash = keccak256(ascii.encode(hex));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    out += nibble >= 8 ? hex[i]!.toUpperCase() : hex[i]!;
  }
  if (checksums.size >= CHECKSUMS_KEPT) checksums.clear();
  checksums.set(hex, out as Address);
  return out as Address;
}

export type AddressCheck = { ok: true; address: Address } | { ok: false; reason: 'malformed' | 'checksum' };

/**
 * The rule itself: the checksummed address, or why `input` is refused. Only a mixed-case address is
 * checked against EIP-55 (all-lower and all-upper have no checksum).
 */
export function checkEvmAddress(input: string): AddressCheck {
  if (!SHAPE.test(input)) return { ok: false, reason: 'malformed' };
  const hex = input.slice(2);
  const checksummed = checksumEvmAddress(input);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase() || `0x${hex}` === checksummed) return { ok: true, address: checksummed };
  return { ok: false, reason: 'checksum' };
}

/** The 400 wording of a refused address, after "query parameter 'x' "; `accepted` says what the parameter takes. */
export function addressProblem(reason: 'malformed' | 'checksum', accepted = ACCEPTED_EVM_ADDRESS): string {
  return reason === 'checksum'
    ? 'has a wrong EIP-55 checksum (its mixed-case letters do not match the address: usually a typo); check the address'
    : `must be ${accepted}`;
}

/** Why `input` is not an acceptable EVM address, worded to follow "query parameter 'x' …"; null when it is one. */
export function evmAddressProblem(input: string): string | null {
  if (!SHAPE.test(input)) return addressProblem('malformed');
  // Same-case addresses carry no checksum: accepted without hashing (keccak on every request is not free).
  const hex = input.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return null;
  const check = checkEvmAddress(input);
  return check.ok ? null : addressProblem(check.reason);
}

/** The address in lower case with a `0x` prefix. Call it on an input `evmAddressProblem` accepts. */
export function normalizeEvmAddress(input: string): Address {
  return `0x${input.slice(2).toLowerCase()}`;
}

/** Parses a client's EVM address: the normalised (lower-case) address, or the reason it is refused. */
export function parseEvmAddress(input: string): { ok: true; address: Address } | { ok: false; problem: string } {
  const problem = evmAddressProblem(input.trim());
  return problem === null ? { ok: true, address: normalizeEvmAddress(input.trim()) } : { ok: false, problem };
}

/**
 * A required EVM address query parameter: shape and EIP-55 checked (400 naming the parameter and the
 * problem), handed to the handler lower-case.
 */
export function evmAddressParam(description: string) {
  return requiredString(ACCEPTED_EVM_ADDRESS)
    .trim()
    .superRefine((v, ctx) => {
      const problem = evmAddressProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform((v) => normalizeEvmAddress(v))
    .describe(`${description} Accepts ${ACCEPTED_EVM_ADDRESS}; a mixed-case address with a wrong checksum is refused; answered lower-case.`);
}
