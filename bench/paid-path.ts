// npm run bench:paid-path — what an x402 `exact` payment adds to a call, with and without prefetch
// (X402_PREFETCH). marketgate runs in this process twice, one instance with X402_PREFETCH=true (the
// default) and one with false (verify, then the handler, as before prefetch), beside a local EVM node
// (Hardhat EDR), a local facilitator that answers /verify after 150 ms and /settle after 1,500 ms (about
// Coinbase's facilitator on Base: a settle waits for its block), and a fake Binance whose ticker answers
// after 200 ms, uncached (CACHE_TTL_PRICE_S=0), so every call's handler does upstream work. For each
// instance it makes N keyed calls (x-api-key) and N paid calls with the stock @x402/fetch client to the
// real /v1/price, interleaved (keyed, paid, keyed, paid, ... alternating instances), and prints median and
// p90 of each and of paid minus keyed per pair. A paid call here is the client's whole exchange: the
// unpaid request, its 402, signing, and the paid request.
//
// BENCH_CALLS (default 20), BENCH_VERIFY_MS (150), BENCH_SETTLE_MS (1500), BENCH_UPSTREAM_MS (200).
// `benchPaidPath(options)` runs it and returns the figures (bench/run.ts may call it).
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { mnemonicToAccount } from 'viem/accounts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrations.ts';
import { memoryDatabase } from '../test/db/pglite-database.ts';
import { FakeUpstream } from '../test/fakes/fake-upstream.ts';
import { recorded } from '../test/fixtures.ts';
import { OFFLINE_BASE_URLS } from '../test/helpers.ts';
import { deployFixtures, MNEMONIC, startLocalChain } from '../test/payments/x402/chain.ts';
import { startFacilitator } from '../test/payments/x402/facilitator.ts';

export interface PaidPathOptions {
  calls: number;
  verifyMs: number;
  settleMs: number;
  upstreamMs: number;
}

export interface Figures {
  median: number;
  p90: number;
}

export interface PaidPathRun {
  prefetch: boolean;
  keyed: Figures;
  paid: Figures;
  /** Paid minus keyed, pair by pair. */
  extra: Figures;
  /** The facilitator's own time for each verify and settle (its delay and its work), as it measured them. */
  verify: Figures;
  settle: Figures;
}

const KEY = 'bench-key';
const PRICE = '/v1/price?symbol=BTC';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const figures = (xs: number[]): Figures => ({ median: pct(xs, 50), p90: pct(xs, 90) });

