// The batch-settlement channel storage over the ledger database, then x402 batch-settlement through the real server (X402_BATCH_SETTLEMENT=true): the in-process EDR chain with
// the batch-settlement contracts at the SDK's addresses, a local facilitator offering exact and
// batch-settlement (delegated receiver authorizer), channel state in a PGlite ledger database, the stock
// @x402/fetch client paying with BatchSettlementEvmScheme. Deposit → vouchers → a failed call (cancelled) →
// claim → settle → refund, every step in the ledger and every balance exact on chain; concurrent calls on
// one channel; a facilitator without batch-settlement leaves exact working.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient, computeChannelId } from '@x402/evm/batch-settlement/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createWalletClient, http, toHex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryChannelStorage, type Channel, type ChannelStorage } from '@x402/evm/batch-settlement/server';
import { buildApp } from '../../src/app.ts';
import { channelLeaseStore, createChannelStorage } from '../../src/db/x402-channels.ts';
import { LeasedChannels } from '../../src/payments/schemes/batch-settlement/channel-lease.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrations.ts';
import type { BatchSettlementEvent } from '../../src/payments/schemes/batch-settlement/batch-events.ts';
import { loadConfig } from '../../src/config.ts';
import { memoryDatabase } from '../db/pglite-database.ts';
import { recorded } from '../fixtures.ts';
import { OFFLINE_BASE_URLS } from '../helpers.ts';
import { accountAt, startPaidWorld, TICKER, type PaidWorld } from './world.ts';
import { MNEMONIC } from './x402/chain.ts';
import { startFacilitator } from './x402/facilitator.ts';

const PRICE = 1000n; // $0.001
const DEPOSIT = 100_000n; // X402_BATCH_DEPOSIT $0.10
const PATH = '/v1/price?symbol=BTC';
const payTo = accountAt(3).address;
const authorizer = accountAt(4).address; // the facilitator's receiver authorizer

let world: PaidWorld;
let chain: PaidWorld['chain'];
let fx: PaidWorld['fx'];
let bs: NonNullable<PaidWorld['bs']>;
let fac: PaidWorld['fac'];
let exchange: PaidWorld['exchange'];
let db: Awaited<ReturnType<typeof memoryDatabase>>;
const ledger: (BatchSettlementEvent & { at: Date })[] = [];
const apps: FastifyInstance[] = [];

