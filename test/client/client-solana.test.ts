// marketgate/client paying from a Solana wallet (`solanaWallet`), on real parts: the client's @x402/svm `exact`
// scheme signs real SPL Token transfers, the official @x402/svm facilitator verifies and settles them against
// LiteSVM (test/payments/svm/ledger.ts), and marketgate offers Base and Solana side by side. Asserted on the
// ledgers: the payer's token balance falls by exactly the price; with both wallets `prefer` picks which one pays;
// maxSpendUsd is one limit across both.
import { generateKeyPairSync } from 'node:crypto';
import { generateKeyPairSigner, getBase58Decoder, type Address } from '@solana/kit';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MarketgateError, type ClientOptions } from '../../src/client/index.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { startSolanaLedger, type SolanaLedger } from '../payments/svm/ledger.ts';
import { listeningApp, paidWorldEnv, startPaidWorld, type PaidWorld } from '../payments/world.ts';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
let world: PaidWorld;
let ledger: SolanaLedger;
let app: FastifyInstance;
let base: string;
let payTo: Address;

/** A fresh Solana keypair as a wallet exports it: 64 bytes (seed, public key) in base58, and its address. */
function solanaKey(): { secret: string; address: Address } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const b58 = getBase58Decoder();
  return { secret: b58.decode(Buffer.concat([seed, pub])), address: b58.decode(pub) as Address };
}

/** A funded Solana payer (5 tokens). */
async function fundedSolana(): Promise<{ secret: string; address: Address }> {
  const key = solanaKey();
  await ledger.fund(key.address, 5_000_000n);
  return key;
}

beforeAll(async () => {
  ledger = await startSolanaLedger();
  const feePayer = await generateKeyPairSigner();
  payTo = (await generateKeyPairSigner()).address;
  ledger.airdrop(feePayer.address, 10n);
  await ledger.fund(payTo, 0n);
  world = await startPaidWorld({ payerIndex: 42, payToIndex: 43, facilitator: { svm: { feePayer, rpcUrl: ledger.rpcUrl, network: DEVNET } } });
  ({ app, base } = await listeningApp({
    DATA_DIR: await pgliteDataDir(),
    ...paidWorldEnv(world),
    X402_SVM_PAY_TO: payTo,
    X402_SVM_NETWORK: 'devnet',
    X402_SVM_ASSET: ledger.mint,
    X402_SVM_RPC_URL: ledger.rpcUrl,
  }));
}, 90_000);

afterAll(async () => {
  await app?.close();
  await world?.close();
  await ledger?.close();
  removeTempDirs();
});

const PRICE = '/v1/price';
const evmKey = () => `0x${Buffer.from(world.payer.getHdKey().privateKey!).toString('hex')}` as const;

/** A client over this world: the test token on the local chain and the test mint on the local Solana runtime. */
function client(options: Partial<ClientOptions>) {
  return createClient({
    baseUrl: base,
    assets: [
      { network: world.chain.network, asset: world.fx.usdc, decimals: 6 },
      { network: DEVNET, asset: ledger.mint, decimals: 6 },
    ],
    rpcUrls: { [DEVNET]: ledger.rpcUrl },
    ...options,
  });
}

