// The client's retries, against marketgate on the local chain with a lossy proxy in front (and one between
// marketgate and its facilitator): a paid call whose answer is lost — a dropped connection, a timeout, a 5xx —
// is sent again with the SAME signed payment (identifier included) and gets the answer it paid for, settled
// once; a call with no answer at all says its charge is unknown and hands back the payment to resend; a
// second payment is never signed while the first one's outcome is unknown; Retry-After and the deadline hold.
import { decodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MarketgateError, type ClientOptions } from '../../src/client/index.ts';
import { LossyProxy, type ProxiedRequest } from './proxy.ts';
import { KEY, startWorld, type World } from './world.ts';

let w: World;
let proxy: LossyProxy;

beforeAll(async () => {
  w = await startWorld({ payerIndex: 9, facilitatorProxy: true });
  proxy = await new LossyProxy(w.base).start();
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  await w?.close();
});

afterEach(() => {
  proxy.decide = () => ({ kind: 'forward' });
  w.facProxy!.decide = () => ({ kind: 'forward' });
  proxy.seen.length = 0;
});

const client = (extra: Partial<ClientOptions> = {}) =>
  createClient({ baseUrl: proxy.url, wallet: w.payerKey, assets: [w.asset], attemptTimeoutMs: 5000, ...extra });
const balance = () => w.fx.balanceOf(w.payer.address);
/** The first request with a payment gets `first`; everything else is forwarded. */
const onFirstPaid = (first: ReturnType<LossyProxy['decide']>) => {
  let done = false;
  proxy.decide = (r: ProxiedRequest) => {
    if (r.paymentSignature && !done) {
      done = true;
      return first;
    }
    return { kind: 'forward' };
  };
};

