// npm run bench (part `repeat`) / npm run bench:repeat — a repeat buyer's calls against a keyed caller's (issue 37).
// The compiled server (`node dist/server.js`, its own process, so its CPU is its own) with x402 on, batch settlement
// offered, an API key, and the upstream cached (CACHE_TTL_PRICE_S=3600, warmed first); beside it, in this process,
// the same world as the paid-path part: a local EVM node (Hardhat EDR) mining a block every 2 s like Base, the
// batch-settlement contracts, and a local facilitator answering /verify after 150 ms and /settle after 1,500 ms (then
// waiting for the block). One typed client (marketgate/client) calls /v1/price in a row:
//   keyed   BENCH_REPEAT_CALLS (1,000) calls with x-api-key, after BENCH_REPEAT_WARM_UP (200) unmeasured ones;
//   batch   one call that opens the channel (its deposit, the server's X402_BATCH_DEPOSIT, set to cover the run),
//           BENCH_REPEAT_WARM_UP unmeasured voucher calls (as the keyed part's: the path's code compiled), then
//           BENCH_REPEAT_CALLS calls each paid with a voucher;
//   exact   BENCH_REPEAT_EXACT_CALLS (50) calls paid with `exact` (each settled on chain, waiting for its block).
// For each: latency median and p99 (ms), the server's CPU per call (µs, /proc) against the keyed calls', the HTTP
// exchanges per call counted at the server (its /metrics: responses of /v1/price), and per 1,000 paid calls the
// facilitator calls (/verify, /settle) and on-chain transactions, scaled from the calls made (for the batch, over
// the channel's whole life: deposit, vouchers, and close()'s cooperative refund). BENCH_REPEAT_NODE_ARGS adds Node
// options to the server's command line (space-separated: `--perf-basic-prof` for Linux perf, `--inspect=9339`).
// Then, with the server stopped, the voucher's floor (voucher-floor.ts): what a voucher call cannot skip, timed alone
// on the last voucher header the client sent, against the CPU target's room beyond a keyed call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mnemonicToAccount } from 'viem/accounts';
import { createClient, type Client } from '../src/client/index.ts';
import { FakeUpstream } from '../test/fakes/fake-upstream.ts';
import { recorded } from '../test/fixtures.ts';
import { OFFLINE_BASE_URLS } from '../test/helpers.ts';
import { deployBatchSettlement, deployFixtures, MNEMONIC, startLocalChain } from '../test/payments/x402/chain.ts';
import { startFacilitator } from '../test/payments/x402/facilitator.ts';
import { cpuMicros, machine, startServer } from './lib.ts';
import { measureVoucherFloor, type VoucherFloor } from './voucher-floor.ts';

/** Calls made, unmeasured, before the keyed and the batch calls are measured (the batch's after its opening call): BENCH_REPEAT_WARM_UP. */
const WARM_UP = Number(process.env.BENCH_REPEAT_WARM_UP ?? 200);

export interface RepeatOptions {
  calls: number;
  exactCalls: number;
  verifyMs: number;
  settleMs: number;
  blockMs: number;
}

export interface RepeatPart {
  name: 'keyed' | 'batch' | 'exact';
  calls: number;
  median: number;
  p99: number;
  /** Server CPU per call, µs, every thread (null off Linux). */
  cpuPerCall: number | null;
  /** Of which its main thread's (the event loop): the rest is the embedded database's worker and V8's helpers (garbage collection, compilation). */
  mainCpuPerCall: number | null;
  /** Requests of /v1/price the server answered, per call. */
  exchangesPerCall: number;
  facilitatorCalls: number;
  transactions: number;
}

export interface RepeatRun {
  parts: RepeatPart[];
  /** The batch channel's opening call (its deposit waits for a block), ms. */
  depositMs: number;
  /** The facilitator's settle time (its delay, then the block), median ms. */
  settleMedianMs: number;
  /** The facilitator's verify time, median ms; null when the exact calls asked for none (X402_EXACT_VERIFY=local). */
  verifyMedianMs: number | null;
  /** /verify calls per exact call (0 when the server checks the payments itself). */
  verifiesPerExactCall: number;
  /** close(): the cooperative refund's facilitator calls (its transaction is counted in the batch's). */
  claim: { facilitatorCalls: number; transactions: number };
  /** What a voucher call cannot skip, timed alone after the run (voucher-floor.ts). */
  floor: VoucherFloor;
}

const KEY = 'bench-repeat-key';
const METRICS_TOKEN = 'bench-repeat-metrics';
const PRICE = '/v1/price';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

