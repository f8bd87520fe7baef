// The typed client (src/client) against marketgate on the local chain: a free route, a keyed call, a call paid
// with x402 `exact` (on chain, with a payment identifier), the errors (a bad parameter, a failed upstream,
// a paid route without credentials), and maxSpendUsd refusing before anything is signed.
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, MarketgateError } from '../../src/client/index.ts';
import { withOwnIdentifierInfo } from '../../src/client/payer.ts';
import { KEY, startWorld, TICKER, type World } from './world.ts';

let w: World;

beforeAll(async () => {
  w = await startWorld({ payerIndex: 7 });
}, 60_000);

afterAll(async () => {
  await w?.close();
});

/** A fetch that records the payment headers the client sends. */
function recordingFetch(sent: string[]): typeof fetch {
  return async (input, init) => {
    const sig = new Headers(init?.headers).get('payment-signature');
    if (sig) sent.push(sig);
    return fetch(input, init);
  };
}

const paying = (extra: Parameters<typeof createClient>[0] extends infer O ? Partial<O> : never = {}) =>
  createClient({ baseUrl: w.base, wallet: w.payerKey, assets: [w.asset], ...extra });

describe('createClient', () => {
  it('a free route: the envelope as served, by path or by its typed method', async () => {
    const client = createClient({ baseUrl: w.base });
    const envelope = await client.sentiment({ limit: 2 });
    expectTypeOf(envelope.data.current.value).toEqualTypeOf<number>();
    expect(envelope.data.current.value).toBe(71);
    expect(envelope.meta.sources[0]!.provider).toBe('alternative.me');
    const result = await client.request('/v1/sentiment', { limit: 2 });
    expect(result).toMatchObject({ status: 200, attempts: 1, payment: undefined });
    expect(result.requestId).toMatch(/./);
    expect(result.envelope.data.current).toEqual(envelope.data.current);
  });

  it('a keyed call: served on the key, nothing paid, the wallet untouched', async () => {
    const before = await w.fx.balanceOf(w.payer.address);
    const client = createClient({ baseUrl: w.base, apiKey: KEY, wallet: w.payerKey, assets: [w.asset] });
    const result = await client.request('/v1/price', { symbol: 'BTC' });
    expect(result.envelope.data).toMatchObject({ symbol: 'BTC/USDT', venue_symbol: 'BTCUSDT', price: 63350.1 });
    expect(result.payment).toBeUndefined();
    expect(result.headers.get('payment-response')).toBeNull();
    expect(client.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0', heldUsd: '0' });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before);
  });

  it('a paid call with a wallet: exact on chain, with a payment identifier, counted against maxSpendUsd', async () => {
    const sent: string[] = [];
    const client = paying({ fetch: recordingFetch(sent) });
    const before = { payer: await w.fx.balanceOf(w.payer.address), payTo: await w.fx.balanceOf(w.payTo) };
    const settles = w.fac.state.calls.settle;
    const result = await client.request('/v1/price', { symbol: 'BTC' });
    expect(result.status).toBe(200);
    expect(result.envelope.data.symbol).toBe('BTC/USDT');
    expect(result.attempts).toBe(2); // the unpaid request (402) and the paid one
    expect(result.payment).toMatchObject({ scheme: 'exact', network: w.chain.network, amount: '1000', usd: '0.001', chargedUsd: '0.001', settle: { success: true, payer: w.payer.address } });
    expect(result.payment!.settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // One payment sent, carrying the identifier the result names.
    expect(sent).toEqual([result.payment!.signature]);
    const payload = decodePaymentSignatureHeader(sent[0]!);
    expect((payload.extensions?.[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id).toBe(result.payment!.identifier);
    expect(result.payment!.identifier).toMatch(/^pay_[0-9a-f]{32}$/);
    expect(w.fac.state.calls.settle - settles).toBe(1);
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before.payer - 1000n);
    expect(await w.fx.balanceOf(w.payTo)).toBe(before.payTo + 1000n);
    expect(client.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0.001', heldUsd: '0' });
  });

  it('a call that would pass maxSpendUsd fails before signing: nothing sent, nothing verified, nothing taken', async () => {
    const sent: string[] = [];
    const client = paying({ fetch: recordingFetch(sent), maxSpendUsd: 0.0015 });
    await client.price({ symbol: 'BTC' });
    expect(sent).toHaveLength(1);
    const before = await w.fx.balanceOf(w.payer.address);
    const verifies = w.fac.state.calls.verify;
    const err = await client.price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MarketgateError);
    expect(err).toMatchObject({ kind: 'spend-limit', charged: false, payment: undefined });
    expect((err as Error).message).toBe('/v1/price: paying $0.001 would pass maxSpendUsd ($0.0015: $0.001 charged, $0 held); not charged');
    expect(sent).toHaveLength(1);
    expect(w.fac.state.calls.verify).toBe(verifies);
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before);
    expect(client.spending()).toEqual({ limitUsd: '0.0015', spentUsd: '0.001', heldUsd: '0' });
  });

  it('a viem account as the wallet pays as its key does', async () => {
    const result = await createClient({ baseUrl: w.base, wallet: w.payer, assets: [w.asset] }).request('/v1/price', { symbol: 'BTC' });
    expect(result.payment).toMatchObject({ scheme: 'exact', settle: { success: true, payer: w.payer.address } });
  });

  it('an offer on a network or in a token the client was not configured for is refused before signing (naming the offer and the allow-list)', async () => {
    const verifies = w.fac.state.calls.verify;
    // No assets: the client pays USDC on Base only.
    const err = await createClient({ baseUrl: w.base, wallet: w.payerKey }).price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'not-allowed', status: 402, charged: false, payment: undefined });
    expect((err as MarketgateError).error).toBe(
      `the 402 asks for exact ${w.fx.usdc} on ${w.chain.network}, and this client pays only USDC on eip155:8453: nothing was signed (the \`networks\` and \`assets\` options say what it may pay)`,
    );
    // The network allowed, the token not listed.
    const other = await createClient({ baseUrl: w.base, wallet: w.payerKey, networks: [w.chain.network] }).price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(other).toMatchObject({ kind: 'not-allowed', status: 402, charged: false });
    expect((other as MarketgateError).error).toMatch(/and this client pays only no known token on eip155:31337: nothing was signed/);
    expect(w.fac.state.calls.verify).toBe(verifies);
  });

  it('the default limit is $0.10', () => {
    expect(paying().spending().limitUsd).toBe('0.1');
  });

  it('a paid route without key or wallet: a payment-required error saying how to pay; nothing charged', async () => {
    const err = await createClient({ baseUrl: w.base }).price({ symbol: 'BTC' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'MarketgateError', kind: 'payment-required', status: 402, charged: false, attempts: 1 });
    expect((err as MarketgateError).error).toBe('this route is paid ($0.001 a call): give the client an apiKey, or a wallet to pay with x402');
  });

  it("a bad parameter: the server's 400 and its message; the payment never verified, nothing charged", async () => {
    // Without credentials the server challenges first (402, whatever the parameters); the paid request is the 400.
    const sent: string[] = [];
    const client = paying({ fetch: recordingFetch(sent) });
    const verifies = w.fac.state.calls.verify;
    const err = await client.call('/v1/price', { symbol: 'BTC', asset_class: 'bond' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'http', status: 400, charged: false, source: undefined, attempts: 2 });
    expect((err as MarketgateError).error).toBe("query parameter 'asset_class' must be one of crypto, equity");
    expect(sent).toHaveLength(1);
    expect(w.fac.state.calls.verify).toBe(verifies);
    // Signed and sent: it counts until the chain shows it unused after it expired, whatever the 400 says.
    expect(client.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0', heldUsd: '0.001' });
    // With a key, the 400 comes at once.
    const keyed = await createClient({ baseUrl: w.base, apiKey: KEY }).call('/v1/price', { symbol: 'BTC', asset_class: 'bond' }).catch((e: unknown) => e);
    expect(keyed).toMatchObject({ kind: 'http', status: 400, charged: false, attempts: 1 });
  });

  it('a failed upstream on a paid call: the 502 with its source, the payment cancelled (not charged; still held, as it was signed)', async () => {
    w.upstream.route(`GET ${TICKER}`, { status: 451, body: { code: 0, msg: 'Service unavailable from a restricted location' } });
    w.upstream.route('GET /products/BTC-USD/ticker', { status: 500, body: 'down' });
    try {
      const client = paying({ retries: 0 });
      const before = await w.fx.balanceOf(w.payer.address);
      const err = (await client.price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
      expect(err).toMatchObject({ kind: 'http', status: 502, charged: false });
      expect(err.source).toMatch(/binance|coinbase/);
      expect(err.payment).toMatchObject({ scheme: 'exact', amount: '1000' });
      expect(err.message).toMatch(/^\/v1\/price: 502 .*\(source: (binance|coinbase)\); not charged$/);
      // The server's word does not release it: the chain does, once it has expired (client-trust.test.ts).
      expect(client.spending()).toEqual({ limitUsd: '0.1', spentUsd: '0', heldUsd: '0.001' });
      expect(await w.fx.balanceOf(w.payer.address)).toBe(before);
    } finally {
      w.serveNormally();
    }
  });

  it('an invalid option is a config error naming it', () => {
    expect(() => createClient({ baseUrl: 'ftp://x' })).toThrow('baseUrl: must be an http(s) URL, got "ftp://x"');
    expect(() => createClient({ baseUrl: w.base, wallet: '0x12' })).toThrow('wallet: must be a private key (0x + 64 hex digits) or a viem local account');
    expect(() => createClient({ baseUrl: w.base, maxSpendUsd: -1 })).toThrow('maxSpendUsd: must be a finite number of dollars ≥ 0, got -1');
    expect(() => createClient({ baseUrl: w.base, networks: ['base'] })).toThrow('networks[0]: must be a CAIP-2 network such as eip155:8453, got "base"');
    expect(() => createClient({ baseUrl: w.base, networks: [] })).toThrow('networks: must be a non-empty list of CAIP-2 networks such as eip155:8453');
    expect(() => createClient({ baseUrl: w.base, rpcUrls: { 'eip155:8453': 'ftp://x' } })).toThrow('rpcUrls.eip155:8453: must be an http(s) URL, got "ftp://x"');
  });
});

it('a payment identifier is written into a copy: the declaration the 402 made (and kept terms reuse) keeps no id', () => {
  const declared = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false), bazaar: { info: { x: 1 } } };
  const before = structuredClone(declared);
  const first = appendPaymentIdentifierToExtensions(withOwnIdentifierInfo(declared), 'pay_aaaaaaaaaaaaaaaaaaaa');
  const second = appendPaymentIdentifierToExtensions(withOwnIdentifierInfo(declared), 'pay_bbbbbbbbbbbbbbbbbbbb');
  expect(declared).toEqual(before);
  expect((first[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id).toBe('pay_aaaaaaaaaaaaaaaaaaaa');
  expect((second[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id).toBe('pay_bbbbbbbbbbbbbbbbbbbb');
  expect(first.bazaar).toEqual(declared.bazaar);
  expect(withOwnIdentifierInfo(undefined)).toEqual({});
});