describe('paid retries resend the same payment', () => {
  it('a connection dropped after marketgate answered: the same PAYMENT-SIGNATURE again, the first answer back, settled once', async () => {
    onFirstPaid({ kind: 'drop-after' });
    const before = await balance();
    const settles = w.fac.state.calls.settle;
    const c = client();
    const result = await c.request('/v1/price', { symbol: 'BTC' });
    expect(result.status).toBe(200);
    expect(result.attempts).toBe(3); // the 402, the lost paid answer, the retry
    const paid = proxy.paid();
    expect(paid).toHaveLength(2);
    expect(paid[1]!.paymentSignature).toBe(paid[0]!.paymentSignature);
    expect(paid[0]!.paymentSignature).toBe(result.payment!.signature);
    expect(result.payment).toMatchObject({ chargedUsd: '0.001', settle: { success: true } });
    expect(w.fac.state.calls.settle - settles).toBe(1);
    expect(await balance()).toBe(before - 1000n);
    expect(c.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0.001', heldUsd: '0' });
  });

  it('a timeout: the attempt is given up, the same payment sent again, one settlement', async () => {
    onFirstPaid({ kind: 'delay', ms: 1500 });
    const before = await balance();
    const settles = w.fac.state.calls.settle;
    const result = await client({ attemptTimeoutMs: 600 }).request('/v1/price', { symbol: 'BTC' });
    expect(result.status).toBe(200);
    const paid = proxy.paid();
    expect(paid).toHaveLength(2);
    expect(new Set(paid.map((r) => r.paymentSignature)).size).toBe(1);
    expect(w.fac.state.calls.settle - settles).toBe(1);
    expect(await balance()).toBe(before - 1000n);
  });

  it("a proxy's 502 with Retry-After in place of the paid answer: resent after Retry-After, the answer replayed", async () => {
    onFirstPaid({ kind: 'replace', status: 502, headers: { 'retry-after': '1' }, body: '<html>Bad Gateway</html>' });
    const before = await balance();
    const result = await client().request('/v1/price', { symbol: 'BTC' });
    expect(result.status).toBe(200);
    const paid = proxy.paid();
    expect(paid).toHaveLength(2);
    expect(paid[1]!.paymentSignature).toBe(paid[0]!.paymentSignature);
    expect(paid[1]!.at - paid[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(await balance()).toBe(before - 1000n);
  });

  it('no answer at all: a network error whose charge is unknown, holding the payment to resend; one payment signed, settled once', async () => {
    proxy.decide = (r) => (r.paymentSignature ? { kind: 'drop-after' } : { kind: 'forward' });
    const before = await balance();
    const settles = w.fac.state.calls.settle;
    const c = client({ retries: 2 });
    const err = (await c.price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toBeInstanceOf(MarketgateError);
    expect(err).toMatchObject({ kind: 'network', status: undefined, charged: 'unknown', attempts: 4 });
    expect(err.message).toMatch(/^\/v1\/price: no answer: .* after 4 attempts \(resend error\.payment\.signature to get the answer it paid for\); charge unknown$/);
    const paid = proxy.paid();
    expect(paid).toHaveLength(3);
    expect(new Set(paid.map((r) => r.paymentSignature))).toEqual(new Set([err.payment!.signature]));
    // marketgate took it once and replayed it to the retries; the money counts as spent until known.
    expect(w.fac.state.calls.settle - settles).toBe(1);
    expect(await balance()).toBe(before - 1000n);
    expect(c.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0', heldUsd: '0.001' });
    // Resending the payment it hands back recovers the answer, without paying again.
    const again = await fetch(`${w.base}/v1/price?symbol=BTC`, { headers: { 'payment-signature': err.payment!.signature } });
    expect(again.status).toBe(200);
    expect(decodePaymentResponseHeader(again.headers.get('payment-response')!)).toMatchObject({ success: true });
    expect(w.fac.state.calls.settle - settles).toBe(1);
    expect(await balance()).toBe(before - 1000n);
  });

  it('the facilitator settles but its answer is lost: marketgate learns the outcome from the chain and answers; never a second payment or charge', async () => {
    // The settle reached the facilitator and the transfer landed, but its answer never came back to marketgate.
    // marketgate reads the authorization's state on chain (X402_RPC_URL) and answers the call it was paid for:
    // one signature, one charge, the data.
    let dropped = false;
    w.facProxy!.decide = (r) => (r.path === '/settle' && !dropped ? ((dropped = true), { kind: 'drop-after' }) : { kind: 'forward' });
    const before = await balance();
    const c = client({ deadlineMs: 25_000 });
    const outcome = await c.request('/v1/price', { symbol: 'BTC' });
    const paid = proxy.paid();
    expect(new Set(paid.map((r) => r.paymentSignature)).size).toBe(1);
    expect(await balance()).toBe(before - 1000n);
    expect(outcome).toMatchObject({ status: 200, payment: { settle: { success: true } } });
    expect(c.spending().spentUsd).toBe('0.001');
  }, 40_000);
});

describe('retries of unpaid calls, Retry-After and the deadline', () => {
  it('5xx without Retry-After: retried with backoff until an answer', async () => {
    let n = 0;
    proxy.decide = () => (++n <= 2 ? { kind: 'answer', status: 503, body: '{"error":"busy","source":"binance"}' } : { kind: 'forward' });
    const result = await createClient({ baseUrl: proxy.url, apiKey: KEY }).request('/v1/price', { symbol: 'BTC' });
    expect(result).toMatchObject({ status: 200, attempts: 3, payment: undefined });
  });

  it('a Retry-After past the deadline is not waited for: the 503 at once, with its Retry-After', async () => {
    proxy.decide = () => ({ kind: 'answer', status: 503, headers: { 'retry-after': '30' }, body: '{"error":"circuit open","source":"binance"}' });
    const started = performance.now();
    const err = await createClient({ baseUrl: proxy.url, apiKey: KEY, deadlineMs: 3000 }).price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(err).toMatchObject({ kind: 'http', status: 503, error: 'circuit open', source: 'binance', retryAfterS: 30, attempts: 1, charged: false });
  });

  it('retries are bounded: the last 5xx after `retries` more attempts', async () => {
    proxy.decide = () => ({ kind: 'answer', status: 500, body: '{"error":"internal error"}' });
    const err = await createClient({ baseUrl: proxy.url, apiKey: KEY, retries: 2 }).price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'http', status: 500, attempts: 3 });
    expect(proxy.seen).toHaveLength(3);
  });

  it('a 4xx is not retried', async () => {
    const err = await createClient({ baseUrl: proxy.url, apiKey: 'wrong-key' }).price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'http', status: 401, attempts: 1, error: 'invalid or revoked API key' });
    expect(proxy.seen).toHaveLength(1);
  });
});
