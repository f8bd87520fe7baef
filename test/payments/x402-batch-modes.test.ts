// Batch settlement's modes and its single writer (issue 37), through the real server on the in-process EDR chain
// with the batch-settlement contracts and a facilitator offering them:
//   - two instances on one ledger database: a voucher sent to both at once is admitted once; vouchers that alternate
//     between them are each admitted against the cumulative the other left (the channel's lease moves to whichever
//     instance changes it: channel-lease.ts);
//   - X402_BATCH_SETTLEMENT=drain: nothing offered (no new channel, no voucher), the open channels claimed and
//     settled until none owes anything, then said once in the log and in /v1/status;
//   - X402_BATCH_SETTLEMENT=true with a facilitator that does not offer it: the server does not start.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient, computeChannelId } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/db/migrations.ts';
import { memoryDatabase } from '../db/pglite-database.ts';
import { OFFLINE_BASE_URLS } from '../helpers.ts';
import { accountAt, startPaidWorld, type PaidWorld } from './world.ts';
import { startFacilitator } from './x402/facilitator.ts';

const PATH = '/v1/price?symbol=BTC';
const payTo = accountAt(3).address;
const authorizer = accountAt(4).address;

let world: PaidWorld;
const apps: FastifyInstance[] = [];
const databases: Awaited<ReturnType<typeof memoryDatabase>>[] = [];

beforeAll(async () => {
  world = await startPaidWorld({ payerIndex: 2, payToIndex: 3, fund: 0n, batch: true, chain: { allowBlocksWithSameTimestamp: true }, facilitator: { batch: { authorizerIndex: 4 } } });
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.close().catch(() => {});
  for (const d of databases) await d.close();
  await world?.close();
});

async function ledgerDatabase() {
  const d = await memoryDatabase();
  await migrate(d);
  databases.push(d);
  return d;
}

async function startApp(database: Awaited<ReturnType<typeof memoryDatabase>>, env: Record<string, string> = {}, facilitatorUrl = world.fac.url) {
  const logs: string[] = [];
  const config = loadConfig({
    LOG_LEVEL: 'info',
    ...OFFLINE_BASE_URLS,
    X402_NETWORK: world.chain.network,
    X402_ASSET: world.fx.usdc,
    X402_ASSET_NAME: 'Test USDC',
    X402_PAY_TO: payTo,
    X402_FACILITATOR: facilitatorUrl,
    X402_FACILITATOR_TIMEOUT_MS: '3000',
    BINANCE_SPOT_BASE_URL: world.exchange.url,
    COINBASE_BASE_URL: world.exchange.url,
    ...env,
  });
  const logStream = new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) });
  const app = await buildApp(config, { logStream: logStream as never, database });
  apps.push(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, logs, base, url: `${base}${PATH}` };
}

async function payer(index: number) {
  const account = accountAt(index);
  await world.fx.mint(account.address, 1_000_000n);
  const scheme = new BatchClient(toClientEvmSigner(account, world.chain.publicClient));
  const client = new x402Client().register(world.chain.network, scheme);
  client.setSpendControls({ allowedAssets: [{ network: world.chain.network, asset: world.fx.usdc, maxAmountPerPayment: '100000' }] });
  const config = { payer: account.address, payerAuthorizer: account.address, receiver: payTo, receiverAuthorizer: authorizer, token: world.fx.usdc, withdrawDelay: 900, salt: `0x${'00'.repeat(32)}` as const };
  /** The next voucher, signed from the client's channel state, not sent (and the state not moved by it). */
  const sign = async (url: string) => {
    const required = decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required')!);
    return encodePaymentSignatureHeader(await client.createPaymentPayload({ ...required, accepts: required.accepts.filter((a) => a.scheme === 'batch-settlement') }));
  };
  return { account, channelId: computeChannelId(config, world.chain.network), pay: wrapFetchWithPayment(fetch, client), sign };
}

const cumulative = (r: Response) => (decodePaymentResponseHeader(r.headers.get('payment-response')!).extra!.channelState as { chargedCumulativeAmount: string }).chargedCumulativeAmount;

