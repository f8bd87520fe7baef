// The address that signed a 32-byte digest, recovered by libsecp256k1: its native build (`secp256k1`, from
// cryptocoinjs, prebuilt for Linux x64, macOS arm64 and Windows x64) where it loads, about 60 µs on this project's
// machine; else the same library compiled to WebAssembly (`tiny-secp256k1`, from bitcoinjs), about 300 µs; where
// viem's recovery (@noble/curves, JavaScript) takes 2-4 ms of CPU. Used on every paid call that checks a
// signature itself. The package's own fallback (`elliptic`, in JavaScript) is never loaded: its native build is
// required directly.
//
// Strict, as the contracts that act on these signatures are (OpenZeppelin's ECDSA, USDC's ECRecover): 65 bytes,
// v 27 or 28, s in the lower half of the curve's order. Anything else is undefined, never an error: a caller
// leaves such a signature to whoever checks it more leniently (the SDK, the facilitator), never refuses it here.
import { createRequire } from 'node:module';
import type { Hex } from 'viem';

type Recover = (hash: Uint8Array, signature: Uint8Array, recoveryId: 0 | 1, compressed: boolean) => Uint8Array | null;
type Native = { ecdsaRecover(signature: Uint8Array, recoveryId: number, hash: Uint8Array, compressed: boolean): Uint8Array };

/** The builds of libsecp256k1 a signer is recovered with: the native one where it loads, else WebAssembly. */
export type RecoverBuild = 'native' | 'wasm';

/** libsecp256k1's native build, or undefined where it has none for this platform. */
function nativeRecover(): Recover | undefined {
  try {
    const native = createRequire(import.meta.url)('secp256k1/bindings.js') as Native;
    return (hash, signature, recoveryId, compressed) => native.ecdsaRecover(signature, recoveryId, hash, compressed);
  } catch {
    return undefined;
  }
}

type Loaded = { build: RecoverBuild; recover: Recover; keccak256: (bytes: Uint8Array) => Hex };
const loaded = new Map<RecoverBuild | 'best', Promise<Loaded>>();

/** Loaded on first use (the native module or the WebAssembly compiled then, and viem for the address's hash), never at start-up. */
function load(wanted: RecoverBuild | 'best'): Promise<Loaded> {
  let done = loaded.get(wanted);
  if (!done) {
    done = Promise.all([wanted === 'wasm' ? undefined : nativeRecover(), import('viem')]).then(async ([native, viem]) => {
      if (wanted === 'native' && !native) throw new Error('libsecp256k1 has no native build for this platform');
      const recover = native ?? ((await import('tiny-secp256k1')).recover as Recover);
      return { build: native ? 'native' : 'wasm', recover, keccak256: (b: Uint8Array) => viem.keccak256(b) } satisfies Loaded;
    });
    loaded.set(wanted, done);
  }
  return done;
}

/** Which build recoverSigner uses on this platform. */
export async function recoverBuild(): Promise<RecoverBuild> {
  return (await load('best')).build;
}

/** secp256k1's order, halved. */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const DIGEST = /^0x[0-9a-fA-F]{64}$/;

/** The signer's address (lower case) of `digest` (hex, or its 32 bytes), or undefined for a signature that is not strict ECDSA or recovers to nothing. */
export async function recoverSigner(digest: Hex | Uint8Array, signature: string, build: RecoverBuild | 'best' = 'best'): Promise<string | undefined> {
  const hash = typeof digest === 'string' ? (DIGEST.test(digest) ? bytes(digest) : undefined) : digest.length === 32 ? digest : undefined;
  if (!hash || typeof signature !== 'string' || !SIGNATURE.test(signature)) return undefined;
  const v = parseInt(signature.slice(130), 16);
  if ((v !== 27 && v !== 28) || BigInt(`0x${signature.slice(66, 130)}`) > HALF_N) return undefined;
  const { recover, keccak256 } = await load(build);
  let key: Uint8Array | null;
  try {
    key = recover(hash, bytes(signature.slice(0, 130)), (v - 27) as 0 | 1, false);
  } catch {
    return undefined;
  }
  return key ? addressOf(key, keccak256) : undefined;
}

/**
 * The address of an uncompressed public key, kept per key: the few payers of a busy server sign call after call,
 * and the key's Keccak hash is a fifth of a recovery's cost. A bound, not a policy: past it, all are forgotten.
 */
const addresses = new Map<string, string>();
const MAX_ADDRESSES = 4096;

function addressOf(key: Uint8Array, keccak256: (bytes: Uint8Array) => Hex): string {
  const id = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
  let address = addresses.get(id);
  if (address === undefined) {
    address = `0x${keccak256(key.subarray(1)).slice(-40)}`;
    if (addresses.size >= MAX_ADDRESSES) addresses.clear();
    addresses.set(id, address);
  }
  return address;
}

const bytes = (hex: string) => Buffer.from(hex.slice(2), 'hex');
