// atomicAmount (src/payments/core/price.ts): a dollar price in the token's atomic units, without floating point.
import { describe, expect, it } from 'vitest';
import { atomicAmount } from '../../src/payments/core/price.ts';

describe('atomicAmount', () => {
  it.each([
    ['$0.001', 6, '1000'],
    ['$1', 6, '1000000'],
    ['$0.000001', 6, '1'],
    ['$2.5', 18, '2500000000000000000'],
    ['$0.10', 2, '10'],
  ])('%s at %i decimals = %s', (price, decimals, atomic) => expect(atomicAmount(price, decimals)).toBe(atomic));

  it('refuses more precision than the token has', () => {
    expect(() => atomicAmount('$0.0000001', 6)).toThrow(/more precision/);
  });
});
