// x402 `exact` on Solana beside Base's, end to end on real parts: the official @x402/svm client signs real SPL
// Token transfers, the official @x402/svm facilitator verifies and settles them against LiteSVM (a local Solana
// runtime, behind the JSON-RPC fixture of test/payments/svm/ledger.ts), and the server offers, verifies, settles,
// records and reads outcomes through its exact-svm scheme (src/payments/schemes/exact-svm/).
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { tokenDecimals } from '../../src/payments/networks.ts';
import type { PaymentRecord } from '../../src/db/payment-rows.ts';
import { pgliteDataDir, removeTempDirs } from '../db-helpers.ts';
import { parseScrape } from '../fakes/prometheus-text.ts';
import { startSolanaLedger, type SolanaLedger } from './svm/ledger.ts';
import { listeningApp, paidWorldEnv, PRICE, startPaidWorld, type PaidWorld } from './world.ts';
import { payingClient } from './x402/paying.ts';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
let world: PaidWorld;
let ledger: SolanaLedger;
let payer: KeyPairSigner;
let payTo: KeyPairSigner;

beforeAll(async () => {
  ledger = await startSolanaLedger();
  const feePayer = await generateKeyPairSigner();
  payer = await generateKeyPairSigner();
  payTo = await generateKeyPairSigner();
  ledger.airdrop(feePayer.address, 10n);
  await ledger.fund(payer.address, 5_000_000n);
  await ledger.fund(payTo.address, 0n);
  world = await startPaidWorld({ payerIndex: 40, payToIndex: 41, facilitator: { svm: { feePayer, rpcUrl: ledger.rpcUrl, network: DEVNET } } });
}, 60_000);

afterAll(async () => {
  await world?.close();
  await ledger?.close();
  removeTempDirs();
});

/** The variables of a server taking Base and Solana payments over the test chain, ledger and facilitator. */
const svmEnv = (rpc = true) => ({
  X402_SVM_PAY_TO: payTo.address,
  X402_SVM_NETWORK: 'devnet',
  X402_SVM_ASSET: ledger.mint,
  ...(rpc ? { X402_SVM_RPC_URL: ledger.rpcUrl } : {}),
});

/** A payer's client paying from Solana only (the stock x402 client with @x402/svm's exact scheme). */
function solanaClient(): x402Client {
  const client = new x402Client();
  client.register(DEVNET, new ExactSvmScheme(payer, { rpcUrl: ledger.rpcUrl }));
  client.setSpendControls({ allowedAssets: [{ network: DEVNET, asset: ledger.mint, maxAmountPerPayment: '10000' }] });
  return client;
}

/** A Solana payment for PRICE, signed from its 402, not sent yet. */
async function signSolana(base: string): Promise<string> {
  const required: PaymentRequired = decodePaymentRequiredHeader((await fetch(`${base}${PRICE}`)).headers.get('payment-required')!);
  return encodePaymentSignatureHeader(await solanaClient().createPaymentPayload(required));
}

const solanaBalances = async () => ({ payer: await ledger.balance(payer.address), payTo: await ledger.balance(payTo.address) });

