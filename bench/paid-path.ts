// npm run bench:paid-path — what an x402 `exact` payment adds to a call, with and without prefetch
// (X402_PREFETCH), on Base and on Solana. marketgate runs in this process twice, one instance with
// X402_PREFETCH=true (the default) and one with false (verify, then the handler, as before prefetch), each
// offering both networks, beside a local EVM node (Hardhat EDR), a local Solana runtime (LiteSVM behind the
// JSON-RPC fixture of test/payments/svm/ledger.ts), one local facilitator with both `exact` schemes (the official
// @x402/evm and @x402/svm facilitators) that answers /verify after 150 ms and /settle after 1,500 ms whichever the
// network (about Coinbase's facilitator on Base: a settle waits for its block), and a fake Binance whose ticker
// answers after 200 ms, uncached (CACHE_TTL_PRICE_S=0), so every call's handler does upstream work. For each
// instance it makes N keyed calls (x-api-key), N paid from Base and N paid from Solana with the stock @x402/fetch
// client (@x402/evm's and @x402/svm's `exact` client schemes) to the real /v1/price, interleaved (keyed, Base,
// Solana, ... the order of the networks and of the instances alternating), and prints per network the median and
// p99 of each, of paid minus keyed per pair, the facilitator calls and the JSON-RPC calls per paid call (every
// JSON-RPC client — the payer's, the facilitator's, the server's outcome readers — goes through a counting
// pass-through on 127.0.0.1). A paid call here is the client's whole exchange: the unpaid request, its 402,
// signing, and the paid request.
//
// BENCH_CALLS (default 20), BENCH_VERIFY_MS (150), BENCH_SETTLE_MS (1500), BENCH_UPSTREAM_MS (200).
// `benchPaidPath(options)` runs it and returns the figures (bench/run.ts may call it).
import { generateKeyPairSigner } from '@solana/kit';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import type { FastifyInstance } from 'fastify';
import { createServer } from 'node:http';
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
import { startSolanaLedger } from '../test/payments/svm/ledger.ts';
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
  p99: number;
}

export type Network = 'base' | 'solana';

export interface NetworkRun {
  network: Network;
  paid: Figures;
  /** Paid minus keyed, pair by pair. */
  extra: Figures;
  /** The facilitator's own time for each verify and settle (its delay and its work), as it measured them. */
  verify: Figures;
  settle: Figures;
  /** Facilitator requests (/supported, /verify, /settle) per paid call. */
  facilitatorCalls: number;
  /** JSON-RPC calls per paid call, by who made them and by method. */
  rpc: { client: number; facilitator: number; server: number; methods: Record<string, number> };
}

export interface PaidPathRun {
  prefetch: boolean;
  keyed: Figures;
  networks: NetworkRun[];
}

const KEY = 'bench-key';
const PRICE = '/v1/price?symbol=BTC';
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const ROLES = ['client', 'facilitator', 'server'] as const;
type Role = (typeof ROLES)[number];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const figures = (xs: number[]): Figures => ({ median: pct(xs, 50), p99: pct(xs, 99) });

/** A JSON-RPC pass-through to `target` on 127.0.0.1 that counts the calls it forwards, by method (batches by element). */
async function countingRpc(target: string) {
  const methods: Record<string, number> = {};
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { method: string } | { method: string }[];
      for (const one of Array.isArray(parsed) ? parsed : [parsed]) methods[one.method] = (methods[one.method] ?? 0) + 1;
    } catch {
      // Not JSON: forwarded as it is, uncounted.
    }
    const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
type CountingRpc = Awaited<ReturnType<typeof countingRpc>>;

