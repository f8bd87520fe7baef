// The batch-settlement client signs each channel's next voucher ahead (issue 37, `batch.presign`, default on): the
// voucher a call sends was signed before that call began (the wallet's signatures and the calls are logged in the
// order they happened), marketgate admits it, and the channel is charged exactly one price a call; with
// `presign: false` every voucher is signed inside its call, as before. A second process on the same channel
// resynchronises through the corrective 402 (what it signed ahead from the refused voucher is simply unused, the
// next call's comes from the new base), and kept terms with another price (paid once more at the server's) leave
// the spend accounting and the channel's charge exact.
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { BatchSettlementEvmScheme, computeChannelId, InMemoryClientChannelStorage } from '@x402/evm/batch-settlement/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CallResult, type ClientOptions } from '../../src/client/index.ts';
import { encodePayment } from '../../src/client/payer.ts';
import { PresigningSigner, typedDataKey, type TypedData } from '../../src/client/presign.ts';
import { RememberingBatchScheme } from '../../src/client/voucher-scheme.ts';
import { startWorld, type World } from './world.ts';

let w: World;
const PRICE = '/v1/price?symbol=BTC';

beforeAll(async () => {
  w = await startWorld({ batch: true, payerIndex: 14 });
}, 60_000);

afterAll(async () => {
  await w?.close();
});

/** What happened, in order: call k began (a string), the wallet signed a voucher for this cumulative amount (a bigint). */
let log: (string | bigint)[] = [];
/**
 * The log with each voucher as `voucher +n`: its cumulative amount less `base` in prices ($0.001, 1,000 units). The
 * tests share one channel (one payer, one payee), so each counts from where the channel stood when it began.
 */
const relative = (base: bigint) => log.map((e) => (typeof e === 'string' ? e : `voucher ${e >= base ? '+' : ''}${(e - base) / 1000n}`));

/** The payer's wallet, logging each voucher it signs. */
const loggingWallet = () => {
  const account = privateKeyToAccount(w.payerKey);
  return {
    ...account,
    async signTypedData(typedData: Parameters<typeof account.signTypedData>[0]) {
      const signature = await account.signTypedData(typedData);
      if (typedData.primaryType === 'Voucher') log.push((typedData.message as { maxClaimableAmount: bigint }).maxClaimableAmount);
      return signature;
    },
  } as typeof account;
};

const client = (extra: Partial<ClientOptions> = {}) =>
  createClient({ baseUrl: w.base, wallet: loggingWallet(), assets: [w.asset], batch: { rpcUrl: w.chain.rpcUrl }, maxSpendUsd: 1, ...extra });

/** The cumulative amount of the voucher a call sent. */
const sentVoucher = (r: CallResult) => BigInt((decodePaymentSignatureHeader(r.payment!.signature).payload as { voucher: { maxClaimableAmount: string } }).voucher.maxClaimableAmount);
/** What the server says the channel has charged in all, after this call. */
const chargedCumulative = (r: CallResult) => BigInt((r.payment!.settle.extra as { channelState: { chargedCumulativeAmount: string } }).channelState.chargedCumulativeAmount);

async function calls(c: ReturnType<typeof client>, n: number) {
  const results = [];
  for (let k = 1; k <= n; k++) {
    log.push(`call ${k}`);
    results.push(await c.request('/v1/price', { symbol: 'BTC' }));
  }
  return results;
}