describe('createClient({ solanaWallet })', () => {
  it('a client with only a Solana wallet pays a call: 200, and its token balance falls by exactly the price', async () => {
    const key = await fundedSolana();
    const before = { payer: await ledger.balance(key.address), payTo: await ledger.balance(payTo) };
    const c = client({ solanaWallet: key.secret });
    expect(c.payer).toBe(key.address);
    expect(c.solanaPayer).toBe(key.address);
    const res = await c.request(PRICE, { symbol: 'BTC' });
    expect(res.status).toBe(200);
    expect((res.envelope as { data: { symbol: string } }).data.symbol).toBe('BTC/USDT');
    expect(res.payment).toMatchObject({ scheme: 'exact', network: DEVNET, amount: '1000', asset: ledger.mint, settle: { success: true, payer: key.address } });
    expect(before.payer - (await ledger.balance(key.address))).toBe(1000n);
    expect((await ledger.balance(payTo)) - before.payTo).toBe(1000n);
    expect(c.spending()).toMatchObject({ spentUsd: '0.001', heldUsd: '0' });
    const row = (await app.services.paymentRecords.list({})).find((r) => r.tx_hash === res.payment!.settle!.transaction);
    expect(row).toMatchObject({ status: 'settled', network: DEVNET, payer: key.address });
  });

  it("with both wallets, Base pays by default and `prefer: 'solana'` pays from Solana", async () => {
    const key = await fundedSolana();
    const solBefore = await ledger.balance(key.address);
    const baseBefore = (await world.balances()).payer;

    const onBase = await client({ wallet: evmKey(), solanaWallet: key.secret }).request(PRICE, { symbol: 'BTC' });
    expect(onBase.payment).toMatchObject({ network: world.chain.network, settle: { success: true, payer: world.payer.address } });
    expect(baseBefore - (await world.balances()).payer).toBe(1000n);
    expect(await ledger.balance(key.address)).toBe(solBefore);

    const onSolana = await client({ wallet: evmKey(), solanaWallet: key.secret, prefer: 'solana' }).request(PRICE, { symbol: 'BTC' });
    expect(onSolana.payment).toMatchObject({ network: DEVNET, settle: { success: true, payer: key.address } });
    expect(solBefore - (await ledger.balance(key.address))).toBe(1000n);
    expect(baseBefore - (await world.balances()).payer).toBe(1000n);
  });

  it('maxSpendUsd is one limit across both wallets: a Base and a Solana payment fill $0.002, the third is refused unsigned', async () => {
    const key = await fundedSolana();
    const c = client({ wallet: evmKey(), solanaWallet: key.secret, maxSpendUsd: 0.002 });
    expect((await c.request(PRICE, { symbol: 'BTC' })).payment?.network).toBe(world.chain.network); // Base, the default
    // The route's terms as a document declaring only the Solana offer: the same client pays from its Solana wallet.
    expect(c.learnTerms(await onlyOffer(DEVNET))).toBe(1);
    expect((await c.request(PRICE, { symbol: 'BTC' })).payment?.network).toBe(DEVNET);
    const solBefore = await ledger.balance(key.address);
    const baseBefore = (await world.balances()).payer;
    const third = await c.request(PRICE, { symbol: 'BTC' }).catch((e: unknown) => e);
    expect(third).toBeInstanceOf(MarketgateError);
    expect(third).toMatchObject({ kind: 'spend-limit' });
    expect(c.spending()).toMatchObject({ limitUsd: '0.002', spentUsd: '0.002', heldUsd: '0' });
    expect(await ledger.balance(key.address)).toBe(solBefore);
    expect((await world.balances()).payer).toBe(baseBefore);
  });

  it('a Solana payment leaves that much less for Base: after $0.001 from Solana of $0.0015, Base is not paid', async () => {
    const key = await fundedSolana();
    const c = client({ wallet: evmKey(), solanaWallet: key.secret, prefer: 'solana', maxSpendUsd: 0.0015 });
    expect((await c.request(PRICE, { symbol: 'BTC' })).payment?.network).toBe(DEVNET);
    c.learnTerms(await onlyOffer(world.chain.network));
    const baseBefore = (await world.balances()).payer;
    await expect(c.request(PRICE, { symbol: 'BTC' })).rejects.toMatchObject({ kind: 'spend-limit' });
    expect((await world.balances()).payer).toBe(baseBefore);
  });

  it('a bad key or prefer is refused when the client is made, naming the option', () => {
    const key = solanaKey();
    expect(() => createClient({ baseUrl: base, solanaWallet: 'not base58 0OIl' })).toThrow(/solanaWallet/);
    expect(() => createClient({ baseUrl: base, solanaWallet: key.address })).toThrow(/solanaWallet.*64-byte/);
    const other = solanaKey();
    // The seed of one key with the public key of another.
    const swapped = getBase58Decoder().decode(Buffer.concat([Buffer.from(bytesOf(key.secret).subarray(0, 32)), Buffer.from(bytesOf(other.secret).subarray(32))]));
    expect(() => createClient({ baseUrl: base, solanaWallet: swapped })).toThrow(/not a Solana keypair/);
    expect(() => createClient({ baseUrl: base, solanaWallet: key.secret, prefer: 'ethereum' as 'base' })).toThrow(/prefer/);
    expect(createClient({ baseUrl: base, solanaWallet: Array.from(bytesOf(key.secret)) }).solanaPayer).toBe(key.address);
  });
});

/** An OpenAPI document declaring /v1/price's terms as marketgate's 402 gives them, with only the offer on `network`. */
async function onlyOffer(network: string): Promise<unknown> {
  const required = decodePaymentRequiredHeader((await fetch(`${base}${PRICE}?symbol=BTC`)).headers.get('payment-required')!);
  const accepts = required.accepts.filter((a) => a.network === network);
  expect(accepts).toHaveLength(1);
  return { paths: { [PRICE]: { get: { 'x-payment-info': { protocols: [{ x402: { x402Version: 2, accepts, extensions: required.extensions } }] } } } } };
}

function bytesOf(base58: string): Uint8Array {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let n = 0n;
  for (const ch of base58) n = n * 58n + BigInt(alphabet.indexOf(ch));
  const hex = n.toString(16).padStart(128, '0');
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
