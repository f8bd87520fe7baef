// voucher-check.ts, the fast check of a repeat voucher in front of @x402/evm's own, and voucher-lane.ts, the lane that
// takes a repeat voucher without the SDK's per-call work: the digest is the SDK's; each admits the next voucher of a
// channel the SDK accepted (no viem recovery, no facilitator) and leaves everything else to the SDK unchanged: a first
// voucher, a forged signature (refused, nothing charged), a high-s signature, a stale amount. The lane serves unless
// X402_SIGNING_KEY is set (a receipt is the SDK's to sign); the fast check then serves in its place. Through the real
// server over the local chain and facilitator, with the stock @x402/fetch batch-settlement client.
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, toClientEvmSigner, voucherTypes } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { getAddress, hashTypedData, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { voucherDigest } from '../../src/payments/schemes/batch-settlement/voucher-check.ts';
import { accountAt, listeningApp, paidWorldEnv, startPaidWorld, tamperingFetch, type PaidWorld } from './world.ts';

const PATH = '/v1/price?symbol=BTC';
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

describe('the voucher digest', () => {
  it("is the SDK's EIP-712 hash of the voucher, for any chain and amount", () => {
    for (const [chainId, amount] of [[8453, 1000n], [31337, 123_456_789n], [84532, 2n ** 128n - 1n]] as const) {
      const channelId = `0x${'ab'.repeat(32)}` as Hex;
      const sdk = hashTypedData({
        domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: getAddress(BATCH_SETTLEMENT_ADDRESS) },
        types: voucherTypes,
        primaryType: 'Voucher',
        message: { channelId, maxClaimableAmount: amount },
      });
      expect(voucherDigest(channelId, amount, chainId)).toBe(sdk);
    }
  });
});

// One chain and facilitator for both paths (a second world in the same file is refused its first deposit), a server
// and a payer each.
let world: PaidWorld;
beforeAll(async () => {
  world = await startPaidWorld({ payerIndex: 30, payToIndex: 31, fund: 0n, batch: true, chain: { allowBlocksWithSameTimestamp: true }, facilitator: { batch: { authorizerIndex: 32 } } });
}, 60_000);
afterAll(async () => {
  await world?.close();
});

describe.each([
  { path: 'lane' as const, payer: 30, env: {} as Record<string, string> },
  { path: 'fast' as const, payer: 34, env: { X402_SIGNING_KEY: `0x${'5a'.repeat(32)}` } },
])('a repeat voucher through the server ($path)', ({ path, payer, env }) => {
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    const listening = await listeningApp({ ...paidWorldEnv(world), X402_BATCH_SETTLEMENT: 'true', ...env });
    app = listening.app;
    url = `${listening.base}${PATH}`;
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it('admits the next voucher itself, leaves a forged, a high-s and a first voucher to the SDK, and charges exactly', async () => {
    const account = accountAt(payer);
    await world.fx.mint(account.address, 1_000_000n);
    const client = new x402Client().register(world.chain.network, new BatchClient(toClientEvmSigner(account, world.chain.publicClient)));
    client.setSpendControls({ allowedAssets: [{ network: world.chain.network, asset: world.fx.usdc, maxAmountPerPayment: '100000' }] });
    // The next paid request's voucher changed before it is sent (tampering.next), and the status each changed one got.
    const tampering = tamperingFetch();
    const tampered = tampering.statuses;
    const pay = wrapFetchWithPayment(tampering.fetch, client);
    // How many repeat vouchers the path under test admitted (the other one admits none), and how many went to the SDK.
    const checks = () => {
      const c = app.x402Batch!.voucherChecks();
      expect(path === 'lane' ? c.fast : c.lane).toBe(0);
      return { fast: c[path], passed: c.passed };
    };
    const voucherOf = (p: PaymentPayload) => (p.payload as { voucher: { channelId: Hex; maxClaimableAmount: string; signature: Hex } }).voucher;
    // Every answered call, and the channel's cumulative charge its PAYMENT-RESPONSE reports.
    let answered = 0;
    let channelId: Hex | undefined;
    const call = async () => {
      const res = await pay(url);
      if (res.status !== 200) return { status: res.status, cumulative: undefined };
      answered++;
      const state = (decodePaymentResponseHeader(res.headers.get('payment-response')!).extra as { channelState: { channelId: Hex; chargedCumulativeAmount: string } }).channelState;
      channelId = state.channelId;
      return { status: 200, cumulative: BigInt(state.chargedCumulativeAmount) };
    };

    // The deposit, then the first voucher (the SDK checks it and its channel becomes known), then fast ones.
    expect(await call()).toEqual({ status: 200, cumulative: 1000n });
    expect(await call()).toEqual({ status: 200, cumulative: 2000n });
    expect(checks().fast).toBe(0);
    for (let i = 3; i <= 6; i++) expect(await call()).toEqual({ status: 200, cumulative: BigInt(i) * 1000n });
    expect(checks().fast).toBe(4);

    // The next voucher signed by someone else: not the fast check's; the SDK refuses it, nothing is charged.
    const forged = await accountAt(33).signTypedData({
      domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: world.chain.chain.id, verifyingContract: getAddress(BATCH_SETTLEMENT_ADDRESS) },
      types: voucherTypes,
      primaryType: 'Voucher',
      message: { channelId: channelId!, maxClaimableAmount: 7000n },
    });
    tampering.next((p) => void (voucherOf(p).signature = forged));
    const beforeForged = checks();
    await call(); // the stock client may pay again with its own signature after the refusal
    expect(tampered).toEqual([402]);
    expect(checks().fast).toBe(beforeForged.fast);
    expect(checks().passed).toBeGreaterThan(beforeForged.passed);

    // The next voucher with s mirrored (n - s, v flipped): valid ECDSA that the channel contract's recovery refuses;
    // the fast check leaves it to the SDK, whatever the SDK then decides.
    tampering.next((p) => {
      const v = voucherOf(p);
      const s = BigInt(`0x${v.signature.slice(66, 130)}`);
      const flipped = parseInt(v.signature.slice(130), 16) === 27 ? '1c' : '1b';
      v.signature = `${v.signature.slice(0, 66)}${(N - s).toString(16).padStart(64, '0')}${flipped}` as Hex;
    });
    const beforeHighS = checks();
    await call();
    expect(tampered).toHaveLength(2);
    expect(checks().fast).toBe(beforeHighS.fast);

    // Afterwards the next voucher is fast again, and the channel's charge is the price times the answered calls.
    const last = checks().fast;
    const { cumulative } = await call();
    expect(checks().fast).toBe(last + 1);
    expect(cumulative).toBe(BigInt(answered) * 1000n);
  });
});
