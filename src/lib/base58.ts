// Base58 (Bitcoin's alphabet, as Solana writes addresses, signatures and keys): decoding only, to check a value's
// length without loading a Solana library.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Map([...ALPHABET].map((c, i) => [c, i]));

/** The bytes of a base58 string, or undefined when it is not one. */
export function base58Decode(text: string): Uint8Array | undefined {
  if (text.length === 0) return new Uint8Array();
  let n = 0n;
  for (const c of text) {
    const v = INDEX.get(c);
    if (v === undefined) return undefined;
    n = n * 58n + BigInt(v);
  }
  const bytes: number[] = [];
  while (n > 0n) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  for (const c of text) {
    if (c !== '1') break;
    bytes.unshift(0);
  }
  return Uint8Array.from(bytes);
}

/** Whether `text` is a Solana address: base58 of 32 bytes. */
export const isSolanaAddress = (text: string): boolean => /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(text) && base58Decode(text)?.length === 32;