describe('two instances on one ledger database', () => {
  it('one voucher sent to both at once is admitted once; alternating vouchers each meet the cumulative the other left', async () => {
    const d = await ledgerDatabase();
    const a = await startApp(d, { X402_BATCH_SETTLEMENT: 'true' });
    const b = await startApp(d, { X402_BATCH_SETTLEMENT: 'true' });
    const p = await payer(20);
    expect((await p.pay(a.url)).status).toBe(200); // the deposit, and the first charge (1000)
    // The next voucher (cumulative 2000), to both instances at once: one admits it; the other waits for the channel
    // and answers with what that voucher paid for (its answer travels with the channel's state): charged once.
    const voucher = await p.sign(a.url);
    const both = await Promise.all([a, b].map((i) => fetch(i.url, { headers: { 'PAYMENT-SIGNATURE': voucher } })));
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both.map(cumulative)).toEqual(['2000', '2000']);
    const [x, y] = await Promise.all(both.map((r) => r.text()));
    expect(x).toBe(y);
    // The same voucher for another request is no retry of it: refused as spent (the scheme's corrective 402).
    const elsewhere = await fetch(a.url.replace('symbol=BTC', 'symbol=ETH'), { headers: { 'PAYMENT-SIGNATURE': voucher } });
    expect(elsewhere.status).toBe(402);
    expect(((await elsewhere.json()) as { reason: string }).reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    // The stock client never saw that answer, so it sends the same voucher again first: the same answer again (a retry),
    // after which it is in step. Its next calls alternate instances: each is charged on top of the last, whichever served it.
    const seen: string[] = [];
    for (const i of [b, a, b, a, b]) {
      const r = await p.pay(i.url);
      expect(r.status, `${i === a ? 'a' : 'b'} after ${seen.join(',')}: ${await r.clone().text()}`).toBe(200);
      seen.push(cumulative(r));
    }
    expect(seen).toEqual(['2000', '3000', '4000', '5000', '6000']);
    // What both wrote behind agrees: the channel is charged 6000 in the ledger once each instance has handed it back.
    await Promise.all([a.app.close(), b.app.close()]);
    const [row] = await d.query<{ state: { chargedCumulativeAmount: string } }>('SELECT state FROM x402_channels WHERE channel_id = $1', [p.channelId.toLowerCase()]);
    expect(row!.state.chargedCumulativeAmount).toBe('6000');
  });
});

describe('X402_BATCH_SETTLEMENT=drain', () => {
  it('offers nothing, claims and settles what the open channels owe, then says it is drained (log, /v1/status)', async () => {
    const d = await ledgerDatabase();
    const before = await startApp(d, { X402_BATCH_SETTLEMENT: 'true' });
    const p = await payer(21);
    for (let i = 0; i < 3; i++) expect((await p.pay(before.url)).status).toBe(200);
    await before.app.close(); // its channel state written and handed back
    const received = await world.fx.balanceOf(payTo);

    const drain = await startApp(d, { X402_BATCH_SETTLEMENT: 'drain', X402_BATCH_CLAIM_INTERVAL_S: '1' });
    const offered = decodePaymentRequiredHeader((await fetch(drain.url)).headers.get('payment-required')!);
    expect(offered.accepts.map((x) => x.scheme)).toEqual(['exact']);
    const status = async () => ((await (await fetch(`${drain.base}/v1/status`)).json()) as { data: { batch_settlement: unknown } }).data.batch_settlement;
    await expect.poll(status, { timeout: 20_000, interval: 200 }).toEqual({ mode: 'drain', state: 'drained', owing_channels: 0 });
    // The three vouchers were claimed on chain and the funds settled to the payee.
    expect(await world.bs!.channel(p.channelId)).toMatchObject({ totalClaimed: 3000n });
    expect((await world.fx.balanceOf(payTo)) - received).toBe(3000n);
    expect(drain.logs.filter((l) => l.includes('x402 batch settlement drained'))).toHaveLength(1);
  });

  it('with nothing open, it is drained at its first run', async () => {
    const drain = await startApp(await ledgerDatabase(), { X402_BATCH_SETTLEMENT: 'drain' });
    await expect.poll(async () => ((await (await fetch(`${drain.base}/v1/status`)).json()) as { data: { batch_settlement: { state: string } } }).data.batch_settlement.state, { timeout: 10_000 }).toBe('drained');
  });
});

describe('X402_BATCH_SETTLEMENT=true', () => {
  it('a facilitator that does not offer batch-settlement stops start-up; auto serves exact', async () => {
    const plain = await startFacilitator({ chain: world.chain.chain, rpcUrl: world.chain.rpcUrl, network: world.chain.network, addressIndex: 7 });
    try {
      await expect(startApp(await ledgerDatabase(), { X402_BATCH_SETTLEMENT: 'true' }, plain.url)).rejects.toThrow(/X402_BATCH_SETTLEMENT=true, and the facilitator .* does not offer batch-settlement/);
      const auto = await startApp(await ledgerDatabase(), {}, plain.url);
      const offered = decodePaymentRequiredHeader((await fetch(auto.url)).headers.get('payment-required')!);
      expect(offered.accepts.map((x) => x.scheme)).toEqual(['exact']);
      expect(((await (await fetch(`${auto.base}/v1/status`)).json()) as { data: { batch_settlement: unknown } }).data.batch_settlement).toMatchObject({ mode: 'auto', state: 'not_offered' });
    } finally {
      await plain.close();
    }
  });
});
