// Our EIP-55 checksum (checksumEvmAddress, over @noble/hashes's Keccak-256), kept so that address checks
// do not load viem at start-up, gives exactly viem's answers.
import fc from 'fast-check';
import { getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { checksumEvmAddress, checkEvmAddress } from '../../src/params/evm-address.ts';

const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`;

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
