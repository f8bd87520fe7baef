// A repeat voucher for an answer the server remembers (edge/answer-memo.ts) is paid for and answered in the access
// hook, without the route (access-control.ts → the gate's payForAnswer): verified for the matched route and settled
// exactly as on the full path — PAYMENT-RESPONSE, private Cache-Control, the charge in the channel and the ledger,
// the answer kept for a retry of the same voucher — with the same headers the full path writes. Any other payment
// (the deposit that opens the channel) takes the full path.
import { decodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { createClient, type Client } from '../../src/client/index.ts';
import { LossyProxy } from '../client/proxy.ts';
import { startWorld, type World } from '../client/world.ts';
import { accountAt } from './world.ts';

let w: World;
let proxy: LossyProxy;

beforeAll(async () => {
  // Last prices kept for a minute: the opening call waits for its deposit's block, longer than the default 5 s.
  w = await startWorld({ batch: true, payerIndex: 14, env: { CACHE_TTL_PRICE_S: '60' } });
  proxy = await new LossyProxy(w.base).start();
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  await w?.close();
});

/**
 * A payer of its own (mnemonic index `index`) with a client whose channel is open and past its first voucher (the
 * ones the SDK checks), so its next voucher is the scheme's lane's; `routeRuns` counts the route's cache reads.
 */
async function onOpenChannel(index: number, body: (c: Client, routeRuns: MockInstance) => Promise<void>): Promise<void> {
  const payer = accountAt(index);
  await w.fx.mint(payer.address, 1_000_000n);
  const c = createClient({ baseUrl: proxy.url, wallet: `0x${Buffer.from(payer.getHdKey().privateKey!).toString('hex')}`, assets: [w.asset], maxSpendUsd: 0.5 });
  const routeRuns = vi.spyOn(w.app.services.cache, 'getOrLoad');
  try {
    for (let i = 0; i < 2; i++) await c.request('/v1/price', { symbol: 'BTC' });
    await body(c, routeRuns);
  } finally {
    proxy.decide = () => ({ kind: 'forward' });
    routeRuns.mockRestore();
    await c.close();
  }
}

/** Headers that differ per answer by design. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'content-length', 'payment-response', 'keep-alive', 'connection']);
const sameHeaders = (h: Headers) => Object.fromEntries([...h.entries()].filter(([k]) => !PER_ANSWER.has(k)));

describe('a repeat voucher for a remembered answer', () => {
  it('is verified, charged and answered without the route, with the headers the route writes; a retry of it gets the same answer, charged once', async () => {
    const c = createClient({ baseUrl: proxy.url, wallet: w.payerKey, assets: [w.asset], maxSpendUsd: 0.5 });
    const routeRuns = vi.spyOn(w.app.services.cache, 'getOrLoad');
    try {
      // The deposit's call takes the full path (its authorization moves money on chain), and its answer is remembered.
      const opening = await c.request('/v1/price', { symbol: 'BTC' });
      expect(opening.payment).toMatchObject({ scheme: 'batch-settlement', settle: { success: true } });
      expect(routeRuns).toHaveBeenCalledTimes(1);
      expect(w.app.services.answers.holds('/v1/price', '/v1/price?symbol=BTC')).toBe(true);

      // The channel's first voucher too: the scheme's lane takes a voucher equal to one the SDK accepted but for its per-call parts.
      const first = await c.request('/v1/price', { symbol: 'BTC' });
      expect(first.payment).toMatchObject({ scheme: 'batch-settlement', settle: { success: true } });
      expect(routeRuns).toHaveBeenCalledTimes(2);

      proxy.seen.length = 0;
      const fast = await c.request('/v1/price', { symbol: 'BTC' });
      expect(routeRuns, 'the route did not run').toHaveBeenCalledTimes(2);
      expect(fast.status).toBe(200);
      expect(fast.payment).toMatchObject({ scheme: 'batch-settlement', settle: { success: true } });
      const settled = decodePaymentResponseHeader(fast.headers.get('payment-response')!);
      expect(settled).toMatchObject({ success: true, network: w.chain.network });
      expect(fast.headers.get('cache-control')).toMatch(/private/);
      expect(fast.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect((fast.envelope as { data: unknown }).data).toEqual((opening.envelope as { data: unknown }).data);

      // A retry of the very same voucher (its answer lost on the way): the answer kept for it, nothing charged again.
      const voucher = proxy.seen.find((r) => r.paymentSignature)!.paymentSignature!;
      const retry = await fetch(`${w.base}/v1/price?symbol=BTC`, { headers: { 'payment-signature': voucher } });
      expect(retry.status).toBe(200);
      expect(await retry.text()).toBe(fast.body);
      expect(retry.headers.get('payment-response')).toBe(fast.headers.get('payment-response'));
      expect(routeRuns).toHaveBeenCalledTimes(2);

      // The same call on the full path (nothing remembered): the same headers.
      w.app.services.answers.clear();
      const full = await c.request('/v1/price', { symbol: 'BTC' });
      expect(routeRuns).toHaveBeenCalledTimes(3);
      expect(full.payment).toMatchObject({ settle: { success: true } });
      expect(sameHeaders(fast.headers)).toEqual(sameHeaders(full.headers));

      // Four calls charged, each once: the channel's cumulative amount and the ledger's rows say so.
      const channel = (r: typeof fast) => decodePaymentResponseHeader(r.headers.get('payment-response')!).extra as { chargedAmount: string; channelState: { chargedCumulativeAmount: string } };
      expect([opening, first, fast, full].map((r) => [channel(r).chargedAmount, channel(r).channelState.chargedCumulativeAmount])).toEqual([
        ['1000', '1000'],
        ['1000', '2000'],
        ['1000', '3000'],
        ['1000', '4000'],
      ]);
      const rows = async () =>
        (await w.app.services.paymentRecords.list({})).filter((r) => r.payer?.toLowerCase() === w.payer.address.toLowerCase() && r.scheme === 'batch-settlement').map((r) => [r.status, r.settled_amount]);
      await expect.poll(rows, { timeout: 5000 }).toEqual([
        ['settled', '1000'],
        ['settled', '1000'],
        ['settled', '1000'],
        ['settled', '1000'],
      ]);
    } finally {
      routeRuns.mockRestore();
      await c.close();
    }
  });

  it('a remembered answer gone by the time its voucher is admitted: the route makes it for the grant, charged once; a forged voucher takes the full path and is refused, nothing charged', async () => {
    await onOpenChannel(33, async (c, routeRuns) => {
      const runs = routeRuns.mock.calls.length;
      expect(w.app.services.answers.holds('/v1/price', '/v1/price?symbol=BTC')).toBe(true);
      // Held when the payment's check starts, past its time once the voucher is admitted.
      const gone = vi.spyOn(w.app.services.answers, 'serve').mockReturnValueOnce(undefined);
      const late = await c.request('/v1/price', { symbol: 'BTC' });
      gone.mockRestore();
      expect(late.status).toBe(200);
      expect(routeRuns.mock.calls.length, 'the route made the answer').toBe(runs + 1);
      const extra = (r: typeof late) => decodePaymentResponseHeader(r.headers.get('payment-response')!).extra as { chargedAmount: string; channelState: { chargedCumulativeAmount: string } };
      expect([extra(late).chargedAmount, extra(late).channelState.chargedCumulativeAmount]).toEqual(['1000', '3000']);

      // The next voucher forged from the last one: the next amount, a signature that is not the payer's. Not the lane's
      // (its signer is not the channel's), refused by the SDK.
      proxy.seen.length = 0;
      const next = await c.request('/v1/price', { symbol: 'BTC' });
      expect(extra(next).channelState.chargedCumulativeAmount).toBe('4000');
      const sent = JSON.parse(Buffer.from(proxy.seen.find((r) => r.paymentSignature)!.paymentSignature!, 'base64').toString());
      sent.payload.voucher.maxClaimableAmount = String(BigInt(sent.payload.voucher.maxClaimableAmount) + 1000n);
      const signature: string = sent.payload.voucher.signature;
      sent.payload.voucher.signature = `${signature.slice(0, 10)}${signature[10] === '0' ? '1' : '0'}${signature.slice(11)}`;
      const before = routeRuns.mock.calls.length;
      const forged = await fetch(`${w.base}/v1/price?symbol=BTC`, { headers: { 'payment-signature': Buffer.from(JSON.stringify(sent)).toString('base64') } });
      expect(forged.status).toBe(402);
      expect(await forged.json()).toMatchObject({ error: expect.any(String) });
      expect(routeRuns.mock.calls.length, 'no answer was made for it').toBe(before);
      // Nothing was charged for it: the next right voucher is charged from 4000.
      const after = await c.request('/v1/price', { symbol: 'BTC' });
      expect([extra(after).chargedAmount, extra(after).channelState.chargedCumulativeAmount]).toEqual(['1000', '5000']);
    });
  });

  it('one voucher sent five times at once: admitted and charged once, every copy gets the answer it paid for, none runs the route', async () => {
    await onOpenChannel(34, async (c, routeRuns) => {
      // The next voucher, kept from the server: the proxy answers its request itself.
      proxy.seen.length = 0;
      proxy.decide = (r) => (r.paymentSignature ? { kind: 'answer', status: 400, headers: { 'content-type': 'application/json' }, body: '{"error":"held back"}' } : { kind: 'forward' });
      await c.request('/v1/price', { symbol: 'BTC' }).catch(() => undefined);
      proxy.decide = () => ({ kind: 'forward' });
      const voucher = proxy.paid().at(-1)!.paymentSignature!;
      const runs = routeRuns.mock.calls.length;
      const copies = await Promise.all(Array.from({ length: 5 }, () => fetch(`${w.base}/v1/price?symbol=BTC`, { headers: { 'payment-signature': voucher } })));
      expect(copies.map((r) => r.status)).toEqual(Array(5).fill(200));
      const bodies = await Promise.all(copies.map((r) => r.text()));
      expect(new Set(bodies).size).toBe(1);
      expect(new Set(copies.map((r) => r.headers.get('payment-response'))).size).toBe(1);
      const state = (decodePaymentResponseHeader(copies[0]!.headers.get('payment-response')!).extra as { channelState: { chargedCumulativeAmount: string } }).channelState;
      expect(state.chargedCumulativeAmount).toBe('3000');
      expect(routeRuns.mock.calls.length).toBe(runs);
    });
  });
});