export async function benchRepeat(o: RepeatOptions): Promise<RepeatRun> {
  const chain = await startLocalChain(31337, { mining: { auto: false, interval: o.blockMs } });
  const fx = await deployFixtures(chain);
  await deployBatchSettlement(chain);
  const fac = await startFacilitator({ chain: chain.chain, rpcUrl: chain.rpcUrl, network: chain.network, batch: { authorizerIndex: 4 } });
  const exchange = new FakeUpstream();
  await exchange.start();
  exchange.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
  const payer = mnemonicToAccount(MNEMONIC, { addressIndex: 13 });
  const payerKey = `0x${Buffer.from(payer.getHdKey().privateKey!).toString('hex')}` as const;
  await fx.mint(payer.address, BigInt((o.calls + o.exactCalls) * 1000 + 10_000_000));
  const dataDir = mkdtempSync(join(tmpdir(), 'mg-repeat-'));
  // The deposit covers the whole run: one deposit, then vouchers only (a top-up would wait for a block).
  const deposit = `$${((o.calls + WARM_UP + 100) / 1000).toFixed(3)}`;
  const server = await startServer(
    [...(process.env.BENCH_REPEAT_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...(process.env.BENCH_REPEAT_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_REPEAT_PROFILE}`] : []), 'dist/server.js'],
    {
      ...OFFLINE_BASE_URLS,
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      API_KEYS: KEY,
      KEY_RATE_LIMIT: '1000000',
      PAID_IP_RATE_LIMIT: '1000000',
      METRICS_TOKEN,
      X402_NETWORK: chain.network,
      X402_ASSET: fx.usdc,
      X402_ASSET_NAME: 'Test USDC',
      X402_PAY_TO: mnemonicToAccount(MNEMONIC, { addressIndex: 3 }).address,
      X402_FACILITATOR: fac.url,
      X402_RPC_URL: chain.rpcUrl,
      X402_BATCH_SETTLEMENT: 'true',
      X402_BATCH_DEPOSIT: deposit,
      BINANCE_SPOT_BASE_URL: exchange.url,
      COINBASE_BASE_URL: exchange.url,
      CACHE_TTL_PRICE_S: '3600',
    },
    '/health',
  );
  const stopAll = async () => {
    await server.stop();
    await fac.close().catch(() => {});
    await exchange.stop();
    await chain.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  let stopped = false;
  try {
    const keyed = createClient({ baseUrl: server.url, apiKey: KEY });
    // Warm-up, unmeasured: the upstream answer cached, the server's code paths compiled.
    for (let i = 0; i < WARM_UP; i++) await keyed.call(PRICE, { symbol: 'BTC' });
    const asset = { network: chain.network, asset: fx.usdc, decimals: 6 };
    const spend = (o.calls + o.exactCalls + 2 * WARM_UP) / 1000 + 1;
    fac.state.delays = { verifyMs: o.verifyMs, settleMs: o.settleMs };

    const served = async () => {
      const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      let n = 0;
      for (const m of text.matchAll(/^marketgate_http_requests_total\{route="\/v1\/price",method="GET",status_class="[^"]+"\} (\d+)$/gm)) n += Number(m[1]);
      return n;
    };
    const blockNumber = () => chain.publicClient.getBlockNumber();
    const transactionsSince = async (from: bigint) => {
      await new Promise((r) => setTimeout(r, o.blockMs + 200)); // anything pending gets mined
      const to = await blockNumber();
      let txs = 0;
      for (let b = from + 1n; b <= to; b++) txs += (await chain.publicClient.getBlock({ blockNumber: b })).transactions.length;
      return txs;
    };
    // The server's own start-up work (the embedded database created in a fresh DATA_DIR: seconds of CPU on its worker)
    // must be over before a part's CPU is read, or the first part is charged for it: wait until a quarter second
    // passes with under 25 ms of the server's CPU (at most 30 s).
    const quiet = async () => {
      for (const until = Date.now() + 30_000; Date.now() < until; ) {
        const c0 = cpuMicros(server.proc.pid);
        await new Promise((r) => setTimeout(r, 250));
        const c1 = cpuMicros(server.proc.pid);
        if (c0 === null || c1 === null || c1 - c0 < 25_000) return;
      }
    };
    const measure = async (name: RepeatPart['name'], client: Client, calls: number): Promise<RepeatPart> => {
      await quiet();
      const latencies: number[] = [];
      const facilitator0 = fac.state.calls.verify + fac.state.calls.settle;
      const block0 = await blockNumber();
      const served0 = await served();
      const cpu0 = cpuMicros(server.proc.pid);
      const main0 = cpuMicros(server.proc.pid, true);
      for (let i = 0; i < calls; i++) {
        const t0 = performance.now();
        const r = await client.request(PRICE, { symbol: 'BTC' });
        latencies.push(performance.now() - t0);
        if (name !== 'keyed' && r.payment?.scheme !== (name === 'batch' ? 'batch-settlement' : 'exact')) throw new Error(`${name} call ${i + 1} was paid ${r.payment?.scheme ?? 'not at all'}`);
      }
      const cpu1 = cpuMicros(server.proc.pid);
      const main1 = cpuMicros(server.proc.pid, true);
      // A response is counted once sent: the last one may land just after its client read it.
      await new Promise((r) => setTimeout(r, 200));
      const exchanges = (await served()) - served0;
      const facilitatorCalls = fac.state.calls.verify + fac.state.calls.settle - facilitator0;
      return {
        name,
        calls,
        median: pct(latencies, 50),
        p99: pct(latencies, 99),
        cpuPerCall: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / calls,
        mainCpuPerCall: main0 === null || main1 === null ? null : (main1 - main0) / calls,
        exchangesPerCall: exchanges / calls,
        facilitatorCalls,
        transactions: name === 'keyed' ? 0 : await transactionsSince(block0),
      };
    };

    const parts: RepeatPart[] = [];
    parts.push(await measure('keyed', keyed, o.calls));
    // The batch channel's whole life: its opening call (the deposit), the voucher calls (measured), close() (the
    // cooperative refund of what is left); its facilitator calls and transactions are counted over all of it.
    // The last voucher header sent, for the floor measured after the run.
    let voucherHeader: string | undefined;
    const capture: typeof fetch = (input, init) => ((voucherHeader = new Headers(init?.headers).get('payment-signature') ?? voucherHeader), fetch(input, init));
    const batch = createClient({ baseUrl: server.url, wallet: payerKey, assets: [asset], batch: true, maxSpendUsd: spend, fetch: capture });
    const lifeFacilitator0 = fac.state.calls.verify + fac.state.calls.settle;
    const lifeBlock0 = await blockNumber();
    const t0 = performance.now();
    const opened = await batch.request(PRICE, { symbol: 'BTC' });
    const depositMs = performance.now() - t0;
    if (opened.payment?.scheme !== 'batch-settlement') throw new Error(`the batch client paid ${opened.payment?.scheme}`);
    // Warmed up as the keyed calls were, unmeasured: the voucher path's code compiled before its calls are timed.
    for (let i = 0; i < WARM_UP; i++) await batch.call(PRICE, { symbol: 'BTC' });
    const vouchers = await measure('batch', batch, o.calls);
    const lastVoucher = voucherHeader;
    if (!lastVoucher) throw new Error('the batch client sent no PAYMENT-SIGNATURE header');
    const closeFacilitator0 = fac.state.calls.verify + fac.state.calls.settle;
    const closed = await batch.close();
    if (!closed[0]?.refund?.success) throw new Error(`close() did not refund: ${JSON.stringify(closed)}`);
    const claim = { facilitatorCalls: fac.state.calls.verify + fac.state.calls.settle - closeFacilitator0, transactions: 0 };
    const lifeTransactions = await transactionsSince(lifeBlock0);
    parts.push({ ...vouchers, calls: o.calls, facilitatorCalls: fac.state.calls.verify + fac.state.calls.settle - lifeFacilitator0, transactions: lifeTransactions });
    const exact = createClient({ baseUrl: server.url, wallet: payerKey, assets: [asset], batch: false, maxSpendUsd: spend });
    await exact.request(PRICE, { symbol: 'BTC' }); // its 402 (the terms), unmeasured like the batch channel's opening
    const seen = fac.state.log.length;
    parts.push(await measure('exact', exact, o.exactCalls));
    const log = fac.state.log.slice(seen);
    const times = (op: 'verify' | 'settle') => log.filter((e) => e.op === op).map((e) => e.answeredAt - e.receivedAt);
    const verifies = times('verify');
    await stopAll();
    stopped = true;
    return {
      parts,
      depositMs,
      settleMedianMs: pct(times('settle'), 50),
      verifyMedianMs: verifies.length > 0 ? pct(verifies, 50) : null,
      verifiesPerExactCall: verifies.length / o.exactCalls,
      claim,
      floor: await measureVoucherFloor(lastVoucher),
    };
  } finally {
    if (!stopped) await stopAll();
  }
}

export function printRepeat(o: RepeatOptions, run: RepeatRun): void {
  const keyed = run.parts.find((p) => p.name === 'keyed')!;
  const batch = run.parts.find((p) => p.name === 'batch')!;
  const exact = run.parts.find((p) => p.name === 'exact')!;
  console.log(
    `${machine()}; calls in a row to /v1/price (upstream cached) from one marketgate/client; ` +
      `facilitator verify ${o.verifyMs} ms, settle ${o.settleMs} ms, a block every ${o.blockMs} ms\n`,
  );
  const per1000 = (n: number, calls: number) => ((n * 1000) / calls).toFixed(1);
  const cpu = (p: RepeatPart) => (p.cpuPerCall === null ? '?' : `${p.cpuPerCall.toFixed(0)} (${keyed.cpuPerCall ? (p.cpuPerCall / keyed.cpuPerCall).toFixed(2) : '?'}×)`);
  const main = (p: RepeatPart) => (p.mainCpuPerCall === null ? '?' : p.mainCpuPerCall.toFixed(0));
  console.log('| calls | n | median ms | p99 ms | server CPU µs/call (× keyed) | of which the main thread | exchanges/call | facilitator calls / 1,000 | transactions / 1,000 |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const p of run.parts) {
    const paid = p.name !== 'keyed';
    console.log(
      `| ${p.name} | ${p.calls} | ${p.median.toFixed(2)} | ${p.p99.toFixed(2)} | ${cpu(p)} | ${main(p)} | ${p.exchangesPerCall.toFixed(2)} | ${paid ? per1000(p.facilitatorCalls, p.calls) : '–'} | ${paid ? per1000(p.transactions, p.calls) : '–'} |`,
    );
  }
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  console.log(
    `\nbatch median ${batch.median.toFixed(2)} ≤ keyed ${keyed.median.toFixed(2)} + 1: ${verdict(batch.median <= keyed.median + 1)}; ` +
      `p99 ${batch.p99.toFixed(2)} ≤ keyed ${keyed.p99.toFixed(2)} + 5: ${verdict(batch.p99 <= keyed.p99 + 5)}; ` +
      `CPU ${batch.cpuPerCall?.toFixed(0)} ≤ 1.5 × ${keyed.cpuPerCall?.toFixed(0)}: ${verdict(batch.cpuPerCall !== null && keyed.cpuPerCall !== null && batch.cpuPerCall <= 1.5 * keyed.cpuPerCall)}`,
  );
  console.log(
    `exact: ${exact.exchangesPerCall.toFixed(2)} exchanges per call (target 1: ${verdict(exact.exchangesPerCall <= 1.001)}); median ${exact.median.toFixed(0)} ms ` +
      `against the facilitator's settle ${run.settleMedianMs.toFixed(0)} ms + 20 (${verdict(exact.median <= run.settleMedianMs + 20)}); ` +
      `${run.verifiesPerExactCall.toFixed(2)} /verify per call${run.verifyMedianMs === null ? ' (checked by the server itself)' : `, ${run.verifyMedianMs.toFixed(0)} ms median, before the handler`}`,
  );
  console.log(
    `batch: the channel's opening call (its deposit waits for a block) ${run.depositMs.toFixed(0)} ms; its facilitator calls and transactions count the whole channel: ` +
      `the deposit, ${batch.calls} vouchers, close()'s cooperative refund (${run.claim.facilitatorCalls} facilitator calls); a claim-and-settle run (2 calls, 2 transactions) ` +
      'comes every X402_BATCH_CLAIM_INTERVAL_S for every channel at once, none within this run',
  );
  const f = run.floor;
  const room = keyed.cpuPerCall === null ? null : 0.5 * keyed.cpuPerCall;
  console.log(
    `batch floor (timed alone, server stopped): decoding a voucher header ${f.decode.toFixed(1)} µs, checking it (digest and signature recovery) ${f.check.toFixed(1)}, ` +
      `its ledger row and charge event on the embedded database ${f.ledger.toFixed(1)} (every thread): ${f.total.toFixed(0)} µs a call, ` +
      (room === null ? 'against a keyed call: ?' : `against the CPU target's room beyond a keyed call (0.5 × ${keyed.cpuPerCall!.toFixed(0)}) ${room.toFixed(0)} µs: ${((100 * f.total) / room).toFixed(0)} % of it before anything else`),
  );
}

export const repeatOptions = (env: NodeJS.ProcessEnv): RepeatOptions => ({
  calls: Number(env.BENCH_REPEAT_CALLS ?? 1000),
  exactCalls: Number(env.BENCH_REPEAT_EXACT_CALLS ?? 50),
  verifyMs: 150,
  settleMs: 1500,
  blockMs: 2000,
});

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const options = repeatOptions(process.env);
  printRepeat(options, await benchRepeat(options));
}
