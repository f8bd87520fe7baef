// native-signer.ts: a wallet given as a private key signs typed data with libsecp256k1's native build, and its
// signature is exactly viem's (RFC 6979, low s, v 27/28) for every kind of typed data the client signs.
import { authorizationTypes, BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from '@x402/evm';
import { getAddress, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { withNativeTypedDataSigning } from '../../src/client/native-signer.ts';


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
});
