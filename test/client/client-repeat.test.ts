// A repeat buyer's calls (issue 37): the client keeps a route's 402 terms and sends the next call's payment with its
// first request — one HTTP exchange per paid call after the first, counted at the server (a proxy in front of it
// sees every request) — whether `exact` or a batch-settlement voucher; a 402 in answer with other terms (kept terms
// that went stale) is paid once more with the new ones; terms read ahead from an OpenAPI document's x-payment-info
// skip even the first 402, marketgate's own /openapi.json included. `batch: 'auto'` (the default) opens a channel
// when maxSpendUsd leaves room for the deposit the server asks, pays `exact` otherwise, and close() asks for the
// unused deposit back.
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type ClientOptions } from '../../src/client/index.ts';
import { RouteTerms, validUntil } from '../../src/client/terms.ts';
import { accountAt } from '../payments/world.ts';
import { LossyProxy } from './proxy.ts';
import { startWorld, type World } from './world.ts';

let w: World;
let proxy: LossyProxy;
const PRICE = '/v1/price?symbol=BTC';

beforeAll(async () => {
  w = await startWorld({ batch: true, payerIndex: 12 });
  proxy = await new LossyProxy(w.base).start();
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  await w?.close();
});

beforeEach(() => {
  proxy.seen.length = 0;
});

const client = (extra: Partial<ClientOptions> = {}) => createClient({ baseUrl: proxy.url, wallet: w.payerKey, assets: [w.asset], ...extra });

/** The requests that reached marketgate for /v1/price, and those that carried a payment. */
const atServer = () => {
  const price = proxy.seen.filter((r) => r.path.startsWith('/v1/price'));
  return { requests: price.length, paid: price.filter((r) => r.paymentSignature).length };
};

/** The route's real 402 terms. */
const realTerms = async (): Promise<PaymentRequired> => decodePaymentRequiredHeader((await fetch(`${w.base}${PRICE}`)).headers.get('payment-required')!);

/** An OpenAPI document whose /v1/price operation carries `accepts` in its x-payment-info. */
const openapiWith = (accepts: PaymentRequired['accepts'], extensions?: unknown) => ({
  paths: { '/v1/price': { get: { 'x-payment-info': { price: { mode: 'fixed', amount: '0.001', currency: 'USD' }, protocols: [{ x402: { x402Version: 2, accepts, ...(extensions ? { extensions } : {}) } }] } } } },
});

describe('exact, terms kept', () => {
  it('three calls: four requests at the server (one 402), each call after the first a single paid exchange', async () => {
    const c = client({ batch: false });
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await c.request('/v1/price', { symbol: 'BTC' }));
    expect(results.map((r) => r.attempts)).toEqual([2, 1, 1]);
    expect(results.map((r) => r.payment?.scheme)).toEqual(['exact', 'exact', 'exact']);
    expect(results.every((r) => r.payment!.settle.transaction.startsWith('0x'))).toBe(true);
    expect(atServer()).toEqual({ requests: 4, paid: 3 });
    expect(c.spending()).toMatchObject({ spentUsd: '0.003', heldUsd: '0' });
  });

  it('terms read from an OpenAPI document: even the first call is one exchange', async () => {
    const c = client({ batch: false });
    const real = await realTerms();
    expect(c.learnTerms(openapiWith(real.accepts.filter((a) => a.scheme === 'exact'), real.extensions))).toBe(1);
    const r = await c.request('/v1/price', { symbol: 'BTC' });
    expect(r).toMatchObject({ attempts: 1, payment: { scheme: 'exact', chargedUsd: '0.001', settle: { success: true } } });
    expect(atServer()).toEqual({ requests: 1, paid: 1 });
  });

  it('kept terms gone stale: the 402 in answer names the new ones, paid once more; the refused payment was not taken', async () => {
    const c = client({ batch: false });
    const real = await realTerms();
    const exact = real.accepts.find((a) => a.scheme === 'exact')!;
    const before = await w.fx.balanceOf(w.payer.address);
    // What the document says is not what the server asks any more (another payee).
    c.learnTerms(openapiWith([{ ...exact, payTo: '0x000000000000000000000000000000000000dEaD' }]));
    const r = await c.request('/v1/price', { symbol: 'BTC' });
    expect(r).toMatchObject({ attempts: 2, payment: { scheme: 'exact', settle: { success: true } } });
    expect(atServer()).toEqual({ requests: 2, paid: 2 });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before - 1000n);
    // The refused authorization stays counted until the chain shows it expired unused (no rpcUrls here).
    expect(c.spending()).toMatchObject({ spentUsd: '0.001', heldUsd: '0.001' });
    // The next call uses the new terms at once.
    expect((await c.request('/v1/price', { symbol: 'BTC' })).attempts).toBe(1);
  });

  it('a refusal with the same terms is not paid again: one 402 after the payment, as before', async () => {
    const c = client({ batch: false, maxSpendUsd: 0.01 });
    await c.request('/v1/price', { symbol: 'BTC' });
    proxy.seen.length = 0;
    // The server refuses the next payment (as a payer without funds would be) and names the same terms.
    const real = await realTerms();
    proxy.decide = (r) => (r.paymentSignature ? { kind: 'answer', status: 402, headers: { 'payment-required': encode({ ...real, error: 'insufficient_funds' }) }, body: '{"error":"payment refused"}' } : { kind: 'forward' });
    try {
      const err = await c.request('/v1/price', { symbol: 'BTC' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'MarketgateError', kind: 'http', status: 402, charged: false });
    } finally {
      proxy.decide = () => ({ kind: 'forward' });
    }
    expect(atServer()).toEqual({ requests: 1, paid: 1 });
  });
});

