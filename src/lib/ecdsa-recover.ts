// The address that signed a 32-byte digest, recovered by libsecp256k1 compiled to WebAssembly (tiny-secp256k1, from
// bitcoinjs): about a quarter of a millisecond where viem's recovery (@noble/curves, JavaScript) takes 2-4 ms of CPU
// on this project's machine, on every paid call that checks a signature itself.
//
// Strict, as the contracts that act on these signatures are (OpenZeppelin's ECDSA, USDC's ECRecover): 65 bytes,
// v 27 or 28, s in the lower half of the curve's order. Anything else is undefined, never an error: a caller
// leaves such a signature to whoever checks it more leniently (the SDK, the facilitator), never refuses it here.
import type { Hex } from 'viem';

type Recover = (hash: Uint8Array, signature: Uint8Array, recoveryId: 0 | 1, compressed: boolean) => Uint8Array | null;

/** Loaded on first use (its WebAssembly compiled then, and viem for the address's hash), never at start-up. */
let loaded: Promise<{ recover: Recover; keccak256: (bytes: Uint8Array) => Hex }> | undefined;
const load = () => (loaded ??= Promise.all([import('tiny-secp256k1'), import('viem')]).then(([secp, viem]) => ({ recover: secp.recover as Recover, keccak256: (b: Uint8Array) => viem.keccak256(b) })));

/** secp256k1's order, halved. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const DIGEST = /^0x[0-9a-fA-F]{64}$/;

/** The signer's address (lower case) of `digest`, or undefined for a signature that is not strict ECDSA or recovers to nothing. */
export async function recoverSigner(digest: Hex, signature: string): Promise<string | undefined> {
  if (!DIGEST.test(digest) || typeof signature !== 'string' || !SIGNATURE.test(signature)) return undefined;
  const v = parseInt(signature.slice(130), 16);
  if ((v !== 27 && v !== 28) || BigInt(`0x${signature.slice(66, 130)}`) > HALF_N) return undefined;
  const { recover, keccak256 } = await load();
  let key: Uint8Array | null;
  try {
    key = recover(bytes(digest), bytes(signature.slice(0, 130)), (v - 27) as 0 | 1, false);
  } catch {
    return undefined;
  }
  return key ? `0x${keccak256(key.subarray(1)).slice(-40)}` : undefined;
}

const bytes = (hex: string) => Buffer.from(hex.slice(2), 'hex');