export async function benchPaidPath(options: PaidPathOptions): Promise<PaidPathRun[]> {
  const chain = await startLocalChain(31337);
  const fx = await deployFixtures(chain);
  const ledger = await startSolanaLedger();
  const rpcs: Record<Network, Record<Role, CountingRpc>> = { base: {} as never, solana: {} as never };
  for (const role of ROLES) {
    rpcs.base[role] = await countingRpc(chain.rpcUrl);
    rpcs.solana[role] = await countingRpc(ledger.rpcUrl);
  }
  const feePayer = await generateKeyPairSigner();
  const solanaPayer = await generateKeyPairSigner();
  const solanaPayTo = await generateKeyPairSigner();
  ledger.airdrop(feePayer.address, 10n);
  await ledger.fund(solanaPayer.address, BigInt(options.calls * 2 * 1000 + 1_000_000));
  await ledger.fund(solanaPayTo.address, 0n);
  const fac = await startFacilitator({
    chain: chain.chain,
    rpcUrl: rpcs.base.facilitator.url,
    network: chain.network,
    svm: { feePayer, rpcUrl: rpcs.solana.facilitator.url, network: DEVNET },
    delays: { verifyMs: options.verifyMs, settleMs: options.settleMs },
  });
  const exchange = new FakeUpstream();
  await exchange.start();
  exchange.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json'), delayMs: options.upstreamMs });
  const payer = mnemonicToAccount(MNEMONIC, { addressIndex: 11 });
  await fx.mint(payer.address, BigInt(options.calls * 2 * 1000 + 1_000_000));
  const baseClient = new x402Client();
  registerExactEvmScheme(baseClient, { signer: payer, networks: [chain.network] });
  baseClient.setSpendControls({ allowedAssets: [{ network: chain.network, asset: fx.usdc, maxAmountPerPayment: '100000' }] });
  const solanaClient = new x402Client();
  solanaClient.register(DEVNET, new ExactSvmScheme(solanaPayer, { rpcUrl: rpcs.solana.client.url }));
  solanaClient.setSpendControls({ allowedAssets: [{ network: DEVNET, asset: ledger.mint, maxAmountPerPayment: '100000' }] });
  const pay: Record<Network, typeof fetch> = { base: wrapFetchWithPayment(fetch, baseClient), solana: wrapFetchWithPayment(fetch, solanaClient) };

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
      X402_RPC_URL: rpcs.base.server.url,
      X402_SVM_PAY_TO: solanaPayTo.address,
      X402_SVM_NETWORK: 'devnet',
      X402_SVM_ASSET: ledger.mint,
      X402_SVM_RPC_URL: rpcs.solana.server.url,
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
  const facilitatorCalls = () => fac.state.calls.supported + fac.state.calls.verify + fac.state.calls.settle;
  /** Every JSON-RPC call so far, both networks, as `role method` → count. */
  const rpcCalls = () => {
    const all: Record<string, number> = {};
    for (const network of ['base', 'solana'] as const)
      for (const role of ROLES) for (const [method, n] of Object.entries(rpcs[network][role].methods)) all[`${role} ${method}`] = (all[`${role} ${method}`] ?? 0) + n;
    return all;
  };

  const series = () => ({ paid: [] as number[], verify: [] as number[], settle: [] as number[], facilitatorCalls: 0, rpc: {} as Record<string, number> });
  try {
    const runs = [
      { prefetch: true, url: await start(true), keyed: [] as number[], base: series(), solana: series() },
      { prefetch: false, url: await start(false), keyed: [] as number[], base: series(), solana: series() },
    ];
    // Warm-up: the gate asks the facilitator what it supports once; the first signature and calls are slower.
    for (const run of runs) {
      await timed(() => fetch(run.url, { headers: { 'x-api-key': KEY } }));
      for (const network of ['base', 'solana'] as const) await timed(() => pay[network](run.url));
    }
    for (let i = 0; i < options.calls; i++) {
      for (const run of i % 2 ? [...runs].reverse() : runs) {
        run.keyed.push(await timed(() => fetch(run.url, { headers: { 'x-api-key': KEY } })));
        for (const network of i % 2 ? (['solana', 'base'] as const) : (['base', 'solana'] as const)) {
          const s = run[network];
          const seen = { log: fac.state.log.length, calls: facilitatorCalls(), rpc: rpcCalls() };
          s.paid.push(await timed(() => pay[network](run.url)));
          for (const e of fac.state.log.slice(seen.log)) s[e.op].push(e.answeredAt - e.receivedAt);
          s.facilitatorCalls += facilitatorCalls() - seen.calls;
          for (const [k, n] of Object.entries(rpcCalls())) if (n > (seen.rpc[k] ?? 0)) s.rpc[k] = (s.rpc[k] ?? 0) + n - (seen.rpc[k] ?? 0);
        }
      }
    }
    return runs.map((r) => ({
      prefetch: r.prefetch,
      keyed: figures(r.keyed),
      networks: (['base', 'solana'] as const).map((network) => {
        const s = r[network];
        const per = (n: number) => n / s.paid.length;
        const byRole = (role: Role) => per(Object.entries(s.rpc).reduce((sum, [k, n]) => (k.startsWith(`${role} `) ? sum + n : sum), 0));
        return {
          network,
          paid: figures(s.paid),
          extra: figures(s.paid.map((p, i) => p - r.keyed[i]!)),
          verify: figures(s.verify),
          settle: figures(s.settle),
          facilitatorCalls: per(s.facilitatorCalls),
          rpc: { client: byRole('client'), facilitator: byRole('facilitator'), server: byRole('server'), methods: Object.fromEntries(Object.entries(s.rpc).map(([k, n]) => [k, per(n)])) },
        };
      }),
    }));
  } finally {
    for (const app of apps) await app.close();
    for (const db of databases) await db.close();
    await fac.close();
    await exchange.stop();
    for (const network of ['base', 'solana'] as const) for (const role of ROLES) await rpcs[network][role].close();
    await ledger.close();
    await chain.close();
  }
}