describe("batch: 'auto' (the default)", () => {
  it('maxSpendUsd leaves less than the deposit the server asks ($0.10): paid exact, nothing deposited', async () => {
    const r = await client({ maxSpendUsd: 0.05 }).request('/v1/price', { symbol: 'BTC' });
    expect(r.payment).toMatchObject({ scheme: 'exact', chargedUsd: '0.001' });
  });

  it('room for the deposit: one deposit, then a voucher per call in one exchange, no facilitator call; close() refunds the rest', async () => {
    const start = await w.fx.balanceOf(w.payer.address);
    const c = client({ maxSpendUsd: 0.5 });
    const first = await c.request('/v1/price', { symbol: 'BTC' });
    expect(first.payment).toMatchObject({ scheme: 'batch-settlement', settle: { success: true, amount: '100000' } });
    const facilitator = { ...w.fac.state.calls };
    proxy.seen.length = 0;
    const next = [];
    for (let i = 0; i < 4; i++) next.push(await c.request('/v1/price', { symbol: 'BTC' }));
    expect(next.map((r) => r.attempts)).toEqual([1, 1, 1, 1]);
    expect(next.map((r) => r.payment!.scheme)).toEqual(Array(4).fill('batch-settlement'));
    expect(atServer()).toEqual({ requests: 4, paid: 4 });
    expect(w.fac.state.calls).toEqual(facilitator);
    expect(await w.fx.balanceOf(w.payer.address)).toBe(start - 100_000n);
    const closed = await c.close();
    expect(closed).toEqual([expect.objectContaining({ network: w.chain.network, refund: expect.objectContaining({ success: true, amount: String(100_000 - 5_000) }) })]);
    expect(await w.fx.balanceOf(w.payer.address)).toBe(start - 5_000n);
    // Nothing left to refund: a second close() asks nothing.
    expect(await c.close()).toEqual([]);
  });
});

describe("terms read from marketgate's own /openapi.json (learnTerms)", () => {
  /** The served document, once it carries the terms of the payment table that serves (the facilitator has answered). */
  const servedDocument = async () => {
    await w.app.reference.termsPublished();
    return (await (await fetch(`${w.base}/openapi.json`)).json()) as { paths: Record<string, { get: { 'x-access'?: string; 'x-payment-info'?: { protocols: { x402: { accepts?: unknown } }[] } } }> };
  };
  const paidRoutes = () => w.app.services.catalog.entries.filter((e) => e.access === 'paid').length;

  it("each paid operation carries its route's live 402 accepts: exact on the chain, then batch settlement", async () => {
    const doc = await servedDocument();
    const real = await realTerms();
    expect(real.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(doc.paths['/v1/price']!.get['x-payment-info']!.protocols[0]!.x402.accepts).toEqual(real.accepts);
  });

  it('exact: the first call to a route is one paid exchange at the server, no 402', async () => {
    const c = client({ batch: false });
    expect(c.learnTerms(await servedDocument())).toBe(paidRoutes());
    proxy.seen.length = 0;
    const r = await c.request('/v1/price', { symbol: 'BTC' });
    expect(r).toMatchObject({ attempts: 1, payment: { scheme: 'exact', chargedUsd: '0.001', settle: { success: true } } });
    expect(atServer()).toEqual({ requests: 1, paid: 1 });
  });

  it('batch settlement: the deposit goes with the first request, then a voucher per call, each one exchange; close() refunds the rest', async () => {
    // A payer of its own: no channel of the tests above to resume.
    const payer = accountAt(31);
    await w.fx.mint(payer.address, 1_000_000n);
    const c = client({ maxSpendUsd: 0.5, wallet: `0x${Buffer.from(payer.getHdKey().privateKey!).toString('hex')}` });
    c.learnTerms(await servedDocument());
    proxy.seen.length = 0;
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push(await c.request('/v1/price', { symbol: 'BTC' }));
    expect(calls.map((r) => [r.attempts, r.payment!.scheme])).toEqual(Array(3).fill([1, 'batch-settlement']));
    expect(calls[0]!.payment!.settle).toMatchObject({ success: true, amount: '100000' });
    expect(atServer()).toEqual({ requests: 3, paid: 3 });
    const closed = await c.close();
    expect(closed).toEqual([expect.objectContaining({ refund: expect.objectContaining({ success: true, amount: String(100_000 - 3_000) }) })]);
    expect(await w.fx.balanceOf(payer.address)).toBe(1_000_000n - 3_000n);
  });
});

describe('how long terms are kept', () => {
  const jws = (payload: object) => `eyJhbGciOiJFUzI1NksifQ.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;
  const required = (offers: unknown[] | undefined) => ({ x402Version: 2, resource: { url: 'u' }, accepts: [], ...(offers ? { extensions: { 'offer-receipt': { info: { offers } } } } : {}) }) as unknown as PaymentRequired;

  it('until the earliest signed offer expires; with none signed, until a 402 says otherwise', () => {
    expect(validUntil(required(undefined))).toBe(Infinity);
    expect(validUntil(required([{ format: 'jws', signature: jws({ validUntil: 2000 }) }, { format: 'jws', signature: jws({ validUntil: 1500 }) }]))).toBe(1_500_000);
    expect(validUntil(required([{ format: 'jws', signature: 'garbage' }]))).toBe(0);
    let now = 1_000_000;
    const terms = new RouteTerms(() => now);
    terms.keep('/v1/price?symbol=BTC', required([{ format: 'jws', signature: jws({ validUntil: 1500 }) }]));
    expect(terms.get('/v1/price')).toBeDefined();
    now = 1_500_000;
    expect(terms.get('/v1/price')).toBeUndefined();
  });
});

function encode(required: PaymentRequired): string {
  return Buffer.from(JSON.stringify(required)).toString('base64');
}
