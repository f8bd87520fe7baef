// node --import tsx bench/voucher-client.ts — the typed client's own part of a batch-settlement voucher call (issue
// 37): from the call's start to its request leaving (the client's `fetch` called), with the next voucher signed
// ahead (`batch.presign`, the default) and without. The client's work before sending is what a voucher call adds to a
// keyed one on the client's side; the server's part is the `repeat` part's. marketgate runs in this process (the
// client tests' world: local chain, facilitator, batch settlement on), so only the time before sending is reported:
// the whole call's time would share this thread with the server. BENCH_VOUCHER_CALLS calls (300) per round, two
// rounds of each, alternated.
import { createClient } from '../src/client/index.ts';
import { startWorld } from '../test/client/world.ts';
import { machine } from './lib.ts';

const calls = Number(process.env.BENCH_VOUCHER_CALLS ?? 300);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const w = await startWorld({ batch: true, payerIndex: 15, env: { PAID_IP_RATE_LIMIT: '1000000', X402_BATCH_DEPOSIT: `$${(calls * 4 + 100) / 1000}` } });
try {
  console.log(`${machine()}; ${calls} voucher calls to /v1/price per round, one client; ms from a call's start to its request leaving\n`);
  console.log('| presign | median ms | p90 ms | p99 ms |');
  console.log('|---|---|---|---|');
  for (const presign of [false, true, false, true]) {
    let sentAt = 0;
    const timed: typeof fetch = (input, init) => ((sentAt = performance.now()), fetch(input, init));
    const c = createClient({ baseUrl: w.base, wallet: w.payerKey, assets: [w.asset], batch: { rpcUrl: w.chain.rpcUrl, presign }, maxSpendUsd: 5, fetch: timed });
    // The deposit and the first voucher (with presign, the first signed ahead), unmeasured.
    for (let i = 0; i < 2; i++) await c.request('/v1/price', { symbol: 'BTC' });
    const before: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      const r = await c.request('/v1/price', { symbol: 'BTC' });
      before.push(sentAt - t0);
      if (r.payment?.scheme !== 'batch-settlement') throw new Error(`call ${i + 1} was paid ${r.payment?.scheme ?? 'not at all'}`);
    }
    console.log(`| ${presign ? 'on' : 'off'} | ${pct(before, 50).toFixed(2)} | ${pct(before, 90).toFixed(2)} | ${pct(before, 99).toFixed(2)} |`);
    await c.close();
  }
} finally {
  await w.close();
}
