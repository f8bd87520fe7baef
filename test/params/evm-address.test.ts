// The shared EVM address rule (src/params/evm-address.ts): shape, EIP-55 for mixed case, lower-case out.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { evmAddressParam, evmAddressProblem, normalizeEvmAddress, parseEvmAddress } from '../../src/params/evm-address.ts';

const LOWER = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';
// EIP-55 of LOWER (keccak-256 of the lower-case hex decides each letter's case), as viem's getAddress gives it.
const CHECKSUMMED = '0x4e7E15A6B83718bA79674cc4ce09f7d4a631eC2C';
// The issue's example: first letters upper-cased by hand, the rest lower: not the checksum.
const WRONG = '0x4E7E15A6B83718ba79674cc4ce09f7d4a631ec2c';

describe('evmAddressProblem', () => {
  it.each([
    ['all lower case', LOWER],
    ['all upper case', `0x${LOWER.slice(2).toUpperCase()}`],
    ['0X prefix', `0X${LOWER.slice(2)}`],
    ['EIP-55 mixed case', CHECKSUMMED],
    ['digits only (no letters to check)', `0x${'1'.repeat(40)}`],
  ])('accepts %s', (_name, input) => {
    expect(evmAddressProblem(input)).toBeNull();
  });

  it('refuses a mixed-case address whose letters do not match its checksum, saying so', () => {
    expect(evmAddressProblem(WRONG)).toMatch(/^has a wrong EIP-55 checksum .*usually a typo/);
    // One letter flipped from the checksummed form is enough.
    expect(evmAddressProblem(CHECKSUMMED.replace('eC2C', 'ec2C'))).toMatch(/EIP-55/);
  });

  it.each([
    ['too short', '0x1234'],
    ['no prefix', LOWER.slice(2)],
    ['not hex', `0x${'g'.repeat(40)}`],
    ['41 hex characters', `${LOWER}0`],
  ])('refuses %s as not an address', (_name, input) => {
    expect(evmAddressProblem(input)).toMatch(/^must be an EVM address \(0x \+ 40 hex characters/);
  });
});

describe('normalising', () => {
  it('answers lower case with a 0x prefix whatever the accepted spelling', () => {
    expect(normalizeEvmAddress(CHECKSUMMED)).toBe(LOWER);
    expect(normalizeEvmAddress(`0X${LOWER.slice(2).toUpperCase()}`)).toBe(LOWER);
    expect(parseEvmAddress(` ${CHECKSUMMED} `)).toEqual({ ok: true, address: LOWER });
    expect(parseEvmAddress(WRONG)).toEqual({ ok: false, problem: expect.stringMatching(/EIP-55/) });
  });

  it('evmAddressParam: a zod query parameter that checks and normalises', () => {
    const query = z.object({ address: evmAddressParam('Wallet to look up.') });
    expect(query.parse({ address: CHECKSUMMED })).toEqual({ address: LOWER });
    const bad = query.safeParse({ address: WRONG });
    expect(bad.error?.issues[0]?.message).toMatch(/^has a wrong EIP-55 checksum/);
    expect(query.safeParse({}).error?.issues[0]?.message).toMatch(/^is required: an EVM address/);
    expect(query.shape.address.description).toMatch(/^Wallet to look up\. Accepts an EVM address/);
  });
});