export function printPaidPath(options: PaidPathOptions, runs: PaidPathRun[]): void {
  const ms = (f: Figures) => `${f.median.toFixed(0)} / ${f.p99.toFixed(0)}`;
  const n = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));
  console.log(
    `${options.calls} keyed calls and ${options.calls} paid calls per network and setting to /v1/price; one facilitator for both networks, ` +
      `verify ${options.verifyMs} ms, settle ${options.settleMs} ms; upstream ${options.upstreamMs} ms, uncached\n`,
  );
  console.log('| X402_PREFETCH | network | keyed call | paid call (stock client) | paid minus keyed | facilitator verify | facilitator settle | facilitator calls per paid call | JSON-RPC calls per paid call (client + facilitator + server) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of runs)
    for (const x of r.networks)
      console.log(
        `| ${r.prefetch} | ${x.network} | ${ms(r.keyed)} | ${ms(x.paid)} | ${ms(x.extra)} | ${ms(x.verify)} | ${ms(x.settle)} | ${n(x.facilitatorCalls)} | ` +
          `${n(x.rpc.client + x.rpc.facilitator + x.rpc.server)} (${n(x.rpc.client)} + ${n(x.rpc.facilitator)} + ${n(x.rpc.server)}) |`,
      );
  console.log('(latencies: median / p99, ms)');
  const on = runs.find((r) => r.prefetch)!;
  const off = runs.find((r) => !r.prefetch)!;
  for (const network of ['base', 'solana'] as const) {
    const [a, b] = [on, off].map((r) => r.networks.find((x) => x.network === network)!);
    console.log(
      `\n${network}: prefetch saves ${(b!.extra.median - a!.extra.median).toFixed(0)} ms at the median of paid minus keyed ` +
        `(expected: about the shorter of the verify and the handler, here at least ${Math.min(options.verifyMs, options.upstreamMs)} ms)`,
    );
    console.log(`${network}: JSON-RPC calls per paid call by method (prefetch on): ${Object.entries(a!.rpc.methods).map(([k, v]) => `${k} ${n(v)}`).join(', ') || 'none'}`);
  }
  const [base, solana] = (['base', 'solana'] as const).map((network) => on.networks.find((x) => x.network === network)!);
  console.log(`\nSolana minus Base, paid minus keyed at the median (prefetch on): ${(solana!.extra.median - base!.extra.median).toFixed(0)} ms`);
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
