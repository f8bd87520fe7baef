// npm run bench:risk-speed: how long a cold token risk check takes when the chain's RPC answers each request
// after RISK_BENCH_RPC_MS (50) and GoPlus after RISK_BENCH_PROVIDER_MS (100): the corpus of npm run bench:risk
// (test/risk/chain/corpus.ts) checked cold, token after token (each answer's caches cleared), then the same
// with no added latency. The node is the local EDR chain behind the block-override front
// (test/risk/chain/override-node.ts), which emulates eth_simulateV1 and eth_call's block override with many
// EDR calls in turn: its own time is counted too (a node with the methods runs them natively), so the
// figure with no added latency is printed beside it. Prints the median and p90 of each, the requests a check
// sends and the rounds they form (a request started after another's answer is a round later).
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeUpstream } from '../test/fakes/fake-upstream.ts';
import { recorded } from '../test/fixtures.ts';
import { makeApp } from '../test/helpers.ts';
import { buildCorpus } from '../test/risk/chain/corpus.ts';
import { startEvidenceWorld } from '../test/risk/chain/evidence-world.ts';
import { overrideNode } from '../test/risk/chain/override-node.ts';

const RPC_MS = Number(process.env.RISK_BENCH_RPC_MS ?? 50);
const PROVIDER_MS = Number(process.env.RISK_BENCH_PROVIDER_MS ?? 100);

const w = await startEvidenceWorld();
const corpus = await buildCorpus(w);
const node = new FakeUpstream();
const goplus = new FakeUpstream();
await Promise.all([node.start(), goplus.start()]);
let delays = { rpc: RPC_MS, provider: PROVIDER_MS };
let spans: { start: number; end: number }[] = [];
const front = overrideNode(w.chain.rpcUrl, () => ({ simulateV1: 'emulate', callOverride: 'emulate' }));
node.route('POST /', async (req) => {
  const span = { start: performance.now(), end: Infinity };
  spans.push(span);
  const body = await front(req.body);
  await sleep(delays.rpc);
  span.end = performance.now();
  return { body, headers: { 'content-type': 'application/json' } };
});
goplus.route('GET /api/v1/token_security/1', async () => {
  await sleep(delays.provider);
  return { body: recorded('goplus__empty_result.json') };
});
const { app } = await makeApp({
  GOPLUS_BASE_URL: goplus.url,
  RPC_URL_ETHEREUM: node.url,
  DEX_ROUTER_ETHEREUM: w.router,
  WRAPPED_NATIVE_ETHEREUM: w.weth,
  STABLE_TOKEN_ETHEREUM: w.stable,
  LP_LOCKERS_ETHEREUM: w.locker,
  RISK_RATE_LIMIT: '100000',
  UPSTREAM_DEADLINE_MS: '20000',
});

/** The round of each request: one more than the latest round of a request answered before it started. */
function rounds(s: { start: number; end: number }[]): number {
  const r: number[] = [];
  s.forEach((x, i) => (r[i] = 1 + Math.max(0, ...s.slice(0, i).map((q, j) => (q.end <= x.start ? r[j]! : 0)))));
  return Math.max(0, ...r);
}
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function pass(label: string) {
  const times: number[] = [];
  const requests: number[] = [];
  const depth: number[] = [];
  for (const c of corpus) {
    app.services.cache.clear();
    app.services.answers.clear();
    spans = [];
    const t0 = performance.now();
    const res = await app.inject({ url: `/risk/v1/token-risk?chain=ethereum&address=${c.token}` });
    times.push(performance.now() - t0);
    if (res.statusCode !== 200 || res.json().data.onchain === null) throw new Error(`${c.name}: ${res.body.slice(0, 300)}`);
    requests.push(spans.length);
    depth.push(rounds(spans));
  }
  console.log(
    `${label}: ${corpus.length} cold checks, median ${Math.round(quantile(times, 0.5))} ms, p90 ${Math.round(quantile(times, 0.9))} ms, ` +
      `max ${Math.round(Math.max(...times))} ms; RPC requests per check ${Math.min(...requests)}–${Math.max(...requests)}; rounds ${Math.min(...depth)}–${Math.max(...depth)}`,
  );
}

try {
  await pass(`RPC ${RPC_MS} ms, GoPlus ${PROVIDER_MS} ms`);
  delays = { rpc: 0, provider: 0 };
  await pass('no added latency (the emulating node alone)');
} finally {
  await app.close();
  await Promise.all([node.stop(), goplus.stop()]);
  await w.close();
}
process.exit(0);
