// A wallet given as a private key signs its typed data (batch-settlement vouchers, EIP-3009 authorizations) with
// libsecp256k1's native build (`secp256k1`, prebuilt for Linux x64, macOS arm64 and Windows x64) where it loads:
// about 0.05 ms a signature, where viem's (@noble/curves, JavaScript) takes 0.3-1 ms of CPU, on every paid call. The
// EIP-712 digest is still viem's (hashTypedData). The signature is the same one viem would make: both follow RFC
// 6979 with no added entropy and give the low s, so the nonce, r, s and v are equal (a test holds them equal). Where
// the native build does not load, viem signs, as before. A voucher's digest is hashed with its domain's separator
// kept (voucher-digest.ts: two Keccak hashes instead of seven), the same digest viem gives.
import { createRequire } from 'node:module';
import { hashTypedData, toHex, type Hex, type LocalAccount } from 'viem';
import { voucherDigest, type TypedDataInput } from './voucher-digest.ts';

type Native = { ecdsaSign(hash: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number } };

let native: Native | null | undefined;

/** libsecp256k1's native build, or null where this platform has none. */
function nativeSecp256k1(): Native | null {
  if (native === undefined) {
    try {
      native = createRequire(import.meta.url)('secp256k1/bindings.js') as Native;
    } catch {
      native = null;
    }
  }
  return native;
}

/** `account` (made from `privateKey`), signing its typed data natively where it can. */
export function withNativeTypedDataSigning(account: LocalAccount, privateKey: Hex): LocalAccount {
  const secp = nativeSecp256k1();
  if (!secp) return account;
  const key = Buffer.from(privateKey.slice(2), 'hex');
  const signTypedData: LocalAccount['signTypedData'] = async (typedData) => {
    const digest = voucherDigest(typedData as TypedDataInput) ?? Buffer.from(hashTypedData(typedData as Parameters<typeof hashTypedData>[0]).slice(2), 'hex');
    const { signature, recid } = secp.ecdsaSign(digest, key);
    return `${toHex(signature)}${recid === 0 ? '1b' : '1c'}` as Hex;
  };
  return { ...account, signTypedData };
}
