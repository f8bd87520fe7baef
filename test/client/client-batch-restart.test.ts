// A new process on a wallet whose channel an earlier one refunded (close()): the server has forgotten the channel,
// the chain has not, and the new process's first voucher starts below what the chain has claimed. Without an RPC
// (`batch.rpcUrl`) the scheme cannot learn where to start: the call is paid `exact` instead, as are the next calls
// to that payee (one exchange each); with one, the scheme reads the channel on chain and batch settlement goes on.
// On the way: the first process's vouchers leave the Bazaar echo out of their payment header (its deposit keeps it),
// and the server's lane takes them (voucher-lane.ts).
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ClientOptions } from '../../src/client/index.ts';
import { startWorld, type World } from './world.ts';

let w: World;
beforeAll(async () => {
  w = await startWorld({ batch: true, payerIndex: 12 });
}, 60_000);
afterAll(async () => {
  await w?.close();
});

const client = (extra: Partial<ClientOptions> = {}) => createClient({ baseUrl: w.base, wallet: w.payerKey, assets: [w.asset], batch: true, maxSpendUsd: 1, ...extra });
const price = (c: ReturnType<typeof client>) => c.request('/v1/price', { symbol: 'BTC' });

describe('batch settlement after another process refunded the channel', () => {
  it('pays exact without an RPC, and goes on with batch settlement with one', async () => {
    // Every payment header sent: a voucher's leaves the Bazaar echo out (no facilitator sees it); a deposit's keeps it.
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const h = new Headers(init?.headers).get('payment-signature');
      if (h) sent.push(h);
      return fetch(input, init);
    };
    const first = client({ fetch: recording });
    const lane = () => w.app.x402Batch!.voucherChecks().lane;
    const laneBefore = lane();
    for (let i = 0; i < 3; i++) expect((await price(first)).payment?.scheme).toBe('batch-settlement');
    // The deposit, the first voucher (the SDK's), then the lane's (voucher-lane.ts): this client's vouchers, the
    // Bazaar echo left out (payer.ts), are what the lane takes.
    expect(lane() - laneBefore).toBe(1);
    const payloads = sent.map((h) => ({ length: h.length, payload: decodePaymentSignatureHeader(h) }));
    expect(payloads.map((p) => (p.payload.payload as { type: string }).type)).toEqual(['deposit', 'voucher', 'voucher']);
    expect(Object.keys(payloads[0]!.payload.extensions ?? {})).toContain('bazaar');
    for (const p of payloads.slice(1)) {
      expect(Object.keys(p.payload.extensions ?? {})).toEqual(['payment-identifier']);
      expect(p.length).toBeLessThan(payloads[0]!.length / 2);
    }
    const [closed] = await first.close();
    expect(closed?.refund).toMatchObject({ success: true, extra: { channelState: { totalClaimed: '3000' } } });

    // No RPC: the voucher from zero is refused (below what the chain claimed); the call is paid exact, once.
    const blind = client();
    const refused = await price(blind);
    expect(refused.status).toBe(200);
    expect(refused.payment).toMatchObject({ scheme: 'exact', settle: { success: true } });
    expect(refused.attempts).toBe(3); // the 402, the refused voucher, the exact payment
    const next = await price(blind);
    expect(next.payment?.scheme).toBe('exact');
    expect(next.attempts).toBe(1);
    expect(blind.spending().spentUsd).toBe('0.002');

    // With an RPC, the scheme reads the channel on chain and starts its vouchers where the chain has claimed.
    const reading = client({ batch: { rpcUrl: w.chain.rpcUrl } });
    const resumed = await price(reading);
    expect(resumed.payment).toMatchObject({ scheme: 'batch-settlement', settle: { success: true, extra: { channelState: { chargedCumulativeAmount: '4000' } } } });
    expect((await price(reading)).payment).toMatchObject({ scheme: 'batch-settlement', settle: { extra: { channelState: { chargedCumulativeAmount: '5000' } } } });
    await reading.close();
  });
});
