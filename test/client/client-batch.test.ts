// The client paying with batch-settlement whenever offered (`batch: { rpcUrl }`; marketgate with
// X402_BATCH_SETTLEMENT on the local chain, the batch contracts at the SDK's addresses): one deposit bounded by
// maxSpendUsd, then a voucher
// per call (no facilitator call, no transaction), a lost voucher answer resent unchanged and charged once,
// concurrent calls taken one at a time, a second process resynchronised by the corrective 402, the unused deposit
// refunded. With `batch: false`, the client pays exact. The server signs offers and receipts (X402_SIGNING_KEY): the
// batch client verifies the receipt of every call, a voucher's (no transaction of its own) and a replayed one's.
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { extractOffersFromPaymentRequired, verifyOfferSignatureJWS, type JWSSignedOffer } from '@x402/extensions/offer-receipt';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ClientOptions } from '../../src/client/index.ts';
import { LossyProxy } from './proxy.ts';
import { startWorld, type World } from './world.ts';
import { MNEMONIC } from '../payments/x402/chain.ts';
import { publishedSigningKey } from '../../src/payments/core/signing-key.ts';

const SIGNING_KEY = `0x${'4b'.repeat(32)}` as const;

let w: World;
let proxy: LossyProxy;
const PRICE = '/v1/price?symbol=BTC';

beforeAll(async () => {
  w = await startWorld({ batch: true, payerIndex: 10, env: { X402_SIGNING_KEY: SIGNING_KEY } });
  proxy = await new LossyProxy(w.base).start();
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  await w?.close();
});

const batchClient = (extra: Partial<ClientOptions> = {}) =>
  createClient({ baseUrl: w.base, wallet: w.payerKey, assets: [w.asset], batch: { rpcUrl: w.chain.rpcUrl }, verifyReceipts: true, ...extra });

/** The payer's channel with marketgate (the facilitator's receiver authorizer, the default withdraw delay). */
const channel = () =>
  w.bs!.channel(
    computeChannelId(
      {
        payer: w.payer.address,
        payerAuthorizer: w.payer.address,
        receiver: w.payTo,
        receiverAuthorizer: mnemonicToAccount(MNEMONIC, { addressIndex: 4 }).address,
        token: w.fx.usdc as `0x${string}`,
        withdrawDelay: 900,
        salt: `0x${'00'.repeat(32)}`,
      },
      w.chain.network,
    ),
  );

describe('batch-settlement, opted in', () => {
  it('the 402 signs an offer for each scheme, exact and batch-settlement', async () => {
    const required = decodePaymentRequiredHeader((await fetch(`${w.base}${PRICE}`)).headers.get('payment-required')!);
    expect(required.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    const offers = extractOffersFromPaymentRequired(required) as JWSSignedOffer[];
    const payloads = await Promise.all(offers.map((o) => verifyOfferSignatureJWS(o, publishedSigningKey(SIGNING_KEY).jwk)));
    expect(payloads.map((p) => p.scheme)).toEqual(['exact', 'batch-settlement']);
  });

  it('with batch: false, the client pays exact although batch-settlement is offered', async () => {
    const result = await createClient({ baseUrl: w.base, wallet: w.payerKey, assets: [w.asset], batch: false }).request('/v1/price', { symbol: 'BTC' });
    expect(result.payment).toMatchObject({ scheme: 'exact', chargedUsd: '0.001' });
    expect(result.payment!.settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('a deposit no larger than maxSpendUsd leaves, then vouchers: no facilitator call, no transaction; lost answers resent; refund', async () => {
    const start = await w.fx.balanceOf(w.payer.address);
    // marketgate asks for $0.10 (X402_BATCH_DEPOSIT); this client may spend $0.05, so it deposits $0.05.
    const c = batchClient({ maxSpendUsd: 0.05, baseUrl: proxy.url });
    const first = await c.request('/v1/price', { symbol: 'BTC' });
    expect(first.payment).toMatchObject({ scheme: 'batch-settlement', amount: '1000', chargedUsd: '0.001', settle: { success: true, amount: '50000' } });
    // The deposit's transaction is the one the receipt names.
    expect(first.receipt).toMatchObject({ verified: true, payload: { transaction: first.payment!.settle.transaction } });
    expect(await channel()).toEqual({ balance: 50_000n, totalClaimed: 0n });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(start - 50_000n);

    const facilitatorCalls = { ...w.fac.state.calls };
    const block = await w.chain.publicClient.getBlockNumber();
    // The second call's answer is lost: the same voucher is sent again and charged once.
    let dropped = false;
    proxy.decide = (r) => (r.paymentSignature && !dropped ? ((dropped = true), { kind: 'drop-after' }) : { kind: 'forward' });
    const second = await c.request('/v1/price', { symbol: 'BTC' });
    const paid = proxy.paid();
    expect(paid.at(-1)!.paymentSignature).toBe(paid.at(-2)!.paymentSignature);
    expect(second.payment).toMatchObject({ scheme: 'batch-settlement', settle: { success: true, transaction: '', extra: { chargedAmount: '1000', channelState: { chargedCumulativeAmount: '2000' } } } });
    // A voucher has no transaction of its own: its receipt names none; it binds the answer's digest all the same.
    expect(second.receipt).toMatchObject({ verified: true, contentDigest: second.contentDigest, payload: { payer: w.payer.address } });
    expect(second.receipt!.payload.transaction).toBeUndefined();
    // Three at once are taken one at a time (one channel, one call at a time), each charged once.
    const three = await Promise.all([1, 2, 3].map(() => c.request('/v1/price', { symbol: 'BTC' })));
    const cumulative = three.map((r) => (r.payment!.settle.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount);
    expect(cumulative.sort()).toEqual(['3000', '4000', '5000']);
    expect(w.fac.state.calls).toEqual(facilitatorCalls);
    expect(await w.chain.publicClient.getBlockNumber()).toBe(block);
    expect(c.spending()).toEqual({ limitUsd: '0.05', spentUsd: '0.005', heldUsd: '0' });

    // Another process with the same wallet knows nothing of the channel: its first voucher is refused with the
    // scheme's corrective 402 (the channel's state), which says the payment was not taken; it signs once more.
    const other = batchClient();
    const signed = proxy.paid().length;
    const sixth = await other.request('/v1/price', { symbol: 'BTC' });
    expect(sixth.attempts).toBe(3); // the 402, the refused voucher, the new one
    expect(sixth.payment).toMatchObject({ settle: { success: true, extra: { channelState: { chargedCumulativeAmount: '6000' } } } });
    expect(proxy.paid()).toHaveLength(signed); // (it called marketgate directly)
    expect(other.spending()).toMatchObject({ spentUsd: '0.001', heldUsd: '0' });

    // The unused deposit back: all but the six calls charged.
    const refund = await other.refund(PRICE);
    expect(refund).toMatchObject({ success: true, amount: String(50_000 - 6_000) });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(start - 6_000n);
  });

  it('a deposit is refused before signing when maxSpendUsd leaves less than the call needs', async () => {
    const err = await batchClient({ maxSpendUsd: 0.0005 }).price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'MarketgateError', kind: 'spend-limit', charged: false });
  });
});
