// Solana addresses: base58 (the Bitcoin alphabet) to and from 32 bytes, and program-derived addresses
// (solana.com/docs/core/pda: sha256(seeds, bump, program id, "ProgramDerivedAddress") taken from bump 255
// down until the hash is not a point on the ed25519 curve, the test curve25519-dalek's decompression makes).
import { createHash } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58Decode(text: string): Buffer {
  let n = 0n;
  for (const ch of text) {
    const v = ALPHABET.indexOf(ch);
    if (v < 0) throw new Error(`not base58: ${ch}`);
    n = n * 58n + BigInt(v);
  }
  const hex = n === 0n ? '' : n.toString(16).padStart(Math.ceil(n.toString(16).length / 2) * 2, '0');
  const zeros = text.length - text.replace(/^1+/, '').length;
  return Buffer.concat([Buffer.alloc(zeros), Buffer.from(hex, 'hex')]);
}

export function base58Encode(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return '1'.repeat(zeros) + out;
}

const P = 2n ** 255n - 19n;
const mod = (a: bigint) => ((a % P) + P) % P;
function pow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}
const D = mod(-121665n * pow(121666n, P - 2n));

/** Whether 32 bytes decompress to an ed25519 point: x² = (y² − 1) / (d·y² + 1) must be a square mod p. */
export function isOnCurve(bytes: Uint8Array): boolean {
  const le = Buffer.from(bytes).reverse();
  const y = mod(BigInt(`0x${le.toString('hex')}`) & ((1n << 255n) - 1n));
  const y2 = (y * y) % P;
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  if (v === 0n) return u === 0n;
  const x2 = (u * pow(v, P - 2n)) % P;
  return x2 === 0n || pow(x2, (P - 1n) / 2n) === 1n;
}

/** The program-derived address of `seeds` under `programId` (both base58 where addresses), as findProgramAddress finds it. */
export function findProgramAddress(seeds: Uint8Array[], programId: string): string {
  const program = base58Decode(programId);
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash('sha256');
    for (const s of seeds) hash.update(s);
    hash.update(Buffer.from([bump])).update(program).update('ProgramDerivedAddress');
    const candidate = hash.digest();
    if (!isOnCurve(candidate)) return base58Encode(candidate);
  }
  throw new Error('no program address found');
}
