// Signed offers and receipts (X402_SIGNING_KEY, the x402 offer-receipt extension), end to end on the local chain:
// every 402's offers verify with the package's own verifyOfferSignatureJWS against the key the agent card and
// /openapi.json publish; a paid answer carries Content-Digest (sha-256 of the bytes received) and a receipt that
// verifies with verifyReceiptSignatureJWS and binds that digest in its JWS header; a replay of the paid answer
// and a settle recovered from the chain carry them too; without the key nothing is signed and no header is added.
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import {
  extractJWSHeader,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  findAcceptsObjectFromSignedOffer,
  verifyOfferSignatureJWS,
  verifyReceiptSignatureJWS,
  type JWSSignedOffer,
  type JWSSignedReceipt,
} from '@x402/extensions/offer-receipt';
import { wrapFetchWithPayment, type x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import { privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteDataDir } from '../db-helpers.ts';
import { makeApp } from '../helpers.ts';
import { startWorld, type World } from '../client/world.ts';
import { paidEnv, payingClient } from './x402/paying.ts';
import { publishedSigningKey } from '../../src/payments/core/signing-key.ts';

const SIGNING_KEY = `0x${'5a'.repeat(32)}` as const;
const PRICE = '/v1/price?symbol=BTC';

let w: World;
let client: x402Client;
/** The id the paying client puts into its next payment (none when empty). */
let nextId = '';
/** The same chain, facilitator and exchange, served by an app without X402_SIGNING_KEY. */
let unsigned: { app: FastifyInstance; base: string };

beforeAll(async () => {
  w = await startWorld({ payerIndex: 11, facilitatorProxy: true, env: { X402_SIGNING_KEY: SIGNING_KEY } });
  client = payingClient(w.payer, w.asset, { identifier: () => nextId });
  const { app } = await makeApp({
    ...paidEnv({ network: w.chain.network, asset: w.fx.usdc, payTo: w.payTo, facilitator: w.fac.url, exchange: w.upstream.url }),
    DATA_DIR: await pgliteDataDir(),
  });
  await app.services.db.ready();
  await app.listen({ host: '127.0.0.1', port: 0 });
  unsigned = { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}, 60_000);

afterAll(async () => {
  await unsigned?.app.close();
  await w?.close();
});

interface PublishedKey {
  format: string;
  alg: string;
  kid: string;
  jwk: { kty: 'EC'; crv: 'secp256k1'; x: string; y: string };
  address: string;
}

/** The key the agent card publishes (securitySchemes.x402.receipts). */
async function publishedKey(base = w.base): Promise<PublishedKey | null> {
  const card = (await (await fetch(`${base}/.well-known/agent.json`)).json()) as { securitySchemes: { x402: { receipts: PublishedKey | null } } };
  return card.securitySchemes.x402.receipts;
}

const challenge = async (base = w.base): Promise<PaymentRequired> => decodePaymentRequiredHeader((await fetch(`${base}${PRICE}`)).headers.get('payment-required')!);
const sha256 = (bytes: Uint8Array) => `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
const resourceUrl = () => `${w.app.services.config.publicBaseUrl}/v1/price`;

/** A paid call through the official @x402/fetch client, its body read as bytes. */
async function paidCall(base = w.base, id = '') {
  nextId = id;
  try {
    const res = await wrapFetchWithPayment(fetch, client)(`${base}${PRICE}`);
    return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
  } finally {
    nextId = '';
  }
}

describe('signed offers (X402_SIGNING_KEY)', () => {
  it('the agent card and /openapi.json publish the public key: its JWK, its did:jwk kid, and the EVM address of the signing key', async () => {
    const key = (await publishedKey())!;
    expect(key).toMatchObject({ format: 'jws', alg: 'ES256K', jwk: { kty: 'EC', crv: 'secp256k1' } });
    expect(key.address).toBe(privateKeyToAddress(SIGNING_KEY));
    expect(key.kid).toBe(`did:jwk:${Buffer.from(JSON.stringify(key.jwk)).toString('base64url')}`);
    const doc = (await (await fetch(`${w.base}/openapi.json`)).json()) as { 'x-x402': { receipts: PublishedKey } };
    expect(doc['x-x402'].receipts).toEqual(key);
    const status = (await (await fetch(`${w.base}/v1/status`)).json()) as { data: { access: { x402: { receipts: PublishedKey } } } };
    expect(status.data.access.x402.receipts).toEqual(key);
    expect(await (await fetch(`${w.base}/llms.txt`)).text()).toContain(`Key id: ${key.kid}; address ${key.address}.`);
  });

  it("every 402 carries one signed offer per accepts entry, verified by the package's verifyOfferSignatureJWS against the published key", async () => {
    const key = (await publishedKey())!;
    const required = await challenge();
    const offers = extractOffersFromPaymentRequired(required) as JWSSignedOffer[];
    expect(offers).toHaveLength(required.accepts.length);
    for (const [i, offer] of offers.entries()) {
      expect(offer).toMatchObject({ format: 'jws', acceptIndex: i });
      expect(extractJWSHeader(offer.signature)).toEqual({ alg: 'ES256K', kid: key.kid });
      const payload = await verifyOfferSignatureJWS(offer, key.jwk);
      const accept = required.accepts[i]!;
      expect(payload).toEqual({
        version: 1,
        resourceUrl: resourceUrl(),
        scheme: 'exact',
        network: w.chain.network,
        asset: accept.asset,
        payTo: w.payTo,
        amount: '1000',
        validUntil: expect.any(Number),
      });
      expect(findAcceptsObjectFromSignedOffer(offer, required.accepts)).toBe(accept);
      // Valid for as long as a payment's authorization may be (X402_MAX_TIMEOUT_S).
      expect(payload.validUntil - Math.floor(Date.now() / 1000)).toBeGreaterThan(accept.maxTimeoutSeconds - 5);
      expect(payload.validUntil - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(accept.maxTimeoutSeconds);
    }
  });

  it('a 402 that refuses a payment and asks for a new one (an authorization valid too long) carries the signed offers too', async () => {
    const required = await challenge();
    const offered = required.accepts[0]!;
    const payload = await client.createPaymentPayload({ ...required, accepts: [{ ...offered, maxTimeoutSeconds: 3600 }] });
    payload.accepted = offered;
    const res = await fetch(`${w.base}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) } });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { reason: string }).reason).toMatch(/^authorization_valid_too_long/);
    const offers = extractOffersFromPaymentRequired(decodePaymentRequiredHeader(res.headers.get('payment-required')!)) as JWSSignedOffer[];
    expect(offers).toHaveLength(1);
    expect(await verifyOfferSignatureJWS(offers[0]!, (await publishedKey())!.jwk)).toMatchObject({ scheme: 'exact', amount: '1000', resourceUrl: resourceUrl() });
  });

  it('an offer does not verify against another key, nor once its terms are changed', async () => {
    const offer = extractOffersFromPaymentRequired(await challenge())[0] as JWSSignedOffer;
    const other = publishedSigningKey(`0x${'11'.repeat(32)}`).jwk;
    await expect(verifyOfferSignatureJWS(offer, other)).rejects.toThrow('signature verification failed');
    const [header, payload, signature] = offer.signature.split('.');
    const cheaper = Buffer.from(Buffer.from(payload!, 'base64url').toString().replace('"amount":"1000"', '"amount":"1"')).toString('base64url');
    await expect(verifyOfferSignatureJWS({ ...offer, signature: `${header}.${cheaper}.${signature}` }, (await publishedKey())!.jwk)).rejects.toThrow('signature verification failed');
  });
});