describe('batch.presign', () => {
  it('on (the default): each voucher after the first was signed before its call began; admitted; the charge exact', async () => {
    log = [];
    const start = await w.fx.balanceOf(w.payer.address);
    const c = client();
    const results = await calls(c, 5);
    // The first call's voucher goes with the deposit, signed in the call; from then on each call's voucher was
    // signed during the call before it (while its request was on the wire), and the next one during this one.
    expect(relative(0n)).toEqual(['call 1', 'voucher +1', 'voucher +2', 'call 2', 'voucher +3', 'call 3', 'voucher +4', 'call 4', 'voucher +5', 'call 5', 'voucher +6']);
    expect(results.map(sentVoucher)).toEqual([1000n, 2000n, 3000n, 4000n, 5000n]);
    expect(results.map((r) => [r.payment!.scheme, r.payment!.settle.success, r.payment!.chargedUsd])).toEqual(Array(5).fill(['batch-settlement', true, '0.001']));
    expect(results.map(chargedCumulative)).toEqual([1000n, 2000n, 3000n, 4000n, 5000n]);
    // The voucher signed ahead for a sixth call was never sent: not counted, not charged.
    expect(c.spending()).toEqual({ limitUsd: '1', spentUsd: '0.005', heldUsd: '0' });
    const closed = await c.close();
    expect(closed[0]?.refund).toMatchObject({ success: true, amount: String(100_000 - 5_000) });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(start - 5_000n);
  });

  it('off: every voucher is signed inside its own call, as before', async () => {
    log = [];
    const c = client({ batch: { rpcUrl: w.chain.rpcUrl, presign: false } });
    const results = await calls(c, 3);
    const base = sentVoucher(results[0]!) - 1000n;
    expect(relative(base)).toEqual(['call 1', 'voucher +1', 'call 2', 'voucher +2', 'call 3', 'voucher +3']);
    expect(results.map(chargedCumulative)).toEqual([1n, 2n, 3n].map((n) => base + n * 1000n));
    await c.close();
  });

  it('a second process on the channel: the corrective 402 resynchronises it, and from the new base it signs ahead again', async () => {
    log = [];
    const first = client();
    const base = chargedCumulative((await calls(first, 2))[1]!);
    log = [];
    // Another client of the same wallet knows only what the chain shows of the channel (what was claimed, less
    // than `base`): its first voucher is refused with the corrective 402, and the one it signed ahead from it is
    // never asked for; it signs from the channel's state (`base`) once more, and ahead from there.
    const second = client();
    const results = await calls(second, 3);
    expect(results[0]!.attempts).toBe(3);
    const [call1, refused, ahead, ...rest] = relative(base);
    expect([call1, ...rest]).toEqual(['call 1', 'voucher +1', 'voucher +2', 'call 2', 'voucher +3', 'call 3', 'voucher +4']);
    expect([refused, ahead]).toEqual([expect.stringMatching(/^voucher (-\d+|\+0)$/), expect.stringMatching(/^voucher (-\d+|\+[01])$/)]);
    expect(results.map(sentVoucher)).toEqual([1n, 2n, 3n].map((n) => base + n * 1000n));
    expect(results.map(chargedCumulative)).toEqual([1n, 2n, 3n].map((n) => base + n * 1000n));
    expect(second.spending()).toMatchObject({ spentUsd: '0.003', heldUsd: '0' });
    await second.close();
  });

  it('kept terms with another price: the server names its own, the call is paid once more at it; the charge stays exact', async () => {
    const c = client();
    await calls(c, 1);
    const real = decodePaymentRequiredHeader((await fetch(`${w.base}${PRICE}`)).headers.get('payment-required')!);
    const batch = real.accepts.find((a) => a.scheme === 'batch-settlement')!;
    // A document that says the route costs $0.0005: the next voucher (signed ahead at that price) is refused.
    c.learnTerms(openapi([{ ...batch, amount: '500' }], real));
    const stale = await c.request('/v1/price', { symbol: 'BTC' });
    expect(stale.payment).toMatchObject({ scheme: 'batch-settlement', amount: '1000', settle: { success: true } });
    const next = await c.request('/v1/price', { symbol: 'BTC' });
    expect(next.attempts).toBe(1);
    expect(chargedCumulative(next) - chargedCumulative(stale)).toBe(1000n);
    await c.close();
  });
});