/** A server over the test chain; batch-settlement events go to `ledger` (an array), or with `recordIn: 'database'` where the app itself puts them (x402_batch_events). */
async function startApp(facilitatorUrl: string, extraEnv: Record<string, string> = {}, recordIn: 'array' | 'database' = 'array') {
  const logs: string[] = [];
  const config = loadConfig({
    LOG_LEVEL: 'info',
    ...OFFLINE_BASE_URLS,
    X402_NETWORK: chain.network,
    X402_ASSET: fx.usdc,
    X402_ASSET_NAME: 'Test USDC',
    X402_PAY_TO: payTo,
    X402_FACILITATOR: facilitatorUrl,
    X402_FACILITATOR_TIMEOUT_MS: '3000',
    X402_BATCH_SETTLEMENT: 'true',
    BINANCE_SPOT_BASE_URL: exchange.url,
    COINBASE_BASE_URL: exchange.url,
    CACHE_TTL_PRICE_S: '0',
    ...extraEnv,
  });
  const logStream = new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) });
  const batchEventRecorder = recordIn === 'array' ? { record: (e: BatchSettlementEvent & { at: Date }) => void ledger.push(e) } : undefined;
  const app = await buildApp(config, { logStream: logStream as never, database: db, ...(batchEventRecorder ? { batchEventRecorder } : {}) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  apps.push(app);
  return { app, logs, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${PATH}` };
}

/** A payer with its own batch-settlement client (the stock fetch wrapper). */
async function payer(index: number, fund = 1_000_000n) {
  const account = accountAt(index);
  await fx.mint(account.address, fund);
  const scheme = new BatchClient(toClientEvmSigner(account, chain.publicClient));
  const client = new x402Client().register(chain.network, scheme);
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: fx.usdc, maxAmountPerPayment: '100000' }] });
  const config = { payer: account.address, payerAuthorizer: account.address, receiver: payTo, receiverAuthorizer: authorizer, token: fx.usdc, withdrawDelay: 900, salt: `0x${'00'.repeat(32)}` as const };
  const channelId = computeChannelId(config, chain.network);
  return { account, scheme, config, channelId, pay: wrapFetchWithPayment(fetch, client), start: fund };
}

beforeAll(async () => {
  // Payers are funded by each test (payer()): the world's funds none.
  world = await startPaidWorld({ payerIndex: 2, payToIndex: 3, fund: 0n, batch: true, chain: { allowBlocksWithSameTimestamp: true }, facilitator: { batch: { authorizerIndex: 4 } } });
  ({ chain, fx, fac, exchange } = world);
  bs = world.bs!;
  db = await memoryDatabase();
  await migrate(db);
  expect(await migrate(db)).toEqual([]); // idempotent: nothing left to apply
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  await world?.close();
  await db?.close();
});

const ofChannel = (channelId: string) => ledger.filter((e) => !('channelId' in e) || e.channelId === channelId).map(({ at: _at, ...e }) => e);

const id = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const channel = (n: number, charged = '0'): Channel => ({
  channelId: id(n),
  channelConfig: {
    payer: '0x1111111111111111111111111111111111111111',
    payerAuthorizer: '0x1111111111111111111111111111111111111111',
    receiver: '0x2222222222222222222222222222222222222222',
    receiverAuthorizer: '0x3333333333333333333333333333333333333333',
    token: '0x4444444444444444444444444444444444444444',
    withdrawDelay: 900,
    salt: `0x${'00'.repeat(32)}`,
  },
  chargedCumulativeAmount: charged,
  signedMaxClaimable: charged,
  signature: '0xabcd',
  balance: '100000',
  totalClaimed: '0',
  withdrawRequestedAt: 0,
  refundNonce: 0,
  onchainSyncedAt: 1_700_000_000_000,
  lastRequestTimestamp: 1_700_000_000_000,
  pendingRequest: { pendingId: 'p1', signedMaxClaimable: '1000', expiresAt: 1_700_000_060_000 },
});

/** The same script against a storage; returns everything observed. */
async function script(s: ChannelStorage) {
  const seen: unknown[] = [];
  seen.push(await s.get(id(1)));
  seen.push(await s.updateChannel(id(1), (c) => c)); // nothing there, nothing written
  seen.push(await s.updateChannel(id(1), () => undefined)); // deleting nothing
  seen.push(await s.updateChannel(id(1), () => channel(1)));
  seen.push(await s.updateChannel(id(2), () => channel(2, '3000')));
  seen.push(await s.updateChannel(id(1).toUpperCase().replace('0X', '0x'), (c) => ({ ...c!, chargedCumulativeAmount: '1000', pendingRequest: undefined })));
  seen.push(await s.get(id(1)));
  seen.push(await s.updateChannel(id(2), (c) => c)); // unchanged
  seen.push((await s.list()).map((c) => c.channelId).sort());
  seen.push(await s.updateChannel(id(2), () => undefined)); // deleted
  seen.push(await s.get(id(2)));
  seen.push((await s.list()).map((c) => c.channelId));
  seen.push(await s.updateChannel(id(2), (c) => (c ? c : channel(2, '7000')))); // reopened
  seen.push(await s.get(id(2)));
  return JSON.parse(JSON.stringify(seen)); // as stored: undefined fields drop out
}

describe('channel storage over the ledger database', () => {
  // Its own rows only: removed before the server tests use the same database.
  afterAll(() => db.query('DELETE FROM x402_channels'));

  it('answers like the SDK in-memory storage, call for call', async () => {
    const ours = await script(createChannelStorage(db));
    await db.query('DELETE FROM x402_channels');
    const sdk = await script(new InMemoryChannelStorage());
    expect(ours).toEqual(sdk);
    expect(ours[6]).toMatchObject({ chargedCumulativeAmount: '1000' }); // the script did something
    expect(ours.slice(1, 5).map((r: { status: string }) => r.status)).toEqual(['unchanged', 'unchanged', 'updated', 'updated']);
  });

  it('keeps read-modify-write atomic per channel under concurrent updates', async () => {
    const s = createChannelStorage(db);
    await s.updateChannel(id(9), () => channel(9, '0'));
    const bump = (c: Channel | undefined) => ({ ...c!, chargedCumulativeAmount: String(BigInt(c!.chargedCumulativeAmount) + 1000n) });
    await Promise.all(Array.from({ length: 40 }, () => s.updateChannel(id(9), bump)));
    expect((await s.get(id(9)))?.chargedCumulativeAmount).toBe('40000');
  });

  it('a closed channel keeps its row (the lock) with no state', async () => {
    const s = createChannelStorage(db);
    await s.updateChannel(id(2), () => channel(2, '3000'));
    await s.updateChannel(id(2), () => undefined);
    expect(await db.query('SELECT state FROM x402_channels WHERE channel_id = $1', [id(2)])).toEqual([{ state: null }]);
    expect(await s.get(id(2))).toBeUndefined();
  });

  it('refuses what is not a channel id, and the table refuses one written by hand', async () => {
    const s = createChannelStorage(db);
    await expect(s.get('0x1234')).rejects.toThrow('not a channel id: 0x1234');
    await expect(db.query("INSERT INTO x402_channels (channel_id) VALUES ('0xABC')")).rejects.toThrow();
  });
});

describe('x402 batch settlement through the server', () => {
  let server: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    server = await startApp(fac.url);
  });

  it('the 402 offers exact first, then batch-settlement with the delegated receiver authorizer, withdraw delay and deposit', async () => {
    const res = await fetch(server.url);
    expect(res.status).toBe(402);
    const { accepts } = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
    expect(accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(accepts[1]).toMatchObject({
      network: chain.network,
      amount: '1000',
      asset: fx.usdc,
      payTo,
      extra: { name: 'Test USDC', version: '2', receiverAuthorizer: authorizer, withdrawDelay: 900, minDeposit: '100000' },
    });
    expect(((await res.json()) as { accepts: unknown[] }).accepts).toEqual(accepts);
  });

  it('deposit → vouchers → a failed call, cancelled → claim → settle → refund; every step in the ledger, exact on chain', async () => {
    const p = await payer(5);
    const blockBefore = await chain.publicClient.getBlockNumber();
    const laneBefore = server.app.x402Batch!.voucherChecks().lane;

    // The first call opens the channel with the announced deposit.
    const first = await p.pay(server.url);
    expect(first.status).toBe(200);
    const deposit = decodePaymentResponseHeader(first.headers.get('payment-response')!);
    expect(deposit).toMatchObject({ success: true, amount: String(DEPOSIT), extra: { chargedAmount: '1000' } });
    expect(await bs.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });

    // Vouchers: no facilitator call, no transaction.
    const calls = { ...fac.state.calls };
    for (let i = 2; i <= 4; i++) {
      const res = await p.pay(server.url);
      expect(res.status).toBe(200);
      expect(decodePaymentResponseHeader(res.headers.get('payment-response')!)).toMatchObject({ transaction: '', extra: { channelState: { chargedCumulativeAmount: String(i * 1000) } } });
    }
    expect(fac.state.calls).toEqual(calls);

    // A failing handler cancels the voucher: nothing charged, and the channel is free at once for the next call
    // (without the cancel it would stay reserved for the payment timeout).
    exchange.route(`GET ${TICKER}`, { status: 500, body: 'down' });
    exchange.route('GET /products/BTC-USD/ticker', { status: 500, body: 'down' });
    const failed = await p.pay(server.url);
    expect(failed.status).toBe(502);
    expect(failed.headers.get('payment-response')).toBeNull();
    exchange.route(`GET ${TICKER}`, { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
    const t0 = performance.now();
    const after = await p.pay(server.url);
    expect(after.status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(2500); // a reserved channel would wait X402_FACILITATOR_TIMEOUT_MS (3000) first
    expect(decodePaymentResponseHeader(after.headers.get('payment-response')!).extra).toMatchObject({ channelState: { chargedCumulativeAmount: '5000' } });
    const charged = 5n * PRICE;
    // The SDK took the first voucher; the lane (voucher-lane.ts) the two after it, the failed call and the one after:
    // what the ledger shows below is the lane's recording.
    expect(server.app.x402Batch!.voucherChecks().lane - laneBefore).toBe(4);

    // The schedule's run: one claim and one settle transaction.
    const run = await server.app.x402Batch!.claimAndSettle();
    expect(run.claims).toHaveLength(1);
    expect(run.settle).toMatchObject({ amount: String(charged), receiver: payTo, token: fx.usdc });
    expect(await bs.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: charged });
    expect(await fx.balanceOf(payTo)).toBe(charged);

    // The payer takes its unused deposit back (a cooperative refund through the server; no handler runs).
    const tickerCalls = exchange.calls(TICKER).length;
    const refund = await p.scheme.refund(server.url);
    expect(refund).toMatchObject({ success: true, amount: String(DEPOSIT - charged) });
    expect(exchange.calls(TICKER)).toHaveLength(tickerCalls);
    expect(await fx.balanceOf(p.account.address)).toBe(p.start - charged);
    expect(await bs.channel(p.channelId)).toEqual({ balance: charged, totalClaimed: charged });
    expect(await fx.balanceOf(bs.address)).toBe(0n);
    expect((await chain.publicClient.getBlockNumber()) - blockBefore).toBe(4n); // deposit, claim, settle, refund

    const base = { network: chain.network, channelId: p.channelId, payer: p.account.address };
    const charge = (n: number) => ({ type: 'charge', ...base, amount: '1000', cumulative: String(n * 1000) });
    expect(ofChannel(p.channelId)).toEqual([
      { type: 'deposit', ...base, amount: String(DEPOSIT), transaction: deposit.transaction },
      charge(1),
      charge(2),
      charge(3),
      charge(4),
      charge(5),
      { type: 'claim', network: chain.network, transaction: run.claims[0]!.transaction, claims: [{ channelId: p.channelId, payer: p.account.address, totalClaimed: '5000', amount: '5000' }] },
      { type: 'settle', network: chain.network, transaction: run.settle!.transaction, receiver: payTo, token: fx.usdc, amount: '5000' },
      { type: 'refund', ...base, amount: String(DEPOSIT - charged), transaction: refund.transaction },
    ]);
    // Closed: the channel's row stays (it is the lock), its state is gone, once written behind (channel-lease.ts).
    await expect.poll(() => db.query('SELECT state FROM x402_channels WHERE channel_id = $1', [p.channelId.toLowerCase()]), { timeout: 5000 }).toEqual([{ state: null }]);
    // Nothing left to claim.
    expect(await server.app.x402Batch!.claimAndSettle()).toEqual({ claims: [] });

    // The payments ledger: one row per paid call, each charged the price (the deposit's call too, not its
    // deposit), a voucher with no transaction of its own, the failed call cancelled; the refund is no payment.
    const paidCalls = async () =>
      (await server.app.services.paymentRecords.list({}))
        .filter((r) => r.payer?.toLowerCase() === p.account.address.toLowerCase())
        .reverse()
        .map((r) => ({ scheme: r.scheme, status: r.status, amount_required: r.amount_required, settled_amount: r.settled_amount, tx_hash: r.tx_hash, error_reason: r.error_reason, payer: r.payer }));
    const settled = (tx: string | null) => ({ scheme: 'batch-settlement', status: 'settled', amount_required: '1000', settled_amount: '1000', tx_hash: tx, error_reason: null, payer: p.account.address });
    await expect.poll(paidCalls, { timeout: 5000 }).toEqual([
      settled(deposit.transaction),
      settled(null),
      settled(null),
      settled(null),
      { scheme: 'batch-settlement', status: 'cancelled', amount_required: '1000', settled_amount: null, tx_hash: null, error_reason: 'handler_failed: 502', payer: p.account.address },
      settled(null),
    ]);
    expect(server.app.services.paymentRecords.stats()).toEqual({ final_write_failures: 0, final_writes_pending: 0, final_writes_lost: 0 });
  });

  it("one payer's concurrent calls carry one voucher: it is admitted and charged once, and each call gets its answer", async () => {
    const p = await payer(6);
    expect((await p.pay(server.url)).status).toBe(200); // opens the channel
    // The stock client signs the same next voucher for calls sent at once (its channel has not moved yet): one
    // payment, so one charge; the twins are its retries and get the answer it paid for (voucher-replay.ts).
    const cumulative = (r: Response) => (decodePaymentResponseHeader(r.headers.get('payment-response')!).extra!.channelState as { chargedCumulativeAmount: string }).chargedCumulativeAmount;
    const two = await Promise.all([1, 2].map(() => p.pay(server.url)));
    expect(two.map((r) => r.status)).toEqual([200, 200]);
    expect(two.map(cumulative)).toEqual(['2000', '2000']);
    const [x, y] = await Promise.all(two.map((r) => r.text()));
    expect(x).toBe(y);
    const four = await Promise.all([1, 2, 3, 4].map(() => p.pay(server.url)));
    expect(four.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(four.map(cumulative)).toEqual(['3000', '3000', '3000', '3000']);
    const next = await p.pay(server.url);
    expect(cumulative(next)).toBe('4000');
    expect(ofChannel(p.channelId).filter((e) => e.type === 'charge').map((e) => (e as { cumulative: string }).cumulative)).toEqual(['1000', '2000', '3000', '4000']);

    const run = await server.app.x402Batch!.claimAndSettle();
    expect(run.claims[0]!.claims).toEqual([{ channelId: p.channelId, payer: p.account.address, totalClaimed: '4000', amount: '4000' }]);
    expect(await bs.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 4000n });
  });

  it('a reservation held by another instance is waited for; past X402_FACILITATOR_TIMEOUT_MS the answer is 402 channel busy', async () => {
    const p = await payer(9);
    expect((await p.pay(server.url)).status).toBe(200);
    // Another server instance sharing the database holds the channel (no in-process wake-up: polled): it takes
    // the channel's lease from this one, as every instance does to change a channel (channel-lease.ts).
    const other = new LeasedChannels(channelLeaseStore(db));
    const hold = (ms: number) =>
      other.updateChannel(p.channelId, (c) => ({ ...c!, pendingRequest: { pendingId: 'other-instance', signedMaxClaimable: '2000', expiresAt: Date.now() + ms } }));

    await hold(800);
    let t0 = performance.now();
    const waited = await p.pay(server.url);
    expect(waited.status, `${await waited.clone().text()} ${waited.headers.get('payment-required')}`).toBe(200);
    expect(performance.now() - t0).toBeGreaterThan(600);

    await hold(60_000);
    t0 = performance.now();
    const busy = await p.pay(server.url);
    const elapsed = performance.now() - t0;
    expect(busy.status).toBe(402);
    expect(await busy.json()).toMatchObject({ error: 'payment rejected: invalid_batch_settlement_evm_channel_busy', reason: 'invalid_batch_settlement_evm_channel_busy' });
    expect(elapsed).toBeGreaterThan(2900); // X402_FACILITATOR_TIMEOUT_MS=3000
    expect(elapsed).toBeLessThan(8000);

    await other.updateChannel(p.channelId, (c) => ({ ...c!, pendingRequest: undefined }));
    await other.close();
    const again = await p.pay(server.url); // nothing was charged for the refused call
    expect(again.status).toBe(200);
    expect(decodePaymentResponseHeader(again.headers.get('payment-response')!).extra).toMatchObject({ channelState: { chargedCumulativeAmount: '3000' } });
    await server.app.x402Batch!.claimAndSettle();
  });
});

describe("batch settlement in the ledger database (the app's own wiring, what npm run payments -- batch reads)", () => {
  it('x402_batch_events gets the deposit, each charge, the claim and the settlement; payments one settled row per call', async () => {
    const own = await startApp(fac.url, {}, 'database');
    const p = await payer(11);
    for (let i = 0; i < 2; i++) expect((await p.pay(own.url)).status).toBe(200);
    const run = await own.app.x402Batch!.claimAndSettle();
    const channel = p.channelId.toLowerCase();
    const ours = async () =>
      (await own.app.services.batchEvents.list()).filter((e) => e.channelId?.toLowerCase() === channel || e.transaction === run.claims[0]?.transaction || e.transaction === run.settle?.transaction);
    const cumulative = (e: { detail?: unknown }) => (e.detail as { cumulative?: string } | undefined)?.cumulative ?? null;
    // A voucher's charge is written behind (within FLUSH_MS).
    await expect.poll(async () => (await ours()).map((e) => [e.type, e.amount, cumulative(e)]).sort(), { timeout: 5000 }).toEqual([
      ['charge', '1000', '1000'],
      ['charge', '1000', '2000'],
      ['claim', '2000', null],
      ['deposit', String(DEPOSIT), null],
      ['settle', '2000', null],
    ]);
    expect((await ours()).find((e) => e.type === 'claim')!.detail).toEqual({ claims: [{ channelId: p.channelId, payer: p.account.address, totalClaimed: '2000', amount: '2000' }] });
    const rows = async () => (await own.app.services.paymentRecords.list({})).filter((r) => r.payer === p.account.address).map((r) => [r.scheme, r.status, r.settled_amount]);
    await expect.poll(rows, { timeout: 5000 }).toEqual([
      ['batch-settlement', 'settled', '1000'],
      ['batch-settlement', 'settled', '1000'],
    ]);
  });
});

describe('a facilitator that does not offer batch-settlement', () => {
  it('the server logs it once and offers exact only; exact payments work', async () => {
    const plain = await startFacilitator({ chain: chain.chain, rpcUrl: chain.rpcUrl, network: chain.network, addressIndex: 7 });
    try {
      const { url, logs } = await startApp(plain.url, { X402_BATCH_SETTLEMENT: 'auto' });
      for (let i = 0; i < 2; i++) {
        const res = await fetch(url);
        expect(res.status).toBe(402);
        expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts.map((a) => a.scheme)).toEqual(['exact']);
      }
      expect(logs.filter((l) => l.includes('does not offer batch-settlement'))).toHaveLength(1);

      const account = mnemonicToAccount(MNEMONIC, { addressIndex: 8 });
      await fx.mint(account.address, 10_000n);
      const client = new x402Client();
      registerExactEvmScheme(client, { signer: account, networks: [chain.network] });
      client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: fx.usdc, maxAmountPerPayment: '10000' }] });
      const res = await wrapFetchWithPayment(fetch, client)(url);
      expect(res.status).toBe(200);
      expect(await fx.balanceOf(account.address)).toBe(10_000n - PRICE);
    } finally {
      await plain.close();
    }
  });
});

describe('a facilitator that offers batch-settlement without a receiver authorizer', () => {
  it('needs X402_BATCH_AUTHORIZER_KEY: without it exact only (logged); with it the server signs claims itself', async () => {
    const bare = await startFacilitator({ chain: chain.chain, rpcUrl: chain.rpcUrl, network: chain.network, addressIndex: 7, batch: {} });
    try {
      const without = await startApp(bare.url, { X402_BATCH_SETTLEMENT: 'auto' });
      const res = await fetch(without.url);
      expect(decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts.map((a) => a.scheme)).toEqual(['exact']);
      expect(without.logs.filter((l) => l.includes('advertises no receiverAuthorizer, and X402_BATCH_AUTHORIZER_KEY is unset'))).toHaveLength(1);

      const own = mnemonicToAccount(MNEMONIC, { addressIndex: 15 });
      const withKey = await startApp(bare.url, { X402_BATCH_SETTLEMENT: 'auto', X402_BATCH_AUTHORIZER_KEY: toHex(own.getHdKey().privateKey!) });
      const offered = decodePaymentRequiredHeader((await fetch(withKey.url)).headers.get('payment-required')!).accepts;
      expect(offered[1]).toMatchObject({ scheme: 'batch-settlement', extra: { receiverAuthorizer: own.address } });

      const account = mnemonicToAccount(MNEMONIC, { addressIndex: 16 });
      await fx.mint(account.address, 1_000_000n);
      const client = new x402Client().register(chain.network, new BatchClient(toClientEvmSigner(account, chain.publicClient)));
      client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: fx.usdc, maxAmountPerPayment: '100000' }] });
      const pay = wrapFetchWithPayment(fetch, client);
      for (let i = 0; i < 2; i++) expect((await pay(withKey.url)).status).toBe(200);
      const channelId = computeChannelId(
        { payer: account.address, payerAuthorizer: account.address, receiver: payTo, receiverAuthorizer: own.address, token: fx.usdc, withdrawDelay: 900, salt: `0x${'00'.repeat(32)}` },
        chain.network,
      );
      const run = await withKey.app.x402Batch!.claimAndSettle();
      expect(run.claims.flatMap((c) => c.claims.map((x) => x.channelId))).toContain(channelId);
      expect(await bs.channel(channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 2000n });
    } finally {
      await bare.close();
    }
  });
});

describe('X402_BATCH_* settings', () => {
  const env = { X402_PAY_TO: payTo, X402_FACILITATOR: 'http://127.0.0.1:9', X402_BATCH_SETTLEMENT: 'true' };
  it('claims must run at most a third of the withdraw delay apart', () => {
    expect(() => loadConfig({ ...env, X402_BATCH_WITHDRAW_DELAY_S: '900', X402_BATCH_CLAIM_INTERVAL_S: '301' })).toThrow(
      'X402_BATCH_CLAIM_INTERVAL_S=301 must be at most a third of X402_BATCH_WITHDRAW_DELAY_S=900',
    );
    expect(loadConfig({ ...env, X402_BATCH_WITHDRAW_DELAY_S: '900', X402_BATCH_CLAIM_INTERVAL_S: '300' }).x402.batch).toMatchObject({ withdrawDelayS: 900, claimIntervalS: 300 });
  });
  it('the deposit is at least the price, in whole token units', () => {
    expect(() => loadConfig({ ...env, X402_BATCH_DEPOSIT: '$0.0005' })).toThrow('X402_BATCH_DEPOSIT=$0.0005 must be at least X402_PRICE=$0.001');
    expect(() => loadConfig({ ...env, X402_BATCH_DEPOSIT: '$0.0000001' })).toThrow("more precision than the token's 6 decimals");
    expect(() => loadConfig({ ...env, X402_BATCH_WITHDRAW_DELAY_S: '60' })).toThrow('X402_BATCH_WITHDRAW_DELAY_S');
    expect(() => loadConfig({ ...env, X402_BATCH_AUTHORIZER_KEY: '0x1234' })).toThrow('X402_BATCH_AUTHORIZER_KEY="[secret]" is invalid');
  });
  it('is auto by default: installed, offered once the facilitator lists it; false turns it off', () => {
    expect(loadConfig({ X402_PAY_TO: payTo, X402_FACILITATOR: 'http://127.0.0.1:9' }).x402.batch).toMatchObject({ enabled: true, mode: 'auto' });
    expect(loadConfig({ X402_PAY_TO: payTo, X402_FACILITATOR: 'http://127.0.0.1:9', X402_BATCH_SETTLEMENT: 'false' }).x402.batch).toMatchObject({ enabled: false, mode: 'false' });
    expect(() => loadConfig({ X402_PAY_TO: payTo, X402_FACILITATOR: 'http://127.0.0.1:9', X402_BATCH_SETTLEMENT: 'yes' })).toThrow('expected one of auto, true, false, drain');
  });
});

describe('the claim-and-settle schedule', () => {
  it('claims and settles on its own every X402_BATCH_CLAIM_INTERVAL_S, and stops when the app closes', async () => {
    const { app, url } = await startApp(fac.url, { X402_BATCH_CLAIM_INTERVAL_S: '1' });
    const p = await payer(10);
    const settledBefore = await fx.balanceOf(payTo);
    try {
      for (let i = 0; i < 3; i++) expect((await p.pay(url)).status).toBe(200);
      const deadline = Date.now() + 8000;
      while ((await fx.balanceOf(payTo)) - settledBefore !== 3000n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await bs.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 3000n });
      expect((await fx.balanceOf(payTo)) - settledBefore).toBe(3000n);
      // One run or several (a slow machine may see a run between two calls): together they claimed 3000.
      const claims = ledger.flatMap((e) => (e.type === 'claim' ? e.claims.filter((c) => c.channelId === p.channelId) : []));
      expect(claims.at(-1)).toMatchObject({ totalClaimed: '3000' });
      expect(claims.reduce((n, c) => n + BigInt(c.amount), 0n)).toBe(3000n);
    } finally {
      await app.close();
      apps.splice(apps.indexOf(app), 1);
    }
    // The same channel, paid through another instance (whose schedule is 5 minutes): the closed app claims no more.
    const other = await startApp(fac.url);
    expect((await p.pay(other.url)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2000));
    expect(await bs.channel(p.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 3000n });
  });
});

// Last: it moves the chain clock 15 minutes ahead, after which new EIP-3009 deposits would count as expired.
describe('a channel the contract refuses to claim', () => {
  it('does not hold up the others: the batch is retried channel by channel, and the refused one is logged', async () => {
    const { app, logs, url } = await startApp(fac.url);
    const [gone, fine] = [await payer(13), await payer(14)];
    for (const p of [gone, fine]) for (let i = 0; i < 2; i++) expect((await p.pay(url)).status).toBe(200);
    // The first payer withdraws its whole deposit before its vouchers are claimed (the server missed the delay).
    const wallet = createWalletClient({ account: gone.account, chain: chain.chain, transport: http(chain.rpcUrl) });
    const call = async (functionName: string, args: readonly unknown[]) =>
      chain.publicClient.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: bs.address, abi: bs.abi, functionName, args, gas: 500_000n }) });
    expect((await call('initiateWithdraw', [gone.config, DEPOSIT])).status).toBe('success');
    await chain.publicClient.request({ method: 'evm_increaseTime' as never, params: [901] as never });
    expect((await call('finalizeWithdraw', [gone.config])).status).toBe('success');

    const settled = await fx.balanceOf(payTo);
    const run = await app.x402Batch!.claimAndSettle();
    // (Channels left owing by earlier tests are in the same batch; each is now claimed on its own.)
    const claimed = run.claims.flatMap((c) => c.claims.map((x) => x.channelId));
    expect(claimed).toContain(fine.channelId);
    expect(claimed).not.toContain(gone.channelId);
    expect(run.claims.every((c) => c.claims.length === 1)).toBe(true);
    expect(await bs.channel(fine.channelId)).toEqual({ balance: DEPOSIT, totalClaimed: 2000n });
    expect(await bs.channel(gone.channelId)).toEqual({ balance: 0n, totalClaimed: 0n });
    expect((await fx.balanceOf(payTo)) - settled).toBe(BigInt(run.settle!.amount));
    expect(BigInt(run.settle!.amount)).toBe(run.claims.reduce((n, c) => n + BigInt(c.claims[0]!.amount), 0n));
    expect(logs.some((l) => l.includes('a channel could not be claimed') && l.includes(gone.channelId))).toBe(true);
  });
});

