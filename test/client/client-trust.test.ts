// The client trusts no server with its money (issue 34 §4), against marketgate on the local chain with a proxy in
// front that plays a dishonest server: every payment is verified and settled for real, on chain, and the answer
// then lies — a charge of 0, no PAYMENT-RESPONSE, a 402. A wallet capped at $0.01 never has more than $0.01 drawn
// (its balance on chain), however many calls follow. A 402 asking for mainnet USDC from a client set up for the
// test token is refused, nothing signed. A redirect to another origin is not followed with the key or a payment;
// one within the origin is. Last (it moves the chain's clock): a signed payment is released only when the chain
// shows it unused after it expired, and counted spent when the chain shows it used.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MarketgateError, type ClientOptions } from '../../src/client/index.ts';
import { LossyProxy, type ProxiedAnswer, type ProxyAction } from './proxy.ts';
import { KEY, startWorld, TICKER, type World } from './world.ts';

const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

let w: World;
/** The dishonest server in front of marketgate; `elsewhere`: another origin a redirect may point to. */
let liar: LossyProxy;
let elsewhere: LossyProxy;

beforeAll(async () => {
  // Authorizations valid for 5 minutes: the chain's clock (a second ahead per block here) stays well before them
  // until the last test moves it on by an hour.
  w = await startWorld({ payerIndex: 13, env: { PAID_IP_RATE_LIMIT: '100000', X402_MAX_TIMEOUT_S: '300' } });
  [liar, elsewhere] = await Promise.all([new LossyProxy(w.base).start(), new LossyProxy(w.base).start()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([liar?.stop(), elsewhere?.stop()]);
  await w?.close();
});

afterEach(() => {
  liar.decide = () => ({ kind: 'forward' });
  liar.seen.length = 0;
  elsewhere.seen.length = 0;
  w.serveNormally();
});

const paying = (extra: Partial<ClientOptions> = {}) => createClient({ baseUrl: liar.url, wallet: w.payerKey, assets: [w.asset], retries: 0, ...extra });
const balance = () => w.fx.balanceOf(w.payer.address);
const settleOf = (a: ProxiedAnswer) => decodePaymentResponseHeader(a.headers['payment-response']!);

/** The three lies, in turn, told about paid requests once marketgate has settled them; unpaid ones pass. */
function lying(): (paid: boolean) => ProxyAction {
  const lies: ProxyAction[] = [
    // A charge of 0 (a batch voucher's way of saying so, on an exact payment).
    { kind: 'rewrite', edit: (a) => ({ ...a, headers: { ...a.headers, 'payment-response': encodePaymentResponseHeader({ ...settleOf(a), amount: '0', extra: { chargedAmount: '0' } }) } }) },
    // The data, no confirmation.
    { kind: 'rewrite', edit: (a) => ({ ...a, headers: Object.fromEntries(Object.entries(a.headers).filter(([k]) => k !== 'payment-response')) }) },
    // A 402, as if nothing had been taken.
    { kind: 'replace', status: 402, headers: { 'content-type': 'application/json' }, body: '{"error":"payment required"}' },
  ];
  let n = 0;
  return (paid) => (paid ? lies[n++ % lies.length]! : { kind: 'forward' });
}

describe('a server that settles every payment and says it charged nothing', () => {
  it('a wallet capped at $0.01 has $0.01 drawn at most, over 30 calls in a row', async () => {
    const lie = lying();
    liar.decide = (r) => lie(r.paymentSignature !== undefined);
    const client = paying({ maxSpendUsd: 0.01 });
    const before = await balance();
    const kinds: string[] = [];
    for (let i = 0; i < 30; i++) {
      kinds.push(await client.price({ symbol: 'BTC' }).then(
        () => 'served',
        (e: unknown) => (e as MarketgateError).kind,
      ));
    }
    // Ten payments signed (each settled on chain), then every call refused before signing.
    expect(liar.paid()).toHaveLength(10);
    expect(kinds.slice(0, 10).filter((k) => k === 'served')).toHaveLength(7); // 0-charge and unconfirmed answers carry the data
    expect(kinds.slice(10)).toEqual(Array(20).fill('spend-limit'));
    expect(before - (await balance())).toBe(10_000n); // $0.01: 10 × 1000 units of the 6-decimal token
    const spending = client.spending();
    expect(Number(spending.spentUsd) + Number(spending.heldUsd)).toBe(0.01);
    expect(spending.spentUsd).toBe('0.004'); // the four "charged 0" answers: success, counted at the amount signed
  }, 60_000);
});

describe('the networks and assets it pays in', () => {
  /** marketgate's 402, asking for USDC on Base mainnet instead of the test token. */
  const askMainnet: ProxyAction = {
    kind: 'rewrite',
    edit: (a) => {
      const required = decodePaymentRequiredHeader(a.headers['payment-required']!);
      required.accepts = required.accepts.map((o) => ({ ...o, network: 'eip155:8453', asset: BASE_USDC }));
      return { ...a, headers: { ...a.headers, 'payment-required': encodePaymentRequiredHeader(required) } };
    },
  };

  it('a 402 asking for mainnet USDC from a client set up for the test token: refused, nothing signed or sent', async () => {
    liar.decide = (r) => (r.paymentSignature ? { kind: 'forward' } : askMainnet);
    const before = await balance();
    const client = paying();
    const err = (await client.price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toBeInstanceOf(MarketgateError);
    expect(err).toMatchObject({ kind: 'not-allowed', status: 402, charged: false, payment: undefined });
    expect(err.error).toBe(
      `the 402 asks for exact ${BASE_USDC} on eip155:8453, and this client pays only ${w.fx.usdc} on ${w.chain.network}: nothing was signed (the \`networks\` and \`assets\` options say what it may pay)`,
    );
    expect(liar.paid()).toHaveLength(0);
    expect(client.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0', heldUsd: '0' });
    expect(await balance()).toBe(before);
  });

  it('`networks` names them: a client for Base only refuses the test network', async () => {
    const err = await paying({ networks: ['eip155:8453'] })
      .price({ symbol: 'BTC' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'not-allowed', charged: false });
    expect((err as MarketgateError).error).toMatch(/^the 402 asks for exact 0x[0-9a-fA-F]{40} on eip155:31337, and this client pays only USDC on eip155:8453: nothing was signed/);
    expect(liar.paid()).toHaveLength(0);
  });
});

describe('redirects', () => {
  const to = (path: string) => `${elsewhere.url}${path}`;

  it('a keyed call redirected to another origin: not followed, the key never sent there, a redirect error saying where', async () => {
    liar.decide = (r) => ({ kind: 'answer', status: 307, headers: { location: to(r.path) } });
    const err = (await createClient({ baseUrl: liar.url, apiKey: KEY }).price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toBeInstanceOf(MarketgateError);
    expect(err).toMatchObject({ kind: 'redirect', status: 307, charged: false, attempts: 1 });
    expect(err.error).toBe(`the server redirected the call to ${to('/v1/price?symbol=BTC')}, another origin than ${liar.url}: not followed (the API key and payments are sent to the configured origin only)`);
    expect(liar.seen.map((r) => r.apiKey)).toEqual([KEY]);
    expect(elsewhere.seen).toHaveLength(0);
  });

  it('a paid call redirected to another origin: the payment not sent there; its charge unknown, its amount held', async () => {
    liar.decide = (r) => (r.paymentSignature ? { kind: 'answer', status: 302, headers: { location: to(r.path) } } : { kind: 'forward' });
    const client = paying();
    const err = (await client.price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toMatchObject({ kind: 'redirect', status: 302, charged: 'unknown', payment: { scheme: 'exact', amount: '1000' } });
    expect(err.error).toMatch(/^the server redirected the call to http:\/\/127\.0\.0\.1:\d+\/v1\/price\?symbol=BTC, another origin/);
    expect(liar.paid()).toHaveLength(1);
    expect(elsewhere.seen).toHaveLength(0);
    expect(client.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0', heldUsd: '0.001' });
  });

  it('redirects within the origin are followed, key and payment included', async () => {
    // baseUrl under /api, which the server moved to its root.
    liar.decide = (r) => (r.path.startsWith('/api/') ? { kind: 'answer', status: 308, headers: { location: r.path.slice(4) } } : { kind: 'forward' });
    const keyed = await createClient({ baseUrl: `${liar.url}/api`, apiKey: KEY }).request('/v1/price', { symbol: 'BTC' });
    expect(keyed).toMatchObject({ status: 200, attempts: 1, payment: undefined });
    const before = await balance();
    const paid = await paying({ baseUrl: `${liar.url}/api` }).request('/v1/price', { symbol: 'BTC' });
    expect(paid).toMatchObject({ status: 200, payment: { scheme: 'exact', settle: { success: true } } });
    expect(liar.seen.filter((r) => r.paymentSignature).map((r) => r.path)).toEqual(['/api/v1/price?symbol=BTC', '/v1/price?symbol=BTC']);
    expect(await balance()).toBe(before - 1000n);
  });
});

describe('what releases a signed payment: the chain, never the server (last: it moves the chain clock)', () => {
  it('cancelled by the server: held until the chain shows it unused after validBefore; settled but unconfirmed: spent once the chain shows it used', async () => {
    const client = paying({ maxSpendUsd: 0.002, rpcUrls: { [w.chain.network]: w.chain.rpcUrl } });
    // 1. The upstream fails: marketgate cancels the payment (502), nothing settled.
    w.upstream.route(`GET ${TICKER}`, { status: 451, body: { code: 0, msg: 'Service unavailable from a restricted location' } });
    w.upstream.route('GET /products/BTC-USD/ticker', { status: 500, body: 'down' });
    expect(await client.price({ symbol: 'BTC' }).catch((e: unknown) => e)).toMatchObject({ kind: 'http', status: 502, charged: false });
    w.serveNormally();
    // 2. Settled on chain, the confirmation withheld.
    liar.decide = (r) => (r.paymentSignature ? { kind: 'rewrite', edit: (a) => ({ ...a, headers: Object.fromEntries(Object.entries(a.headers).filter(([k]) => k !== 'payment-response')) }) } : { kind: 'forward' });
    await client.price({ symbol: 'BTC' });
    expect(client.spending()).toEqual({ limitUsd: '0.002', spentUsd: '0', heldUsd: '0.002' });
    // The chain: the second was used; the first is unused but still valid, so it may yet be settled.
    expect(await client.reconcile()).toEqual({ limitUsd: '0.002', spentUsd: '0.001', heldUsd: '0.001' });
    // The limit is reached: the next call asks the chain again, which releases nothing, and signs nothing.
    liar.decide = () => ({ kind: 'forward' });
    expect(await client.price({ symbol: 'BTC' }).catch((e: unknown) => e)).toMatchObject({ kind: 'spend-limit', charged: false });
    expect(liar.paid()).toHaveLength(2);

    // The chain's clock past every validBefore: the unused authorization can never be used, and is released by
    // the next call that needs room (its paid request answered here, the chain's clock being past its validity).
    await w.chain.publicClient.request({ method: 'evm_increaseTime' as never, params: [3600] as never });
    await w.chain.publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    liar.decide = (r) => (r.paymentSignature ? { kind: 'answer', status: 503, body: '{"error":"busy","source":"binance"}' } : { kind: 'forward' });
    expect(await client.price({ symbol: 'BTC' }).catch((e: unknown) => e)).toMatchObject({ kind: 'http', status: 503 });
    expect(liar.paid()).toHaveLength(3);
    expect(client.spending()).toEqual({ limitUsd: '0.002', spentUsd: '0.001', heldUsd: '0.001' });
  }, 60_000);
});
