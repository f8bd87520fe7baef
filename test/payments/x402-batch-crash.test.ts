// A crash while vouchers flow, on real parts: the server process (`node src/server.ts`, its ledger on a real
// PostgreSQL server) killed with SIGKILL right after a run of voucher calls, inside the time their channel state,
// answers and ledger rows are written behind (200 ms), then started again. The payer is never charged twice: what
// the receiver can claim is at most one price per answer the payer got, the stock client picks up from whatever
// state was written (the scheme's corrective 402), every later call is charged once on top of the last, and what is
// claimed and settled on chain is what the channel's state says.
import { decodePaymentResponseHeader } from '@x402/core/http';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { tempDir } from '../db-helpers.ts';
import { OFFLINE_BASE_URLS } from '../helpers.ts';
import { startServerProcess, type RunningServer } from '../servers/marketgate.ts';
import { startCrashWorld, type CrashWorld } from './crash-world.ts';
import { accountAt, paidWorldEnv, PRICE, type PaidWorld } from './world.ts';

const PRICE_UNITS = 1000n;
let world: PaidWorld;
let crash: CrashWorld;
let ledger: Database;
let env: Record<string, string>;
let server: RunningServer | undefined;

beforeAll(async () => {
  crash = await startCrashWorld(
    { payerIndex: 34, payToIndex: 35, fund: 0n, batch: true, chain: { allowBlocksWithSameTimestamp: true }, facilitator: { batch: { authorizerIndex: 36 } } },
    'batch_crash',
  );
  ({ world, ledger } = crash);
  env = { ...OFFLINE_BASE_URLS, ...paidWorldEnv(world, { rpc: true, timeoutMs: 20_000 }), DATA_DIR: tempDir(), DATABASE_URL: crash.databaseUrl, X402_BATCH_SETTLEMENT: 'true', X402_BATCH_CLAIM_INTERVAL_S: '5' };
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await crash?.close();
});

describe('kill -9 while vouchers flow, then a restart', () => {
  it('never charges twice: the claim is at most one price per answer, later calls are charged once each, and what settles is the channel state', async () => {
    const account = accountAt(34);
    await world.fx.mint(account.address, 1_000_000n);
    const received = await world.fx.balanceOf(world.payTo);
    const scheme = new BatchClient(toClientEvmSigner(account, world.chain.publicClient));
    const client = new x402Client().register(world.chain.network, scheme);
    client.setSpendControls({ allowedAssets: [{ network: world.chain.network, asset: world.fx.usdc, maxAmountPerPayment: '100000' }] });
    const trace: string[] = [];
    const tracing: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      const sig = req.headers.get('payment-signature');
      const sent = sig ? (JSON.parse(Buffer.from(sig, 'base64').toString()) as { payload: { type: string; voucher: { maxClaimableAmount: string } } }).payload : undefined;
      const res = await fetch(req);
      const pr = res.headers.get('payment-required');
      const state = pr ? (JSON.parse(Buffer.from(pr, 'base64').toString()) as { accepts: { extra?: { channelState?: { chargedCumulativeAmount: string } } }[]; error?: string }) : undefined;
      trace.push(`${sent?.type ?? '-'} ${sent?.voucher.maxClaimableAmount ?? '-'} → ${res.status} ${state?.error ?? ''} ${state?.accepts.find((a) => a.extra?.channelState)?.extra?.channelState?.chargedCumulativeAmount ?? ''}`);
      return res;
    };
    const pay = wrapFetchWithPayment(tracing, client);
    let channelId = '';
    const cumulative = (r: Response) => {
      const state = decodePaymentResponseHeader(r.headers.get('payment-response')!).extra!.channelState as { channelId: string; chargedCumulativeAmount: string };
      channelId = state.channelId;
      return BigInt(state.chargedCumulativeAmount);
    };
    let answered = 0n;
    const call = async () => {
      const r = await pay(`${server!.url}${PRICE}`);
      // Every request and its answer, in the message of a failure (a 402 here once meant the chain had claimed more
      // than the restarted server knew: claims are now made from the written state only).
      expect(r.status, trace.join('\n')).toBe(200);
      answered++;
      return cumulative(r);
    };

    server = await startServerProcess(env);
    // The deposit and a run of vouchers, then the process killed at once: its last changes (state, answers, rows)
    // are most likely not written yet.
    let last = 0n;
    for (let i = 0; i < 12; i++) last = await call();
    expect(last).toBe(12n * PRICE_UNITS);
    await server.kill();
    const [row] = await ledger.query<{ state: { chargedCumulativeAmount: string } | null }>('SELECT state FROM x402_channels WHERE state IS NOT NULL');
    const writtenCharge = BigInt(row!.state!.chargedCumulativeAmount);
    expect(writtenCharge).toBeLessThanOrEqual(last);

    // Restarted: the client goes on; the server knows only what was written. Each answer is charged once on top of
    // the last (after the client is brought back to the written state, when it was behind).
    server = await startServerProcess(env);
    const after: bigint[] = [];
    for (let i = 0; i < 6; i++) after.push(await call());
    for (let i = 1; i < after.length; i++) expect(after[i]! - after[i - 1]!).toBe(PRICE_UNITS);
    expect(after[0]).toBe(writtenCharge + PRICE_UNITS);

    // Claimed and settled by the server (its drain: claims what every open channel owes): the receiver gets the
    // channel's charge, never more than one price per answer the payer got; the payer's refund leaves it charged that.
    const final = after.at(-1)!;
    expect(final).toBeLessThanOrEqual(answered * PRICE_UNITS);
    await server.stop();
    server = await startServerProcess({ ...env, X402_BATCH_SETTLEMENT: 'drain' });
    await expect.poll(async () => (await world.fx.balanceOf(world.payTo)) - received, { timeout: 120_000, interval: 500 }).toBe(final);
    expect((await world.bs!.channel(channelId as `0x${string}`)).totalClaimed).toBe(final);
  }, 300_000);
});
