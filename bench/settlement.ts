// npm run bench:settlement — what a paid call costs with x402 `exact` and with `batch-settlement`, measured
// end to end: marketgate (X402_BATCH_SETTLEMENT=true) in this process, a local EVM node (Hardhat EDR) that
// mines a block every 2 seconds like Base, the batch-settlement test contracts at the SDK's addresses, a local
// facilitator offering both schemes, channel state in an (in-memory) PGlite ledger database, and the stock
// @x402/fetch client paying N calls in a row with each scheme (BENCH_CALLS, default 100) on the real /v1/price
// route (its exchange faked on 127.0.0.1). Prints per-call
// latency (median, p90, max) and, per 100 paid calls, the facilitator calls and on-chain transactions; for
// batch-settlement, the claim-and-settle run that follows (once per period, shared by every channel) apart.
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient } from '@x402/evm/batch-settlement/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { mnemonicToAccount } from 'viem/accounts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { FakeUpstream } from '../test/fakes/fake-upstream.ts';
import { recorded } from '../test/fixtures.ts';
import { migrate } from '../src/db/migrations.ts';
import { memoryDatabase } from '../test/db/pglite-database.ts';
import { OFFLINE_BASE_URLS } from '../test/helpers.ts';
import { deployBatchSettlement, deployFixtures, MNEMONIC, startLocalChain } from '../test/payments/x402/chain.ts';
import { startFacilitator } from '../test/payments/x402/facilitator.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 2000);

const chain = await startLocalChain(31337, { mining: { auto: false, interval: BLOCK_MS } });
const fx = await deployFixtures(chain);
await deployBatchSettlement(chain);
const fac = await startFacilitator({ chain: chain.chain, rpcUrl: chain.rpcUrl, network: chain.network, batch: { authorizerIndex: 4 } });
const exchange = new FakeUpstream();
await exchange.start();
exchange.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });

const config = loadConfig({
  ...OFFLINE_BASE_URLS,
  LOG_LEVEL: 'warn',
  X402_NETWORK: chain.network,
  X402_ASSET: fx.usdc,
  X402_ASSET_NAME: 'Test USDC',
  X402_PAY_TO: mnemonicToAccount(MNEMONIC, { addressIndex: 3 }).address,
  X402_FACILITATOR: fac.url,
  X402_BATCH_SETTLEMENT: 'true',
  BINANCE_SPOT_BASE_URL: exchange.url,
  COINBASE_BASE_URL: exchange.url,
  PAID_IP_RATE_LIMIT: '1000000',
});
const database = await memoryDatabase();
await migrate(database);
const app = await buildApp(config, { logStream: new Writable({ write: (_c, _e, cb) => cb() }) as never, database });
await app.listen({ host: '127.0.0.1', port: 0 });
const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/price?symbol=BTC`;
await fetch(url); // the gate asks the facilitator what it supports once

interface Counted {
  latencies: number[];
  facilitator: number;
  transactions: number;
}

/** Facilitator calls (/verify + /settle) and transactions mined while `work` runs (and one block after). */
async function counted(work: () => Promise<number[]>): Promise<Counted> {
  const calls = () => fac.state.calls.verify + fac.state.calls.settle;
  const c0 = calls();
  const b0 = await chain.publicClient.getBlockNumber();
  const latencies = await work();
  const facilitator = calls() - c0;
  await new Promise((r) => setTimeout(r, BLOCK_MS + 200)); // anything still pending gets mined
  const b1 = await chain.publicClient.getBlockNumber();
  let transactions = 0;
  for (let b = b0 + 1n; b <= b1; b++) transactions += (await chain.publicClient.getBlock({ blockNumber: b })).transactions.length;
  return { latencies, facilitator, transactions };
}

async function payCalls(pay: typeof fetch): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    const res = await pay(url);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`paid call ${i + 1} answered ${res.status}: ${res.headers.get('payment-required') ?? ''}`);
    out.push(performance.now() - t0);
  }
  return out;
}

async function client(index: number, scheme: 'exact' | 'batch-settlement') {
  const account = mnemonicToAccount(MNEMONIC, { addressIndex: index });
  await fx.mint(account.address, 10_000_000n);
  const c = new x402Client();
  if (scheme === 'exact') registerExactEvmScheme(c, { signer: account, networks: [chain.network] });
  else c.register(chain.network, new BatchClient(toClientEvmSigner(account, chain.publicClient)));
  c.setSpendControls({ allowedAssets: [{ network: chain.network, asset: fx.usdc, maxAmountPerPayment: '100000' }] });
  return wrapFetchWithPayment(fetch, c);
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const per100 = (n: number) => ((n * 100) / CALLS).toFixed(1);
const row = (name: string, r: Counted) =>
  `| ${name} | ${pct(r.latencies, 50).toFixed(1)} | ${pct(r.latencies, 90).toFixed(1)} | ${Math.max(...r.latencies).toFixed(0)} | ${per100(r.facilitator)} | ${per100(r.transactions)} |`;

console.log(`${CALLS} sequential paid calls per scheme, ${BLOCK_MS} ms blocks, $0.001 a call, X402_BATCH_DEPOSIT ${config.x402.batch.deposit}\n`);
const exactClient = await client(11, 'exact');
const batchClient = await client(12, 'batch-settlement');
const exact = await counted(() => payCalls(exactClient));
const batch = await counted(() => payCalls(batchClient));
const t0 = performance.now();
const claim = await counted(async () => {
  const run = await app.x402Batch!.claimAndSettle();
  if (run.claims.length !== 1 || !run.settle) throw new Error('the claim-and-settle run did not claim and settle');
  return [performance.now() - t0];
});

console.log('| scheme | median ms | p90 ms | max ms | facilitator calls / 100 calls | transactions / 100 calls |');
console.log('|---|---|---|---|---|---|');
console.log(row('exact', exact));
console.log(row('batch-settlement', batch));
console.log(
  `\nbatch-settlement, then one claim-and-settle run for the period (every channel at once): ${claim.facilitator} facilitator calls, ` +
    `${claim.transactions} transactions, ${claim.latencies[0]!.toFixed(0)} ms`,
);
console.log(`batch-settlement first call (opens the channel with the deposit): ${batch.latencies[0]!.toFixed(0)} ms`);

await app.close();
await database.close();
await fac.close();
await exchange.stop();
await chain.close();
