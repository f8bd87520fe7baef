// Keccak-256 (the original Keccak padding Ethereum uses, not NIST SHA3-256, which Node's crypto has), for
// EIP-55 address checksums. Ours because the check runs synchronously in parameter validation (interface
// A's token, every address parameter) and viem, which has one, is ~360 modules: loading it for this would
// cost every start-up ~0.3 s of CPU. test/keccak.test.ts compares it with viem's on random inputs.
//
// The 64-bit lanes of the 5×5 state are kept as pairs of 32-bit words (low, high), little-endian, in one
// Uint32Array of 50: lane x + 5y is words 2(x + 5y) and 2(x + 5y) + 1.

/** Rotation of lane x + 5y in the ρ step (the Keccak reference's table). */
const RHO = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

/** The ι step's round constants, as the Keccak reference lists them. */
const ROUND_CONSTANTS = [
  '0000000000000001', '0000000000008082', '800000000000808A', '8000000080008000', '000000000000808B', '0000000080000001',
  '8000000080008081', '8000000000008009', '000000000000008A', '0000000000000088', '0000000080008009', '000000008000000A',
  '000000008000808B', '800000000000008B', '8000000000008089', '8000000000008003', '8000000000008002', '8000000000000080',
  '000000000000800A', '800000008000000A', '8000000080008081', '8000000000008080', '0000000080000001', '8000000080008008',
];
const RC_HIGH = ROUND_CONSTANTS.map((c) => parseInt(c.slice(0, 8), 16));
const RC_LOW = ROUND_CONSTANTS.map((c) => parseInt(c.slice(8), 16));

/** Bytes absorbed per permutation for a 256-bit output (1600 - 2 × 256 bits). */
const RATE = 136;

// Scratch space of the permutation (it never yields, so one set serves every call).
const columns = new Uint32Array(10);
const moved = new Uint32Array(50);

/** Keccak-f[1600] on `s`, in place. */
function permute(s: Uint32Array): void {
  for (let round = 0; round < 24; round++) {
    // θ: each lane takes the parity of the two neighbouring columns (one of them rotated by 1).
    for (let x = 0; x < 5; x++) {
      columns[2 * x] = s[2 * x]! ^ s[2 * x + 10]! ^ s[2 * x + 20]! ^ s[2 * x + 30]! ^ s[2 * x + 40]!;
      columns[2 * x + 1] = s[2 * x + 1]! ^ s[2 * x + 11]! ^ s[2 * x + 21]! ^ s[2 * x + 31]! ^ s[2 * x + 41]!;
    }
    for (let x = 0; x < 5; x++) {
      const left = (x + 4) % 5;
      const right = (x + 1) % 5;
      const low = columns[2 * right]!;
      const high = columns[2 * right + 1]!;
      const dLow = columns[2 * left]! ^ ((low << 1) | (high >>> 31));
      const dHigh = columns[2 * left + 1]! ^ ((high << 1) | (low >>> 31));
      for (let y = 0; y < 25; y += 5) {
        const i = 2 * (x + y);
        s[i] = s[i]! ^ dLow;
        s[i + 1] = s[i + 1]! ^ dHigh;
      }
    }
    // ρ and π: lane (x, y) rotated by RHO, moved to (y, 2x + 3y).
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) {
        const from = x + 5 * y;
        const to = y + 5 * ((2 * x + 3 * y) % 5);
        const n = RHO[from]!;
        const low = s[2 * from]!;
        const high = s[2 * from + 1]!;
        if (n === 0) {
          moved[2 * to] = low;
          moved[2 * to + 1] = high;
        } else if (n < 32) {
          moved[2 * to] = (low << n) | (high >>> (32 - n));
          moved[2 * to + 1] = (high << n) | (low >>> (32 - n));
        } else {
          // No offset is exactly 32; above it the words swap, then rotate by n - 32.
          const m = n - 32;
          moved[2 * to] = (high << m) | (low >>> (32 - m));
          moved[2 * to + 1] = (low << m) | (high >>> (32 - m));
        }
      }
    }
    // χ: each lane combined with the next two of its row.
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) {
        const i = x + y;
        const next = ((x + 1) % 5) + y;
        const after = ((x + 2) % 5) + y;
        s[2 * i] = moved[2 * i]! ^ (~moved[2 * next]! & moved[2 * after]!);
        s[2 * i + 1] = moved[2 * i + 1]! ^ (~moved[2 * next + 1]! & moved[2 * after + 1]!);
      }
    }
    // ι
    s[0] = s[0]! ^ RC_LOW[round]!;
    s[1] = s[1]! ^ RC_HIGH[round]!;
  }
}

/** Keccak-256 of `input`: 32 bytes. */
export function keccak256(input: Uint8Array): Uint8Array {
  const state = new Uint32Array(50);
  // Padding pad10*1 with Keccak's domain bits (0x01), to whole blocks of RATE bytes.
  const padded = new Uint8Array((Math.floor(input.length / RATE) + 1) * RATE);
  padded.set(input);
  padded[input.length] = 0x01;
  padded[padded.length - 1] = padded[padded.length - 1]! | 0x80;
  for (let offset = 0; offset < padded.length; offset += RATE) {
    for (let w = 0; w < RATE / 4; w++) {
      const b = offset + 4 * w;
      state[w] = state[w]! ^ (padded[b]! | (padded[b + 1]! << 8) | (padded[b + 2]! << 16) | (padded[b + 3]! << 24));
    }
    permute(state);
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = (state[i >> 2]! >>> (8 * (i & 3))) & 0xff;
  return out;
}
