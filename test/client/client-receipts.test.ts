// The client and signed receipts, against marketgate with X402_SIGNING_KEY on the local chain: a paid call exposes
// its Content-Digest (checked against the bytes received) and its receipt; with verifyReceipts the receipt is
// verified against the key the agent card publishes (or the one given) and against the call; a body changed on
// the way is caught, whether or not its Content-Digest was changed with it.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MarketgateError, type ClientOptions } from '../../src/client/index.ts';
import { publishedSigningKey } from '../../src/payments/core/signing-key.ts';
import { KEY, startWorld, type World } from './world.ts';

const SIGNING_KEY = `0x${'7e'.repeat(32)}` as const;
let w: World;

beforeAll(async () => {
  w = await startWorld({ payerIndex: 12, env: { X402_SIGNING_KEY: SIGNING_KEY } });
}, 60_000);

afterAll(async () => {
  await w?.close();
});

const paying = (extra: Partial<ClientOptions> = {}) => createClient({ baseUrl: w.base, wallet: w.payerKey, assets: [w.asset], ...extra });
const sha256 = (text: string) => `sha-256=:${createHash('sha256').update(Buffer.from(text)).digest('base64')}:`;
const isPaid = (init?: RequestInit) => new Headers(init?.headers).has('payment-signature');

/** A fetch that rewrites the body of paid answers on the way (`digest`: and recomputes Content-Digest to match). */
function tampering(digest: boolean): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!isPaid(init) || res.status !== 200) return res;
    const body = (await res.text()).replace('"price":63350.1', '"price":1');
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    if (digest) headers.set('content-digest', sha256(body));
    return new Response(body, { status: res.status, headers });
  };
}

describe('the client and signed receipts', () => {
  it('a paid call exposes the body, its checked Content-Digest and the receipt (read, not verified, by default)', async () => {
    const result = await paying().request('/v1/price', { symbol: 'BTC' });
    expect(result.contentDigest).toBe(sha256(result.body));
    expect(result.headers.get('content-digest')).toBe(result.contentDigest);
    expect(result.receipt).toMatchObject({
      signed: { format: 'jws' },
      payload: { version: 1, network: w.chain.network, payer: w.payer.address, transaction: result.payment!.settle.transaction },
      contentDigest: result.contentDigest,
      verified: false,
    });
    expect(result.receipt!.payload.resourceUrl).toMatch(/\/v1\/price$/);
  });

  it("verifyReceipts: true verifies the receipt against the key in the server's agent card, and the call it names", async () => {
    const result = await paying({ verifyReceipts: true }).request('/v1/price', { symbol: 'BTC' });
    expect(result.receipt).toMatchObject({ verified: true, contentDigest: sha256(result.body), payload: { payer: w.payer.address } });
  });

  it("verifyReceipts with the key given (the agent card's x402.receipts, or its JWK) needs no agent card", async () => {
    const cards: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/.well-known/agent.json')) cards.push(String(input));
      return fetch(input, init);
    };
    const { jwk } = publishedSigningKey(SIGNING_KEY);
    const result = await paying({ verifyReceipts: { jwk }, fetch: counting }).request('/v1/price', { symbol: 'BTC' });
    expect(result.receipt?.verified).toBe(true);
    expect(cards).toEqual([]);
  });

  it('a keyed call: no Content-Digest, no receipt, nothing to verify', async () => {
    const result = await createClient({ baseUrl: w.base, apiKey: KEY, verifyReceipts: true }).request('/v1/price', { symbol: 'BTC' });
    expect(result).toMatchObject({ status: 200, payment: undefined, contentDigest: undefined, receipt: undefined });
  });

  it('a body changed on the way is caught by its Content-Digest: a receipt error, charged, with the payment', async () => {
    const err = (await paying({ fetch: tampering(false) }).price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toBeInstanceOf(MarketgateError);
    expect(err).toMatchObject({ kind: 'receipt', status: 200, charged: true, payment: { scheme: 'exact', amount: '1000' } });
    expect(err.error).toMatch(/^the body received does not match its Content-Digest \(sha-256=:.+:; the bytes received hash to sha-256=:.+:\)$/);
  });

  it('a body changed with a Content-Digest to match is caught by the digest the receipt binds (verifyReceipts)', async () => {
    const err = (await paying({ fetch: tampering(true), verifyReceipts: true }).price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toMatchObject({ kind: 'receipt', status: 200, charged: true });
    expect(err.error).toMatch(/^the receipt does not match this call: it binds sha-256=:.+:, and the body received hashes to sha-256=:.+:$/);
    // Unverified, the same answer goes through; the receipt read shows the digest it binds is not the body's.
    const unverified = await paying({ fetch: tampering(true) }).request('/v1/price', { symbol: 'BTC' });
    expect(unverified.envelope.data.price).toBe(1);
    expect(unverified.receipt!.verified).toBe(false);
    expect(unverified.receipt!.contentDigest).not.toBe(unverified.contentDigest);
  });

  it('a receipt checked against another key is refused: its signature does not verify', async () => {
    const other = publishedSigningKey(`0x${'12'.repeat(32)}`);
    const err = (await paying({ verifyReceipts: other }).price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toMatchObject({ kind: 'receipt', charged: true });
    expect(err.error).toBe("the receipt's signature does not verify against the server's key (signature verification failed)");
  });

  it('verifyReceipts: true against a server that publishes no key: a receipt error saying so (the payment still charged)', async () => {
    const noKey: typeof fetch = async (input, init) =>
      String(input).endsWith('/.well-known/agent.json') ? Response.json({ securitySchemes: { x402: { receipts: null } } }) : fetch(input, init);
    const err = (await paying({ fetch: noKey, verifyReceipts: true }).price({ symbol: 'BTC' }).catch((e: unknown) => e)) as MarketgateError;
    expect(err).toMatchObject({ kind: 'receipt', charged: true });
    expect(err.error).toMatch(/^the server publishes no receipt key/);
  });

  it('an invalid verifyReceipts is a config error naming it', () => {
    expect(() => createClient({ baseUrl: w.base, verifyReceipts: { jwk: { kty: 'RSA', crv: '', x: '', y: '' } } })).toThrow(/^verifyReceipts: must be true/);
    expect(() => createClient({ baseUrl: w.base, verifyReceipts: {} })).toThrow(/^verifyReceipts: must be true/);
  });
});