describe('signed receipts and Content-Digest (X402_SIGNING_KEY)', () => {
  it('a paid 200 carries Content-Digest of its exact bytes and a receipt that verifies and binds that digest', async () => {
    const key = (await publishedKey())!;
    const { res, bytes } = await paidCall();
    expect(res.status).toBe(200);
    const digest = res.headers.get('content-digest');
    expect(digest).toBe(sha256(bytes));
    const settle = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    const receipt = extractReceiptFromResponse(res) as JWSSignedReceipt;
    expect(receipt.format).toBe('jws');
    const payload = await verifyReceiptSignatureJWS(receipt, key.jwk);
    expect(payload).toEqual({ version: 1, network: w.chain.network, resourceUrl: resourceUrl(), payer: w.payer.address, issuedAt: expect.any(Number), transaction: settle.transaction });
    expect(settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Math.abs(payload.issuedAt - Date.now() / 1000)).toBeLessThan(60);
    // The digest is in the JWS protected header, which the signature covers.
    expect(extractJWSHeader(receipt.signature)).toEqual({ alg: 'ES256K', kid: key.kid, 'content-digest': digest });
    const [, body, signature] = receipt.signature.split('.');
    const otherDigest = Buffer.from(JSON.stringify({ alg: 'ES256K', kid: key.kid, 'content-digest': sha256(Buffer.from('{}')) })).toString('base64url');
    await expect(verifyReceiptSignatureJWS({ format: 'jws', signature: `${otherDigest}.${body}.${signature}` }, key.jwk)).rejects.toThrow('signature verification failed');
  });

  it('the same payment sent again (its identifier) gets the same bytes, the same Content-Digest and the same receipt', async () => {
    const required = await challenge();
    nextId = 'pay_receipt_replay_000001';
    const signature = encodePaymentSignatureHeader(await client.createPaymentPayload(required));
    nextId = '';
    const first = await fetch(`${w.base}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    const firstBytes = new Uint8Array(await first.arrayBuffer());
    expect(first.status).toBe(200);
    const settles = w.fac.state.calls.settle;
    const again = await fetch(`${w.base}${PRICE}`, { headers: { 'PAYMENT-SIGNATURE': signature } });
    const againBytes = new Uint8Array(await again.arrayBuffer());
    expect(again.status).toBe(200);
    expect(w.fac.state.calls.settle).toBe(settles); // replayed, not settled again
    expect(Buffer.from(againBytes).equals(Buffer.from(firstBytes))).toBe(true);
    expect(again.headers.get('content-digest')).toBe(sha256(againBytes));
    expect(again.headers.get('content-digest')).toBe(first.headers.get('content-digest'));
    const receipt = extractReceiptFromResponse(again) as JWSSignedReceipt;
    expect(receipt).toEqual(extractReceiptFromResponse(first));
    await verifyReceiptSignatureJWS(receipt, (await publishedKey())!.jwk);
    expect(extractJWSHeader(receipt.signature)['content-digest' as 'kid']).toBe(sha256(againBytes));
  });

  it("a settle whose answer was lost, found landed on the chain: the call is answered with its receipt and Content-Digest", async () => {
    // The SDK returns a settlement recovered this way without running its extensions: the receipt is added by marketgate.
    let dropped = false;
    w.facProxy!.decide = (r) => (r.path === '/settle' && !dropped ? ((dropped = true), { kind: 'drop-after' }) : { kind: 'forward' });
    try {
      const before = await w.fx.balanceOf(w.payer.address);
      const { res, bytes } = await paidCall();
      expect(dropped).toBe(true);
      expect(res.status).toBe(200);
      expect(await w.fx.balanceOf(w.payer.address)).toBe(before - 1000n);
      expect(res.headers.get('content-digest')).toBe(sha256(bytes));
      const receipt = extractReceiptFromResponse(res) as JWSSignedReceipt;
      const payload = await verifyReceiptSignatureJWS(receipt, (await publishedKey())!.jwk);
      expect(payload).toMatchObject({ payer: w.payer.address, resourceUrl: resourceUrl(), transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      expect(extractJWSHeader(receipt.signature)['content-digest' as 'kid']).toBe(sha256(bytes));
    } finally {
      w.facProxy!.decide = () => ({ kind: 'forward' });
    }
  }, 40_000);

  it('a failed paid call (an upstream 502) is cancelled: no receipt, no Content-Digest', async () => {
    w.upstream.route('GET /api/v3/ticker/24hr', { status: 451, body: { code: 0, msg: 'restricted' } });
    w.upstream.route('GET /products/BTC-USD/ticker', { status: 500, body: 'down' });
    try {
      const { res } = await paidCall();
      expect(res.status).toBe(502);
      expect(res.headers.get('content-digest')).toBeNull();
      expect(extractReceiptFromResponse(res)).toBeUndefined();
    } finally {
      w.serveNormally();
    }
  });
});

describe('without X402_SIGNING_KEY', () => {
  it('nothing is signed: no offers, no receipt, no Content-Digest, no published key', async () => {
    const required = await challenge(unsigned.base);
    expect(required.extensions?.['offer-receipt']).toBeUndefined();
    expect(extractOffersFromPaymentRequired(required)).toEqual([]);
    const { res } = await paidCall(unsigned.base);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-digest')).toBeNull();
    expect(res.headers.get('payment-response')).toBeTruthy();
    expect(extractReceiptFromResponse(res)).toBeUndefined();
    expect(await publishedKey(unsigned.base)).toBeNull();
    const doc = (await (await fetch(`${unsigned.base}/openapi.json`)).json()) as { 'x-x402': { receipts: unknown } };
    expect(doc['x-x402'].receipts).toBeNull();
  });
});