describe('batch.presign, the option', () => {
  it('is true or false: anything else is a config error naming it', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', wallet: w.payerKey, batch: { presign: 'yes' as unknown as boolean } })).toThrow(
      expect.objectContaining({ kind: 'config', path: 'batch.presign' }),
    );
  });
});

describe('PresigningSigner', () => {
  const typed = (amount: bigint): TypedData => ({ domain: { name: 'x', chainId: 1 }, types: { V: [{ name: 'a', type: 'uint256' }] }, primaryType: 'V', message: { a: amount } });

  it('answers the typed data signed ahead with its signature, once; anything else is signed anew', async () => {
    const signed: bigint[] = [];
    const p = new PresigningSigner(async (t) => (signed.push((t.message as { a: bigint }).a), `0x${String((t.message as { a: bigint }).a)}`), 2);
    p.presign('channel', typed(2n));
    await new Promise((r) => setImmediate(r));
    expect(signed).toEqual([2n]);
    expect(await p.signTypedData({ message: { a: 2n }, primaryType: 'V', types: { V: [{ type: 'uint256', name: 'a' }] }, domain: { chainId: 1, name: 'x' } })).toBe('0x2');
    expect(signed).toEqual([2n]); // the same typed data, its keys in another order: the kept signature
    expect(await p.signTypedData(typed(2n))).toBe('0x2');
    expect(signed).toEqual([2n, 2n]); // used once, then signed anew
    expect(p.counts).toEqual({ presigned: 1, used: 1 });
  });

  it('keeps one signature per slot and at most `capacity` slots', () => {
    const p = new PresigningSigner(async () => '0x', 2);
    p.presign('a', typed(1n));
    p.presign('a', typed(2n));
    expect(p.size).toBe(1);
    p.presign('b', typed(1n));
    p.presign('c', typed(1n));
    expect(p.size).toBe(2);
    expect(typedDataKey(typed(1n))).not.toBe(typedDataKey(typed(2n)));
  });

  it('a background signature that failed is made again when asked for, its error reaching the caller', async () => {
    let fail = true;
    const p = new PresigningSigner(async () => {
      if (fail) throw new Error('wallet locked');
      return '0xok';
    });
    p.presign('a', typed(1n));
    await new Promise((r) => setImmediate(r));
    fail = false;
    expect(await p.signTypedData(typed(1n))).toBe('0xok');
  });
});

function openapi(accepts: PaymentRequired['accepts'], real: PaymentRequired) {
  return { paths: { '/v1/price': { get: { 'x-payment-info': { price: { mode: 'fixed', amount: '0.0005', currency: 'USD' }, protocols: [{ x402: { x402Version: 2, accepts, extensions: real.extensions } }] } } } } };
}

