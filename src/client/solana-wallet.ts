// The Solana wallet a client pays from (`solanaWallet`): a 64-byte ed25519 secret key (32-byte seed, then the
// public key) in base58, as Solana's tools and wallets export it, or those 64 bytes (the numbers of a
// solana-keygen JSON file). Checked when the client is made, synchronously, with Node's own ed25519: the key is 64
// bytes and its second half is the public key of its first (a key copied wrong fails here, naming the option, not at
// the first payment). The signer handed to @x402/svm's `exact` client is @solana/kit's KeyPairSigner, made from the
// same bytes on first use (WebCrypto's import is asynchronous, createClient is not).
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { createKeyPairSignerFromBytes, getBase58Decoder, getBase58Encoder, type Address, type KeyPairSigner, type TransactionPartialSigner } from '@solana/kit';
import { MarketgateError } from './errors.ts';

/** A Solana secret key: base58 text, or its 64 bytes. */
export type SolanaSecretKey = string | Uint8Array | readonly number[];

/** PKCS#8 DER of an Ed25519 private key, less its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function fail(error: string): never {
  throw new MarketgateError({ kind: 'config', path: 'solanaWallet', error });
}

/** The 64 bytes of a Solana secret key, checked (the public half matches the seed). */
function secretBytes(key: SolanaSecretKey): Uint8Array {
  let bytes: Uint8Array;
  if (typeof key === 'string') {
    try {
      bytes = new Uint8Array(getBase58Encoder().encode(key.trim()));
    } catch {
      fail('must be a 64-byte secret key in base58 (as Solana wallets export it), or its 64 bytes');
    }
  } else if (key instanceof Uint8Array || (Array.isArray(key) && key.every((b) => Number.isInteger(b) && b >= 0 && b <= 255))) {
    bytes = Uint8Array.from(key);
  } else {
    fail('must be a 64-byte secret key in base58 (as Solana wallets export it), or its 64 bytes');
  }
  if (bytes.length !== 64) fail(`must be a 64-byte secret key (seed and public key), got ${bytes.length} bytes`);
  const seed = bytes.subarray(0, 32);
  const publicKey = createPublicKey(createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }));
  const derived = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  if (!derived.equals(bytes.subarray(32))) fail('is not a Solana keypair: its last 32 bytes are not the public key of its first 32');
  return bytes;
}

/** The payer of Solana payments: its address, and a signer for @x402/svm's exact client. */
export interface SolanaWallet {
  address: Address;
  signer: TransactionPartialSigner;
}

/** The address (base58) of a Solana secret key, checked as `solanaWallet` is; throws a `config` error otherwise. */
export function solanaAddress(key: SolanaSecretKey): string {
  return getBase58Decoder().decode(secretBytes(key).subarray(32));
}

export function solanaWallet(key: SolanaSecretKey): SolanaWallet {
  const bytes = secretBytes(key);
  const address = getBase58Decoder().decode(bytes.subarray(32)) as Address;
  let made: Promise<KeyPairSigner> | undefined;
  const signer: TransactionPartialSigner = {
    address,
    signTransactions: async (transactions, config) => (await (made ??= createKeyPairSignerFromBytes(bytes))).signTransactions(transactions, config),
  };
  return { address, signer };
}
