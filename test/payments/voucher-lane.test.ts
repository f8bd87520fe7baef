// voucher-lane.ts (core/lane.ts): a repeat voucher admitted and charged without the SDK's per-call work. Its answer is
// the SDK's answer (the same PAYMENT-RESPONSE, the channel's charge one price further), it takes only a payload equal
// to the one the SDK accepted but for the voucher's amount and signature and the payment identifier, and anything else
// is left to the SDK (which decides it as before). Through the real server over the local chain and facilitator, with
// the stock @x402/fetch batch-settlement client.
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { equalButPerCall } from '../../src/payments/schemes/batch-settlement/voucher-lane.ts';
import { accountAt, listeningApp, paidWorldEnv, startPaidWorld, tamperingFetch, type PaidWorld } from './world.ts';

const PATH = '/v1/price?symbol=BTC';

describe('equalButPerCall', () => {
  const payload = (amount: string, signature: string, id?: string, extra?: Record<string, unknown>) =>
    ({
      x402Version: 2,
      accepted: { scheme: 'batch-settlement', network: 'eip155:1', amount: '1000', asset: '0xa', payTo: '0xb', maxTimeoutSeconds: 60, extra: { name: 'USDC', version: '2' } },
      payload: { type: 'voucher', channelConfig: { payer: '0xc' }, voucher: { channelId: '0xd', maxClaimableAmount: amount, signature } },
      ...(id ? { extensions: { 'payment-identifier': { info: { id, required: false } } } } : {}),
      ...extra,
    }) as unknown as PaymentPayload;

  it('ignores the amount, the signature and the payment identifier, and nothing else', () => {
    expect(equalButPerCall(payload('1000', '0x1', 'id-aaaaaaaaaaaaaaaa'), payload('2000', '0x2', 'id-bbbbbbbbbbbbbbbb'))).toBe(true);
    expect(equalButPerCall(payload('1000', '0x1'), payload('2000', '0x2', 'id-bbbbbbbbbbbbbbbb'))).toBe(false); // an identifier added
    expect(equalButPerCall(payload('2000', '0x2', 'id-bbbbbbbbbbbbbbbb'), payload('1000', '0x1'))).toBe(false); // … or left out
    expect(equalButPerCall(payload('1000', '0x1', undefined, { tags: ['a', 'b'] }), payload('1000', '0x1', undefined, { tags: ['a'] }))).toBe(false);
    expect(equalButPerCall(payload('1000', '0x1', undefined, { tags: ['a'] }), payload('1000', '0x1', undefined, { tags: ['a', 'b'] }))).toBe(false);
    expect(equalButPerCall(payload('1000', '0x1', undefined, { tags: ['a', { b: 1 }] }), payload('1000', '0x1', undefined, { tags: ['a', { b: 1 }] }))).toBe(true);
    expect(equalButPerCall(payload('1000', '0x1', undefined, { note: undefined }), payload('1000', '0x1'))).toBe(false); // a key, even undefined
    expect(equalButPerCall(payload('1000', '0x1'), payload('1000', '0x1', undefined, { resource: { url: 'x' } }))).toBe(false);
    const other = payload('1000', '0x1');
    (other.accepted as { amount: string }).amount = '1';
    expect(equalButPerCall(payload('1000', '0x1'), other)).toBe(false);
    const config = payload('1000', '0x1');
    (config.payload as { channelConfig: Record<string, unknown> }).channelConfig.salt = '0x1';
    expect(equalButPerCall(payload('1000', '0x1'), config)).toBe(false);
    const channel = payload('1000', '0x1');
    (channel.payload as { voucher: { channelId: string } }).voucher.channelId = '0xe';
    expect(equalButPerCall(payload('1000', '0x1'), channel)).toBe(false);
    expect(equalButPerCall(payload('1000', '0x1'), payload('1000', 1 as unknown as string))).toBe(false); // a signature that is no string
    // A per-call name anywhere else, or a name an object inherits, is compared in full.
    expect(equalButPerCall(payload('1000', '0x1', undefined, { signature: '0x1' }), payload('1000', '0x1', undefined, { signature: '0x2' }))).toBe(false);
    expect(equalButPerCall(payload('1000', '0x1', undefined, { constructor: { a: 1 } }), payload('1000', '0x1', undefined, { constructor: { a: 2 } }))).toBe(false);
    expect(equalButPerCall(payload('1000', '0x1', undefined, { toString: 'x' }), payload('1000', '0x1', undefined, { toString: 'y' }))).toBe(false);
  });
});

describe('a repeat voucher through the lane', () => {
  let world: PaidWorld;
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    world = await startPaidWorld({ payerIndex: 40, payToIndex: 41, fund: 0n, batch: true, chain: { allowBlocksWithSameTimestamp: true }, facilitator: { batch: { authorizerIndex: 42 } } });
    const listening = await listeningApp({ ...paidWorldEnv(world), X402_BATCH_SETTLEMENT: 'true' });
    app = listening.app;
    url = `${listening.base}${PATH}`;
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await world?.close();
  });

  it("answers as the SDK answers, and leaves a payload that differs anywhere else to the SDK", async () => {
    const account = accountAt(40);
    await world.fx.mint(account.address, 1_000_000n);
    const client = new x402Client().register(world.chain.network, new BatchClient(toClientEvmSigner(account, world.chain.publicClient)));
    client.setSpendControls({ allowedAssets: [{ network: world.chain.network, asset: world.fx.usdc, maxAmountPerPayment: '100000' }] });
    const tampering = tamperingFetch();
    const pay = wrapFetchWithPayment(tampering.fetch, client);
    const counts = () => app.x402Batch!.voucherChecks();
    const call = async () => {
      const res = await pay(url);
      expect(res.status).toBe(200);
      return decodePaymentResponseHeader(res.headers.get('payment-response')!);
    };

    await call(); // the deposit
    const sdk = await call(); // the first voucher: the SDK's
    expect(counts()).toMatchObject({ lane: 0 });
    const lane = await call();
    expect(counts()).toMatchObject({ lane: 1, fast: 0 });
    // The SDK's answer, one price further: every field, in the same shape.
    const state = (sdk.extra as { channelState: Record<string, unknown> }).channelState;
    expect(lane).toEqual({ ...sdk, extra: { ...sdk.extra, channelState: { ...state, chargedCumulativeAmount: '3000' } } });
    expect(state.chargedCumulativeAmount).toBe('2000');

    // A payload that differs elsewhere (here, what it says of the resource) is the SDK's to decide.
    const before = counts();
    tampering.next((p) => void (p.resource = { ...p.resource!, description: 'something else' }));
    const elsewhere = await call();
    expect(counts().lane).toBe(before.lane);
    expect(counts().passed + counts().fast).toBeGreaterThan(before.passed + before.fast);
    expect((elsewhere.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount).toBe('4000');

    // And the next voucher is the lane's again.
    const next = await call();
    expect(counts().lane).toBe(before.lane + 1);
    expect((next.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount).toBe('5000');
  });
});
