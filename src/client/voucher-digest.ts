// A batch-settlement voucher's EIP-712 digest in two Keccak hashes instead of viem's seven. viem's hashTypedData
// hashes the domain's type, its name and version and the domain itself, then the voucher's type, on every call; for a
// voucher only the last two hashes change (the struct, then the digest), so the domain separator is kept per domain
// (at most MAX_DOMAINS) and the type hash once. Hashing in JavaScript (Node's crypto has no Keccak) cost a repeat call
// about 0.1 ms of the client's CPU.
//
// What viem checks before it hashes is checked here too: the typed data must be exactly a voucher (its types, its
// primary type, no other field in the message), the channel id 32 bytes, the amount a uint128; a domain is validated
// by viem itself the first time it is seen. Anything else is left to viem (undefined).
import { getTypesForEIP712Domain, hashDomain, keccak256, toHex, validateTypedData, type TypedDataDomain } from 'viem';

/** The voucher's EIP-712 type, as @x402/evm declares it (voucherTypes). */
const VOUCHER_FIELDS = [
  { name: 'channelId', type: 'bytes32' },
  { name: 'maxClaimableAmount', type: 'uint128' },
] as const;
const VOUCHER_TYPEHASH = keccak256(toHex('Voucher(bytes32 channelId,uint128 maxClaimableAmount)'), 'bytes');
const UINT128_LIMIT = 1n << 128n;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const MAX_DOMAINS = 16;

const domains = new Map<string, Uint8Array>();

export interface TypedDataInput {
  domain?: TypedDataDomain;
  types: Record<string, readonly { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** The digest viem's hashTypedData gives for `typedData` when it is a batch-settlement voucher; undefined otherwise. */
export function voucherDigest(typedData: TypedDataInput): Uint8Array | undefined {
  if (typedData.primaryType !== 'Voucher' || !isVoucherTypes(typedData.types)) return undefined;
  const { channelId, maxClaimableAmount, ...rest } = typedData.message;
  if (Object.keys(rest).length > 0 || typeof channelId !== 'string' || !BYTES32.test(channelId)) return undefined;
  const amount = maxClaimableAmount;
  if (typeof amount !== 'bigint' || amount < 0n || amount >= UINT128_LIMIT) return undefined;
  const separator = domainSeparator(typedData);
  if (!separator) return undefined;
  const struct = new Uint8Array(96);
  struct.set(VOUCHER_TYPEHASH, 0);
  struct.set(Buffer.from(channelId.slice(2), 'hex'), 32);
  struct.set(Buffer.from(amount.toString(16).padStart(64, '0'), 'hex'), 64);
  const digest = new Uint8Array(66);
  digest[0] = 0x19;
  digest[1] = 0x01;
  digest.set(separator, 2);
  digest.set(keccak256(struct, 'bytes'), 34);
  return keccak256(digest, 'bytes');
}

function isVoucherTypes(types: TypedDataInput['types']): boolean {
  const names = Object.keys(types).filter((k) => k !== 'EIP712Domain');
  const fields = types.Voucher;
  return (
    names.length === 1 &&
    fields !== undefined &&
    fields.length === VOUCHER_FIELDS.length &&
    fields.every((f, i) => f.name === VOUCHER_FIELDS[i]!.name && f.type === VOUCHER_FIELDS[i]!.type)
  );
}

/** The domain's separator: the typed data validated and the domain hashed by viem the first time the domain is seen. */
function domainSeparator(typedData: TypedDataInput): Uint8Array | undefined {
  const domain = typedData.domain ?? {};
  // As hashTypedData has them: the domain's fields, unless the types declare EIP712Domain themselves.
  const domainTypes = typedData.types.EIP712Domain ?? getTypesForEIP712Domain({ domain });
  // The fields a separator is made of (viem reads no others), each with its type, and the declared types, as JSON:
  // two domains share a key only when viem would hash them alike.
  const fields = [domain.name, domain.version, domain.chainId, domain.verifyingContract, domain.salt].map((v) => (v == null ? null : [typeof v, String(v)]));
  const key = JSON.stringify([fields, typedData.types.EIP712Domain ?? null]);
  let separator = domains.get(key);
  if (separator) return separator;
  try {
    const types = { ...typedData.types, EIP712Domain: domainTypes };
    validateTypedData({ domain, message: typedData.message, primaryType: typedData.primaryType, types } as Parameters<typeof validateTypedData>[0]);
    separator = Buffer.from(hashDomain({ domain, types: { EIP712Domain: domainTypes } } as Parameters<typeof hashDomain>[0]).slice(2), 'hex');
  } catch {
    return undefined; // viem then refuses it with its own error
  }
  if (domains.size >= MAX_DOMAINS) domains.clear();
  domains.set(key, separator);
  return separator;
}
