// Batch settlement's single writer across instances on a PostgreSQL server (issue 37): two marketgate instances,
// each its own process state and its own connection pool to one real `postgres` (DATABASE_URL), as a deployment
// runs them; the channel's lease (channel-lease.ts over src/db/x402-channels.ts, migration 9) is what keeps them
// from admitting two vouchers against the same balance. Through the real server on the in-process EDR chain with
// the batch-settlement contracts and a facilitator offering them:
//   - one voucher sent to both instances at once is admitted once (the other refuses it: 402), charged once;
//   - vouchers alternating between the instances are all admitted, each on top of the cumulative the other left,
//     and the channel's charge in the ledger is exact once both have handed it back (nothing lost at a hand-over).
// x402-batch-modes.test.ts runs the same over one embedded PGlite shared by two instances in one process.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient, computeChannelId } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../servers/postgres.ts';
import { accountAt, listeningApp, paidWorldEnv, startPaidWorld, type PaidWorld } from './world.ts';

const PATH = '/v1/price?symbol=BTC';

let world: PaidWorld;
let postgres: TestPostgres;
let databaseUrl: string;
const apps: FastifyInstance[] = [];
const urls: string[] = [];

beforeAll(async () => {
  [world, postgres] = await Promise.all([
    startPaidWorld({ payerIndex: 22, payToIndex: 23, fund: 0n, batch: true, chain: { allowBlocksWithSameTimestamp: true }, facilitator: { batch: { authorizerIndex: 24 } } }),
    startPostgres(),
  ]);
  databaseUrl = await postgres.createDatabase('batch_two_instances');
  for (let i = 0; i < 2; i++) {
    const { app, base } = await listeningApp({ ...paidWorldEnv(world), DATABASE_URL: databaseUrl, X402_BATCH_SETTLEMENT: 'true', X402_FACILITATOR_TIMEOUT_MS: '3000' });
    apps.push(app);
    urls.push(`${base}${PATH}`);
  }
}, 120_000);

afterAll(async () => {
  for (const app of apps) await app.close().catch(() => {});
  await world?.close();
  await postgres?.stop();
});

/** A payer with its own batch-settlement client (the stock @x402/fetch flow), funded with 1 token. */
async function payer(index: number) {
  const account = accountAt(index);
  await world.fx.mint(account.address, 1_000_000n);
  const client = new x402Client().register(world.chain.network, new BatchClient(toClientEvmSigner(account, world.chain.publicClient)));
  client.setSpendControls({ allowedAssets: [{ network: world.chain.network, asset: world.fx.usdc, maxAmountPerPayment: '100000' }] });
  const authorizer = accountAt(24).address;
  const config = { payer: account.address, payerAuthorizer: account.address, receiver: world.payTo, receiverAuthorizer: authorizer, token: world.fx.usdc, withdrawDelay: 900, salt: `0x${'00'.repeat(32)}` as const };
  /** The next voucher, signed from the client's channel state, not sent. */
  const sign = async (url: string) => {
    const required = decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required')!);
    return encodePaymentSignatureHeader(await client.createPaymentPayload({ ...required, accepts: required.accepts.filter((a) => a.scheme === 'batch-settlement') }));
  };
  return { channelId: computeChannelId(config, world.chain.network).toLowerCase(), pay: wrapFetchWithPayment(fetch, client), sign };
}

const cumulative = (r: Response) => (decodePaymentResponseHeader(r.headers.get('payment-response')!).extra!.channelState as { chargedCumulativeAmount: string }).chargedCumulativeAmount;

/** The channel's state as the server's ledger holds it (read with a connection of the test's own). */
async function ledgerCharge(channelId: string): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ state: { chargedCumulativeAmount: string } | null }>('SELECT state FROM x402_channels WHERE channel_id = $1', [channelId]);
    return rows[0]?.state?.chargedCumulativeAmount;
  } finally {
    await c.end();
  }
}

describe('two instances on one PostgreSQL server', () => {
  it('the facilitator offers batch settlement on both', async () => {
    for (const url of urls) expect(decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required')!).accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
  });

  it('one voucher sent to both at once is admitted once; vouchers alternating between them are all admitted, the ledger charged exactly', async () => {
    const [a, b] = urls as [string, string];
    const p = await payer(25);
    const first = await p.pay(a); // the deposit, and the first charge
    expect(first.status).toBe(200);
    let last = Number(cumulative(first));
    // The next voucher, to both instances at once, three times over: each admitted once and charged once; the
    // instance that did not admit it waits for the channel and answers with what it paid for (voucher-replay.ts).
    for (let round = 0; round < 3; round++) {
      const voucher = await p.sign(a);
      const both = await Promise.all([a, b].map((url) => fetch(url, { headers: { 'PAYMENT-SIGNATURE': voucher } })));
      expect(both.map((r) => r.status), `round ${round}`).toEqual([200, 200]);
      last += 1000;
      expect(both.map(cumulative), `round ${round}`).toEqual([String(last), String(last)]);
      // The stock client had not seen that answer: it sends the same voucher again, a retry, and gets the same
      // answer (charged nothing more); then it is in step, whichever instance it reaches.
      const again = await p.pay(round % 2 ? a : b);
      expect(again.status).toBe(200);
      expect(cumulative(again)).toBe(String(last));
    }
    // Twelve calls alternating instances: each charged on top of the last, whichever served it.
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await p.pay(i % 2 ? a : b);
      expect(r.status, `call ${i}: ${await r.clone().text()}`).toBe(200);
      seen.push(cumulative(r));
    }
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => String(last + (i + 1) * 1000)));
    // What both wrote behind agrees: once each instance has handed the channel back, the ledger holds the last charge.
    await Promise.all(apps.map((app) => app.close()));
    expect(await ledgerCharge(p.channelId)).toBe(seen.at(-1));
  });
});