export async function benchPaidPath(options: PaidPathOptions): Promise<PaidPathRun[]> {
  const chain = await startLocalChain(31337);
  const fx = await deployFixtures(chain);
  const fac = await startFacilitator({ chain: chain.chain, rpcUrl: chain.rpcUrl, network: chain.network, delays: { verifyMs: options.verifyMs, settleMs: options.settleMs } });
  const exchange = new FakeUpstream();
  await exchange.start();
  exchange.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json'), delayMs: options.upstreamMs });
  const payer = mnemonicToAccount(MNEMONIC, { addressIndex: 11 });
  await fx.mint(payer.address, BigInt(options.calls * 2 * 1000 + 1_000_000));
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer, networks: [chain.network] });
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: fx.usdc, maxAmountPerPayment: '100000' }] });
  const pay = wrapFetchWithPayment(fetch, client);

  const apps: FastifyInstance[] = [];
  const databases: Awaited<ReturnType<typeof memoryDatabase>>[] = [];
  const start = async (prefetch: boolean): Promise<string> => {
    const config = loadConfig({
      ...OFFLINE_BASE_URLS,
      LOG_LEVEL: 'warn',
      API_KEYS: KEY,
      KEY_RATE_LIMIT: '1000000',
      PAID_IP_RATE_LIMIT: '1000000',
      X402_NETWORK: chain.network,
      X402_ASSET: fx.usdc,
      X402_ASSET_NAME: 'Test USDC',
      X402_PAY_TO: mnemonicToAccount(MNEMONIC, { addressIndex: 3 }).address,
      X402_FACILITATOR: fac.url,
      X402_PREFETCH: String(prefetch),
      BINANCE_SPOT_BASE_URL: exchange.url,
      COINBASE_BASE_URL: exchange.url,
      CACHE_TTL_PRICE_S: '0',
    });
    const database = await memoryDatabase();
    await migrate(database);
    databases.push(database);
    const app = await buildApp(config, { logStream: new Writable({ write: (_c, _e, cb) => cb() }) as never, database });
    apps.push(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${PRICE}`;
  };

  const timed = async (call: () => Promise<Response>): Promise<number> => {
    const t0 = performance.now();
    const res = await call();
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`a bench call answered ${res.status}: ${res.headers.get('payment-required') ?? ''}`);
    return performance.now() - t0;
  };

  try {
    const runs = [
      { prefetch: true, url: await start(true), keyed: [] as number[], paid: [] as number[], verify: [] as number[], settle: [] as number[] },
      { prefetch: false, url: await start(false), keyed: [] as number[], paid: [] as number[], verify: [] as number[], settle: [] as number[] },
    ];
    // Warm-up: the gate asks the facilitator what it supports once; the first signature and calls are slower.
    for (const run of runs) {
      await timed(() => fetch(run.url, { headers: { 'x-api-key': KEY } }));
      await timed(() => pay(run.url));
    }
    for (let i = 0; i < options.calls; i++) {
      for (const run of i % 2 ? [...runs].reverse() : runs) {
        run.keyed.push(await timed(() => fetch(run.url, { headers: { 'x-api-key': KEY } })));
        const seen = fac.state.log.length;
        run.paid.push(await timed(() => pay(run.url)));
        for (const e of fac.state.log.slice(seen)) run[e.op].push(e.answeredAt - e.receivedAt);
      }
    }
    return runs.map((r) => ({
      prefetch: r.prefetch,
      keyed: figures(r.keyed),
      paid: figures(r.paid),
      extra: figures(r.paid.map((p, i) => p - r.keyed[i]!)),
      verify: figures(r.verify),
      settle: figures(r.settle),
    }));
  } finally {
    for (const app of apps) await app.close();
    for (const db of databases) await db.close();
    await fac.close();
    await exchange.stop();
    await chain.close();
  }
}

export function printPaidPath(options: PaidPathOptions, runs: PaidPathRun[]): void {
  const ms = (f: Figures) => `${f.median.toFixed(0)} / ${f.p90.toFixed(0)}`;
  console.log(
    `${options.calls} keyed and ${options.calls} paid calls per setting to /v1/price; facilitator verify ${options.verifyMs} ms, settle ${options.settleMs} ms; ` +
      `upstream ${options.upstreamMs} ms, uncached\n`,
  );
  console.log('| X402_PREFETCH | keyed call | paid call (stock client) | paid minus keyed | facilitator verify | facilitator settle |');
  console.log('|---|---|---|---|---|---|');
  for (const r of runs) console.log(`| ${r.prefetch} | ${ms(r.keyed)} | ${ms(r.paid)} | ${ms(r.extra)} | ${ms(r.verify)} | ${ms(r.settle)} |`);
  console.log('(each: median / p90, ms)');
  const on = runs.find((r) => r.prefetch)!;
  const off = runs.find((r) => !r.prefetch)!;
  console.log(
    `\nprefetch saves ${(off.extra.median - on.extra.median).toFixed(0)} ms at the median of paid minus keyed ` +
      `(expected: about the shorter of the verify and the handler, here at least ${Math.min(options.verifyMs, options.upstreamMs)} ms)`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const options: PaidPathOptions = {
    calls: Number(process.env.BENCH_CALLS ?? 20),
    verifyMs: Number(process.env.BENCH_VERIFY_MS ?? 150),
    settleMs: Number(process.env.BENCH_SETTLE_MS ?? 1500),
    upstreamMs: Number(process.env.BENCH_UPSTREAM_MS ?? 200),
  };
  printPaidPath(options, await benchPaidPath(options));
}
