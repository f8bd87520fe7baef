// native-signer.ts: a wallet given as a private key signs typed data with libsecp256k1's native build, and its
// signature is exactly viem's (RFC 6979, low s, v 27/28) for every kind of typed data the client signs.
import { authorizationTypes, BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from '@x402/evm';
import { getAddress, hashTypedData, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { withNativeTypedDataSigning } from '../../src/client/native-signer.ts';
import { voucherDigest } from '../../src/client/voucher-digest.ts';


describe('signing typed data natively', () => {
  it('gives viem’s signature, for vouchers and EIP-3009 authorizations under many keys', async () => {
    for (let i = 0; i < 12; i++) {
      const key = keccak256(toHex(`key ${i}`)) as Hex;
      const viem = privateKeyToAccount(key);
      const fast = withNativeTypedDataSigning(viem, key);
      if (process.platform === 'linux' && process.arch === 'x64') expect(fast.signTypedData).not.toBe(viem.signTypedData);
      const voucher = {
        domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: 8453, verifyingContract: getAddress(BATCH_SETTLEMENT_ADDRESS) },
        types: voucherTypes,
        primaryType: 'Voucher' as const,
        message: { channelId: keccak256(toHex(`channel ${i}`)), maxClaimableAmount: BigInt(1000 * (i + 1)) },
      };
      const authorization = {
        domain: { name: 'USD Coin', version: '2', chainId: 84532, verifyingContract: getAddress(`0x${'36'.repeat(20)}`) },
        types: authorizationTypes,
        primaryType: 'TransferWithAuthorization' as const,
        message: { from: viem.address, to: getAddress(`0x${'ab'.repeat(20)}`), value: 1000n, validAfter: 0n, validBefore: 1_900_000_000n + BigInt(i), nonce: keccak256(toHex(`nonce ${i}`)) },
      };
      expect(await fast.signTypedData(voucher)).toBe(await viem.signTypedData(voucher));
      expect(await fast.signTypedData(authorization)).toBe(await viem.signTypedData(authorization));
    }
  });

  it('keeps the account otherwise as it was', () => {
    const key = keccak256(toHex('k')) as Hex;
    const viem = privateKeyToAccount(key);
    const fast = withNativeTypedDataSigning(viem, key);
    expect(fast.address).toBe(viem.address);
    expect(fast.signMessage).toBe(viem.signMessage);
    expect(fast.signTransaction).toBe(viem.signTransaction);
  });

  it('hashes a voucher with its domain’s separator kept: viem’s digest; anything that is not exactly a voucher is viem’s to hash', () => {
    const domain = { ...BATCH_SETTLEMENT_DOMAIN, chainId: 8453, verifyingContract: getAddress(BATCH_SETTLEMENT_ADDRESS) };
    const voucher = (message: Record<string, unknown>, over: Record<string, unknown> = {}) => ({ domain, types: voucherTypes, primaryType: 'Voucher', message, ...over }) as never;
    const channelId = keccak256(toHex('channel'));
    for (const [d, amount] of [
      [domain, 1000n],
      [{ ...domain, chainId: 84532n }, (1n << 128n) - 1n],
      [{ ...domain, chainId: 1 }, 0n],
    ] as const) {
      const typedData = voucher({ channelId, maxClaimableAmount: amount }, { domain: d });
      expect(toHex(voucherDigest(typedData)!)).toBe(hashTypedData(typedData));
      expect(toHex(voucherDigest(typedData)!)).toBe(hashTypedData(typedData)); // the kept separator
    }
    // Types that declare the domain's own fields are hashed as viem hashes them.
    const declared = voucher({ channelId, maxClaimableAmount: 5n }, { types: { ...voucherTypes, EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'chainId', type: 'uint256' }] } });
    expect(toHex(voucherDigest(declared)!)).toBe(hashTypedData(declared));
    // Not a voucher, or not one viem would hash as such: left to viem.
    expect(voucherDigest(voucher({ channelId, maxClaimableAmount: 1n << 128n }))).toBeUndefined();
    expect(voucherDigest(voucher({ channelId, maxClaimableAmount: -1n }))).toBeUndefined();
    expect(voucherDigest(voucher({ channelId, maxClaimableAmount: '1000' }))).toBeUndefined();
    expect(voucherDigest(voucher({ channelId: channelId.slice(0, 64), maxClaimableAmount: 1n }))).toBeUndefined();
    expect(voucherDigest(voucher({ channelId, maxClaimableAmount: 1n, extra: 1 }))).toBeUndefined();
    expect(voucherDigest(voucher({ channelId, maxClaimableAmount: 1n }, { primaryType: 'Refund' }))).toBeUndefined();
    expect(voucherDigest(voucher({ channelId, maxClaimableAmount: 1n }, { types: { Voucher: [{ name: 'channelId', type: 'bytes32' }, { name: 'maxClaimableAmount', type: 'uint256' }] } }))).toBeUndefined();
    expect(voucherDigest(voucher({ channelId, maxClaimableAmount: 1n }, { domain: { ...domain, verifyingContract: '0x1234' } }))).toBeUndefined();
  });
});
