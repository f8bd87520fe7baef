// The local check of an `exact` payment (src/payments/schemes/exact-evm/local-verify.ts), alone: an EOA-signed
// EIP-3009 authorization that pays the requirements exactly and is valid now is `{ isValid: true, payer }`; every
// other shape is undefined (the facilitator's /verify decides), never a refusal, never a throw.
import type { PaymentRequirements } from '@x402/core/types';
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { verifyExactLocally } from '../../src/payments/schemes/exact-evm/local-verify.ts';

const payer = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const other = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const NOW_MS = Date.parse('2026-12-07T06:00:00Z');
const now = Math.floor(NOW_MS / 1000);

const requirements: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  amount: '1000',
  payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  maxTimeoutSeconds: 60,
  extra: { name: 'USD Coin', version: '2' },
};

type Auth = { from: `0x${string}`; to: `0x${string}`; value: string; validAfter: string; validBefore: string; nonce: `0x${string}` };

async function signed(change: Partial<Auth> = {}, options: { signer?: typeof payer; domain?: { name?: string; chainId?: number } } = {}) {
  const authorization: Auth = {
    from: payer.address,
    to: requirements.payTo as `0x${string}`,
    value: '1000',
    validAfter: String(now - 600),
    validBefore: String(now + 60),
    nonce: `0x${'ab'.repeat(32)}`,
    ...change,
  };
  const signature = await (options.signer ?? payer).signTypedData({
    domain: { name: options.domain?.name ?? 'USD Coin', version: '2', chainId: options.domain?.chainId ?? 8453, verifyingContract: requirements.asset as `0x${string}` },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: { ...authorization, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) },
  });
  return { payload: { authorization, signature } as { authorization: Auth; signature: `0x${string}` }, accepted: { scheme: 'exact', network: requirements.network } };
}

const check = (payment: Awaited<ReturnType<typeof signed>>, req: PaymentRequirements = requirements) => verifyExactLocally(payment, req, NOW_MS);

describe('an exact payment checked locally', () => {
  it('an EOA-signed authorization that pays the requirements exactly, valid now → valid, its payer named (checksummed)', async () => {
    const payment = await signed();
    payment.payload.authorization.from = payer.address.toLowerCase() as `0x${string}`;
    expect(await check(payment)).toEqual({ isValid: true, payer: getAddress(payer.address) });
  });

  it('a signature by anyone but `from`, or over another domain (token name, chain), is left to the facilitator', async () => {
    expect(await check(await signed({}, { signer: other }))).toBeUndefined();
    expect(await check(await signed({}, { domain: { name: 'Other Coin' } }))).toBeUndefined();
    expect(await check(await signed({}, { domain: { chainId: 1 } }))).toBeUndefined();
    // The signed message is not what the payload says.
    const edited = await signed();
    edited.payload.authorization.nonce = `0x${'cd'.repeat(32)}`;
    expect(await check(edited)).toBeUndefined();
  });

  it('terms other than the route\'s: another payee, another amount, another network or scheme, no EIP-712 domain', async () => {
    expect(await check(await signed({ to: other.address }))).toBeUndefined();
    expect(await check(await signed({ value: '999' }))).toBeUndefined();
    expect(await check(await signed({ value: '1001' }))).toBeUndefined();
    expect(await check(await signed(), { ...requirements, extra: {} })).toBeUndefined();
    expect(await check(await signed(), { ...requirements, scheme: 'batch-settlement' })).toBeUndefined();
    const elsewhere = await signed();
    elsewhere.accepted = { scheme: 'exact', network: 'eip155:84532' };
    expect(await check(elsewhere)).toBeUndefined();
  });

  it('outside its validity window: not yet valid, expired, or expiring within the facilitator\'s 6 s margin', async () => {
    expect(await check(await signed({ validAfter: String(now + 1) }))).toBeUndefined();
    expect(await check(await signed({ validBefore: String(now - 1) }))).toBeUndefined();
    expect(await check(await signed({ validBefore: String(now + 5) }))).toBeUndefined();
    expect(await check(await signed({ validBefore: String(now + 6) }))).toMatchObject({ isValid: true });
  });

  it('a smart-wallet signature (ERC-6492 wrapped, or any length but 65 bytes), Permit2, garbage: left to the facilitator, never a throw', async () => {
    const wrapped = await signed();
    wrapped.payload.signature = `${wrapped.payload.signature}${'00'.repeat(32)}6492649264926492649264926492649264926492649264926492649264926492` as `0x${string}`;
    expect(await check(wrapped)).toBeUndefined();
    const permit2 = { payload: { permit2Authorization: { from: payer.address }, signature: '0x' }, accepted: { scheme: 'exact', network: requirements.network } };
    expect(await verifyExactLocally(permit2, requirements, NOW_MS)).toBeUndefined();
    for (const payload of [null, 'x', { authorization: 'x', signature: 1 }, { authorization: { from: 'nope' }, signature: `0x${'11'.repeat(65)}` }]) {
      expect(await verifyExactLocally({ payload, accepted: { scheme: 'exact', network: requirements.network } }, requirements, NOW_MS)).toBeUndefined();
    }
    // A signature whose s is not a curve value cannot be recovered: undefined, not an exception.
    const bad = await signed();
    bad.payload.signature = `0x${'ff'.repeat(65)}`;
    expect(await check(bad)).toBeUndefined();
  });
});
