// The key this server signs x402 offers and receipts with (X402_SIGNING_KEY): a secp256k1 private key, as every
// EVM tool writes one, used for JWS ES256K (RFC 8812). What is published of it (the agent card, /openapi.json,
// /v1/status) is the public key as a JWK, its `kid`, and the EVM address of the same key. The kid is the key's
// did:jwk: the key travels with every signature and the package's extractPublicKeyFromKid reads it back without a
// network call. (A did:key would be 110 characters shorter in every offer, but the package's did:key reading of a
// secp256k1 key fails with the @noble/curves it installs, 1.9: `secp256k1.Point` is undefined there.) Node's crypto signs (OpenSSL, no new dependency); the address takes Keccak-256
// from @noble/hashes, as the address parameters do (viem is not loaded for this).
import { createECDH, createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { keccak_256 as keccak256 } from '@noble/hashes/sha3';
import { checksumEvmAddress } from '../../params/evm-address.ts';

/** The JWS algorithm of every offer and receipt: ECDSA over secp256k1 with SHA-256. */
export const SIGNING_ALG = 'ES256K';

/** The public part of the signing key, as a payer or a verifier fetches it. */
export interface PublishedSigningKey {
  format: 'jws';
  alg: typeof SIGNING_ALG;
  /** The JWS `kid` of every offer and receipt: `did:jwk:` + the JWK below, base64url. */
  kid: string;
  jwk: { kty: 'EC'; crv: 'secp256k1'; x: string; y: string };
  /** The EVM address of the same key (EIP-55). */
  address: string;
}

export interface SigningKey {
  published: PublishedSigningKey;
  /** The base64url JWS signature (r ‖ s, 64 bytes) of a JWS signing input. */
  sign(input: Uint8Array | string): string;
}

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** The signing key of `privateKey` (0x + 64 hex, checked by the settings). */
export function signingKey(privateKey: `0x${string}`): SigningKey {
  const { published, d } = derive(privateKey);
  const key: KeyObject = createPrivateKey({ key: { ...published.jwk, d }, format: 'jwk' });
  return {
    published,
    // IEEE P1363 encoding: r and s, 32 bytes each, as JWS wants (not DER).
    sign: (input) => b64u(sign('sha256', typeof input === 'string' ? Buffer.from(input) : input, { key, dsaEncoding: 'ieee-p1363' })),
  };
}

/** What is published of `privateKey`: nothing secret. */
export function publishedSigningKey(privateKey: `0x${string}`): PublishedSigningKey {
  return derive(privateKey).published;
}

function derive(privateKey: `0x${string}`): { published: PublishedSigningKey; d: string } {
  const secret = Buffer.from(privateKey.slice(2), 'hex');
  const ecdh = createECDH('secp256k1');
  ecdh.setPrivateKey(secret);
  const point = ecdh.getPublicKey(); // 0x04 ‖ x ‖ y
  const jwk = { kty: 'EC', crv: 'secp256k1', x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33, 65)) } as const;
  // An EVM address: the last 20 bytes of Keccak-256 of x ‖ y.
  const address = checksumEvmAddress(`0x${Buffer.from(keccak256(point.subarray(1))).subarray(12).toString('hex')}`);
  return { published: { format: 'jws', alg: SIGNING_ALG, kid: `did:jwk:${b64u(Buffer.from(JSON.stringify(jwk)))}`, jwk, address }, d: b64u(secret) };
}

/** RFC 9530's Content-Digest of `bytes` with SHA-256: `sha-256=:<base64>:`. */
export function contentDigest(bytes: Uint8Array): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}