describe('Solana settings', () => {
  it('an invalid value stops start-up naming the variable; mainnet and its USDC by default', () => {
    expect(() => loadConfig({ X402_SVM_PAY_TO: 'not-an-address' })).toThrow(/X402_SVM_PAY_TO/);
    expect(() => loadConfig({ X402_SVM_PAY_TO: payTo.address, X402_SVM_NETWORK: 'solana:unknownGenesis' })).toThrow(/X402_SVM_NETWORK/);
    expect(() => loadConfig({ X402_SVM_PAY_TO: payTo.address, X402_SVM_ASSET: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' })).toThrow(/X402_SVM_ASSET/);
    expect(() => loadConfig({ X402_SVM_PAY_TO: payTo.address, X402_SVM_RPC_URL: 'not a url' })).toThrow(/X402_SVM_RPC_URL/);
    expect(loadConfig({ X402_SVM_PAY_TO: payTo.address }).x402.svm).toEqual({
      network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      payTo: payTo.address,
      asset: { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 },
      rpcUrl: undefined,
    });
    expect(loadConfig({}).x402.svm).toBeUndefined();
  });
});

describe("a Solana token's decimals, for revenue (tokenDecimals)", () => {
  it('the USDC mints of the Solana networks are 6, case-sensitive; a configured mint takes its decimals', () => {
    expect(tokenDecimals('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')).toBe(6);
    expect(tokenDecimals('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU')).toBe(6);
    expect(tokenDecimals('epjfwdd5aufqssqem2qn1xzybapc8g4wegGkZwyTDt1v')).toBeUndefined();
    expect(tokenDecimals('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913')).toBe(6);
    expect(tokenDecimals(ledger.mint)).toBeUndefined();
    expect(tokenDecimals(ledger.mint, [undefined, { address: ledger.mint, decimals: 6 }])).toBe(6);
  });
});

describe('x402 exact on Solana beside Base', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    ({ app, base } = await listeningApp({ DATA_DIR: await pgliteDataDir(), ...paidWorldEnv(world), ...svmEnv(), METRICS_TOKEN: 'metrics-token-for-svm-tests' }));
  }, 60_000);
  afterAll(async () => app?.close());
  const rows = (): Promise<PaymentRecord[]> => app.services.paymentRecords.list({});

  it('the 402 offers exact on Base, then exact on Solana with the facilitator as fee payer', async () => {
    const res = await fetch(`${base}${PRICE}`);
    expect(res.status).toBe(402);
    const { accepts } = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(accepts.map((a) => [a.scheme, a.network])).toEqual([
      ['exact', 'eip155:31337'],
      ['exact', DEVNET],
    ]);
    expect(accepts[1]).toMatchObject({ asset: ledger.mint, payTo: payTo.address, amount: '1000', extra: { feePayer: expect.any(String) } });
  });

  it("discovery lists both networks: the 402 body's networks, /openapi.json's x-payment-info, the agent card's x402", async () => {
    const body = (await (await fetch(`${base}${PRICE}`)).json()) as { network: string; networks: string[] };
    expect(body.networks).toEqual(['eip155:31337', DEVNET]);
    expect(body.network).toBe('eip155:31337');
    // With the terms of both, exactly as the 402 states them (once the payment table is ready).
    await app.reference.termsPublished();
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, { get: { 'x-payment-info'?: unknown } }> };
    const { accepts } = decodePaymentRequiredHeader((await fetch(`${base}${PRICE}`)).headers.get('payment-required')!);
    expect(doc.paths['/v1/price']!.get['x-payment-info']).toEqual({
      price: { mode: 'fixed', amount: '0.001', currency: 'USD' },
      protocols: [{ x402: { networks: ['eip155:31337', DEVNET], x402Version: 2, accepts, extensions: { 'payment-identifier': expect.any(Object) } } }],
    });
    expect(accepts.map((a) => a.network)).toEqual(['eip155:31337', DEVNET]);
    const card = (await (await fetch(`${base}/.well-known/agent.json`)).json()) as { securitySchemes: { x402: { networks: unknown } } };
    expect(card.securitySchemes.x402.networks).toEqual([
      { scheme: 'exact', network: 'eip155:31337', asset: world.fx.usdc, payTo: world.payTo },
      { scheme: 'exact', network: DEVNET, asset: ledger.mint, payTo: payTo.address },
    ]);
      // /llms.txt names the Solana terms beside Base's, so an agent reading it knows it can pay from either.
    const llms = await (await fetch(`${base}/llms.txt`)).text();
    expect(llms).toContain(`; or the same price in the token ${ledger.mint} on ${DEVNET}, to ${payTo.address}.`);
  });

  it("a Solana payment: 200 with the data, the payer's balance falls by exactly the price, one ledger row with network, base58 payer and signature", async () => {
    const before = await solanaBalances();
    const known = new Set((await rows()).map((r) => r.id));
    const res = await wrapFetchWithPayment(fetch, solanaClient())(`${base}${PRICE}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.symbol).toBe('BTC/USDT');
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: DEVNET, payer: payer.address });
    const after = await solanaBalances();
    expect(before.payer - after.payer).toBe(1000n);
    expect(after.payTo - before.payTo).toBe(1000n);
    const mine = (await rows()).filter((r) => !known.has(r.id));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ status: 'settled', scheme: 'exact', network: DEVNET, payer: payer.address, tx_hash: settled.transaction, settled_amount: '1000' });
    expect(ledger.sent.filter((t) => t.signature === settled.transaction)).toHaveLength(1);
  });

  it('the same payment replayed is refused, and one sent twice at once is settled once', async () => {
    const header = await signSolana(base);
    const before = await solanaBalances();
    const [a, b] = await Promise.all([1, 2].map(() => fetch(`${base}${PRICE}`, { headers: { 'payment-signature': header } })));
    expect([a!.status, b!.status].sort()).toEqual([200, 402]);
    const replay = await fetch(`${base}${PRICE}`, { headers: { 'payment-signature': header } });
    expect(replay.status).toBe(402);
    const after = await solanaBalances();
    expect(before.payer - after.payer).toBe(1000n);
  });

  it('metrics carry the network: payments_total counts Solana and Base payments apart', async () => {
    const scrape = async () => parseScrape(await (await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer metrics-token-for-svm-tests' } })).text());
    const before = await scrape();
    const res = await wrapFetchWithPayment(fetch, solanaClient())(`${base}${PRICE}`);
    expect(res.status).toBe(200);
    const after = await scrape();
    const moved = (outcome: string, network: string) => after.value('marketgate_payments_total', { outcome, network }) - before.value('marketgate_payments_total', { outcome, network });
    expect([moved('verified', DEVNET), moved('settled', DEVNET)]).toEqual([1, 1]);
    expect([moved('verified', 'eip155:31337'), moved('settled', 'eip155:31337')]).toEqual([0, 0]);
    // Both networks' counters exist from the start (at 0 until a payment).
    expect(after.matching('marketgate_payments_total', { outcome: 'unknown' }).map((s) => s.labels.network).sort()).toEqual(['eip155:31337', DEVNET].sort());
  });

  it("settling costs count Solana's paid calls and revenue under its network (the token's decimals known)", async () => {
    const scrape = async () => parseScrape(await (await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer metrics-token-for-svm-tests' } })).text());
    const s = await scrape();
    const calls = s.value('marketgate_x402_paid_calls_total', { scheme: 'exact', network: DEVNET });
    expect(calls).toBeGreaterThan(0);
    // $0.001 a call: revenue is there (not null for an unknown token) and matches the calls.
    expect(s.value('marketgate_x402_revenue_usd_total', { scheme: 'exact', network: DEVNET })).toBeCloseTo(calls * 0.001, 9);
    expect(s.matching('marketgate_x402_revenue_usd_total', { network: DEVNET })).toHaveLength(1);
  });

  it('a Base payment and a Solana payment on one server both land in the ledger with their networks', async () => {
    const baseRes = await wrapFetchWithPayment(fetch, payingClient(world.payer, world.setting()))(`${base}${PRICE}`);
    expect(baseRes.status).toBe(200);
    const solRes = await wrapFetchWithPayment(fetch, solanaClient())(`${base}${PRICE}`);
    expect(solRes.status).toBe(200);
    const networks = new Set((await rows()).filter((r) => r.status === 'settled').map((r) => r.network));
    expect([...networks].sort()).toEqual(['eip155:31337', DEVNET].sort());
  });

  it("a settle whose answer is lost is read from the runtime's signature status: 200, charged once; a retry gets no second charge", async () => {
    const header = await signSolana(base);
    const before = await solanaBalances();
    const asked = ledger.calls.getSignaturesForAddress ?? 0;
    world.fac.state.mode = 'lose-settle-answer';
    try {
      const res = await fetch(`${base}${PRICE}`, { headers: { 'payment-signature': header } });
      expect(res.status).toBe(200);
      const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(settled.transaction).toBe(ledger.sent.at(-1)!.signature);
    } finally {
      world.fac.state.mode = 'ok';
    }
    const retry = await fetch(`${base}${PRICE}`, { headers: { 'payment-signature': header } });
    expect(retry.status).toBe(402);
    const after = await solanaBalances();
    expect(before.payer - after.payer).toBe(1000n);
    // The server's outcome reader asked the runtime (only it looks up the payer's transactions).
    expect(ledger.calls.getSignaturesForAddress).toBeGreaterThan(asked);
    const row = (await rows()).find((r) => r.tx_hash === ledger.sent.at(-1)!.signature);
    expect(row).toMatchObject({ status: 'settled', network: DEVNET, payer: payer.address });
  });
});