describe("the rest of a voucher call's own cost", () => {
  it("the payment header is the SDK's encoding, byte for byte (non-ASCII included)", () => {
    const payload = { x402Version: 2, payload: { voucher: { maxClaimableAmount: '1000' } }, resource: { url: 'u', description: 'prix en €, 価格' }, accepts: [] } as unknown as PaymentPayload;
    expect(encodePayment(payload)).toBe(encodePaymentSignatureHeader(payload));
  });

  it('a voucher alone is built as the SDK builds it, the channel id computed once; a deposit still goes to the SDK', async () => {
    const account = privateKeyToAccount(w.payerKey);
    const storage = new InMemoryClientChannelStorage();
    const scheme = new RememberingBatchScheme(account, storage, {});
    const requirements = decodePaymentRequiredHeader((await fetch(`${w.base}${PRICE}`)).headers.get('payment-required')!).accepts.find((a) => a.scheme === 'batch-settlement')!;
    const config = scheme.buildChannelConfig(requirements);
    const id = computeChannelId(config, requirements.network);
    expect(scheme.channelId(config, requirements.network)).toBe(id);
    expect(scheme.channelId(config, requirements.network)).toBe(id);
    // No state: the SDK's deposit payload (it asks the deposit strategy; none here, its default deposit).
    expect((await scheme.createPaymentPayload(2, requirements)).payload).toMatchObject({ type: 'deposit' });
    await storage.set(id.toLowerCase(), { balance: '100000', chargedCumulativeAmount: '7000' });
    const sdk = new BatchSettlementEvmScheme(account, { storage });
    const ours = await scheme.createPaymentPayload(2, requirements);
    expect(ours).toEqual(await sdk.createPaymentPayload(2, requirements));
    expect(ours.payload).toMatchObject({ type: 'voucher', voucher: { channelId: id, maxClaimableAmount: '8000' } });
    // The next voucher past the balance: a top-up, the SDK's.
    await storage.set(id.toLowerCase(), { balance: '8000', chargedCumulativeAmount: '7500' });
    expect((await scheme.createPaymentPayload(2, requirements)).payload).toMatchObject({ type: 'deposit' });
  });

  it('a paid answer’s channel state is taken in as the SDK’s hook takes it, with the remembered id; a refund’s goes to the SDK', async () => {
    const account = privateKeyToAccount(w.payerKey);
    const requirements = decodePaymentRequiredHeader((await fetch(`${w.base}${PRICE}`)).headers.get('payment-required')!).accepts.find((a) => a.scheme === 'batch-settlement')!;
    const ours = new InMemoryClientChannelStorage();
    const theirs = new InMemoryClientChannelStorage();
    const scheme = new RememberingBatchScheme(account, ours, {});
    const sdk = new BatchSettlementEvmScheme(account, { storage: theirs });
    const id = computeChannelId(scheme.buildChannelConfig(requirements), requirements.network).toLowerCase();
    const both = async (ctx: Parameters<NonNullable<typeof sdk.schemeHooks.onPaymentResponse>>[0]) => {
      await scheme.schemeHooks.onPaymentResponse!(ctx);
      await sdk.schemeHooks.onPaymentResponse!(ctx);
      expect(await ours.get(id)).toEqual(await theirs.get(id));
      return ours.get(id);
    };
    const voucher = { type: 'voucher', channelConfig: scheme.buildChannelConfig(requirements), voucher: { channelId: id, maxClaimableAmount: '0', signature: '0x' } };
    const paid = (cumulative: string, payload: unknown = voucher) => ({
      paymentPayload: { x402Version: 2, accepted: requirements, payload } as never,
      requirements,
      settleResponse: { success: true, transaction: '', network: requirements.network, extra: { chargedAmount: requirements.amount, channelState: { chargedCumulativeAmount: cumulative } } } as never,
    });
    const deposit = { type: 'deposit', deposit: { amount: '50000', authorization: {} }, voucher: voucher.voucher, channelConfig: voucher.channelConfig };
    expect(await both(paid(requirements.amount, deposit))).toEqual({ balance: '50000', chargedCumulativeAmount: requirements.amount });
    const two = String(2 * Number(requirements.amount));
    expect(await both(paid(two))).toEqual({ balance: '50000', chargedCumulativeAmount: two });
    // A cumulative amount that is not the next one changes nothing, for either.
    expect(await both(paid('999999'))).toEqual({ balance: '50000', chargedCumulativeAmount: two });
    // A refused settle changes nothing; a refund's answer is the SDK's (it derives the id itself).
    expect(await both({ ...paid(two), settleResponse: { success: false, errorReason: 'x', transaction: '', network: requirements.network } as never })).toEqual({ balance: '50000', chargedCumulativeAmount: two });
    expect(await both({ ...paid(two, { type: 'refund', channelConfig: voucher.channelConfig, voucher: voucher.voucher, amount: '10000' }), settleResponse: { success: true, transaction: '0x1', network: requirements.network } as never })).toEqual({
      balance: '40000',
      chargedCumulativeAmount: two,
    });
  });
});
