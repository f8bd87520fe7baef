// Our Keccak-256 and EIP-55 checksum (src/params/keccak.ts, checksumEvmAddress), kept so that address
// checks do not load viem at start-up, give exactly viem's answers.
import fc from 'fast-check';
import { getAddress, keccak256 as viemKeccak256 } from 'viem';
import { describe, expect, it } from 'vitest';
import { checksumEvmAddress, checkEvmAddress } from '../src/params/evm-address.ts';
import { keccak256 } from '../src/params/keccak.ts';

const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`;

describe('keccak256', () => {
  it('gives the published digests of the empty input and of "abc" (Keccak, not NIST SHA3-256)', () => {
    expect(hex(keccak256(new Uint8Array()))).toBe('0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(hex(keccak256(new TextEncoder().encode('abc')))).toBe('0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });

  it('matches viem on inputs of every length around the 136-byte block (padding in the same or the next block)', () => {
    for (let length = 0; length <= 2 * 136 + 2; length++) {
      const input = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(hex(keccak256(input)), `length ${length}`).toBe(viemKeccak256(input));
    }
  });

  it('matches viem on random inputs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (input) => hex(keccak256(input)) === viemKeccak256(input)),
      { numRuns: 500 },
    );
  });
});

describe('checksumEvmAddress', () => {
  it("gives EIP-55's own examples", () => {
    // From the EIP: all caps, all lower, and mixed.
    for (const address of [
      '0x52908400098527886E0F7030069857D2E4169EE7',
      '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
      '0xde709f2102306220921060314715629080e2fb77',
      '0x27b1fdb04752bbc536007a920d24acb045561c26',
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(checksumEvmAddress(address.toLowerCase())).toBe(address);
    }
  });

  it('matches viem on random addresses, whatever the case given', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.boolean(), (bytes, upper) => {
        const lower = hex(bytes);
        const input = upper ? `0x${lower.slice(2).toUpperCase()}` : lower;
        return checksumEvmAddress(input) === getAddress(lower);
      }),
      { numRuns: 500 },
    );
  });

  it('is what the address check accepts and answers', () => {
    const checksummed = getAddress('0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c');
    expect(checkEvmAddress(checksummed)).toEqual({ ok: true, address: checksummed });
    expect(checkEvmAddress(checksummed.replace('E', 'e'))).toEqual({ ok: false, reason: 'checksum' });
  });
});
