// GET /risk/v1/token-risk on the trap tokens of issue 38 (test/risk/chain/trap-world.ts: a maximum transaction,
// a maximum wallet, a sell cooldown, taxes raised after launch, trading never opened, sells closed to real
// holders), on the local EDR node with Uniswap V2; eth_simulateV1 and eth_call's block override emulated by
// the test node (override-node.ts), which can also play a node that lacks them. GoPlus is a fake serving the
// recorded sample made clean. Every figure asserted is one the contracts set.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream, type SeenRequest } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';
import { overrideNode, type OverrideNodeMode } from './chain/override-node.ts';
import { deployTrapTokens, HOLDERS, type TrapTokens } from './chain/trap-world.ts';
import { startRiskChainWorld, SUPPLY, type RiskChainWorld } from './chain/world.ts';

let w: RiskChainWorld;
let traps: TrapTokens;
let app: FastifyInstance;
const node = new FakeUpstream();
const goplus = new FakeUpstream();
let provider: Record<string, unknown> = {};
/** When each request to the node arrived and was answered, in order. */
const timings: { start: number; end: number }[] = [];
/** When set, the node answers the limits call (selector 0x1124959e) with an error of its own, as over its gas cap. */
let refuseLimits = false;
const LIMITS_REFUSAL = 'gas required exceeds allowance (16777216)';
async function refusingLimits(body: string, emulate: (b: string) => Promise<string>): Promise<string> {
  const calls = [JSON.parse(body) as { id: number; method: string; params: { data?: string }[] } | { id: number; method: string; params: { data?: string }[] }[]].flat();
  const isLimits = (c: (typeof calls)[number]) => c.method === 'eth_call' && String(c.params[0]?.data).startsWith('0x1124959e');
  const answered = calls.some((c) => !isLimits(c)) ? (JSON.parse(await emulate(JSON.stringify(calls.filter((c) => !isLimits(c))))) as unknown[]) : [];
  return JSON.stringify([...answered, ...calls.filter(isLimits).map((c) => ({ jsonrpc: '2.0', id: c.id, error: { code: -32000, message: LIMITS_REFUSAL } }))]);
}
let mode: OverrideNodeMode = { simulateV1: 'emulate', callOverride: 'emulate' };
const lower = (a: string) => a.toLowerCase();
const E18 = 10n ** 18n;

function goplusAnswer(address: string, overrides: Record<string, unknown>) {
  const sample = recorded('goplus__token_security_evm.json');
  const token = { ...(Object.values(sample.result)[0] as Record<string, unknown>) };
  for (const [k, v] of Object.entries(token)) if (v === '1') token[k] = '0';
  Object.assign(token, { is_open_source: '1', owner_address: lower(w.owner), token_name: 'Test', token_symbol: 'TST' }, overrides);
  for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete token[k];
  return { ...sample, result: { [address]: token } };
}

type Call = { method: string; params: unknown[] };
const callsOf = (r: SeenRequest) => [JSON.parse(r.body) as Call | Call[]].flat();

beforeAll(async () => {
  w = await startRiskChainWorld();
  traps = await deployTrapTokens(w);
  const emulate = overrideNode(w.chain.rpcUrl, () => mode);
  await Promise.all([node.start(), goplus.start()]);
  node.route('POST /', async (req) => {
    const span = { start: performance.now(), end: Infinity };
    timings.push(span);
    const body = refuseLimits ? await refusingLimits(req.body, emulate) : await emulate(req.body);
    span.end = performance.now();
    return { body, headers: { 'content-type': 'application/json' } };
  });
  goplus.route('GET /api/v1/token_security/1', (req) => ({ body: goplusAnswer(String(req.query.get('contract_addresses')), provider) }));
  ({ app } = await makeApp({
    GOPLUS_BASE_URL: goplus.url,
    RPC_URL_ETHEREUM: node.url,
    DEX_ROUTER_ETHEREUM: w.router,
    WRAPPED_NATIVE_ETHEREUM: w.weth,
    RISK_RATE_LIMIT: '100000',
    UPSTREAM_DEADLINE_MS: '20000',
  }));
}, 180_000);
afterAll(async () => {
  await app?.close();
  await Promise.all([node.stop(), goplus.stop()]);
  await w?.close();
});
beforeEach(() => {
  node.requests.length = 0;
  timings.length = 0;
  refuseLimits = false;
  provider = {};
  mode = { simulateV1: 'emulate', callOverride: 'emulate' };
  app.services.cache.clear();
  app.services.answers.clear();
  app.services.guard.reset();
});

const check = async (token: string) => {
  const res = await app.inject({ url: `/risk/v1/token-risk?chain=ethereum&address=${token}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
};
type Data = Awaited<ReturnType<typeof check>>;
const signal = (data: Data, name: string) => data.score_breakdown.signals.find((s: { signal: string }) => s.signal === name);
const tokens = (v: string) => BigInt(v);

describe('trading restrictions, by simulation', () => {
  it('a maximum transaction of 0.5 % of the supply: the largest buy and sell found by bisection, within a millionth of the depth', async () => {
    const data = await check(traps.tokens.maxTx);
    const s = data.onchain.simulation;
    const limit = SUPPLY / 200n;
    for (const side of [s.max_tx.buy_tokens, s.max_tx.sell_tokens]) {
      expect(tokens(side)).toBeLessThanOrEqual(limit);
      expect(tokens(side)).toBeGreaterThan(limit - E18);
    }
    expect(s.max_tx.pct_supply).toBe(0.5);
    // Buys of 50,000 tokens at a time fill one wallet to the depth: no wallet limit.
    expect(s.max_wallet).toBeNull();
    expect(s).toMatchObject({ trading_enabled: true, sell_ok: true, cooldown: false, holders_sell_ok: 3, holders_tried: 3 });
    expect(signal(data, 'chain_max_tx')).toMatchObject({ value: true, risk: 1, weight: 1 });
    expect(signal(data, 'chain_max_wallet')).toMatchObject({ value: false });
  });

  it('a maximum wallet of 1 % of the supply: the holding buys reach; the sells cannot be funded past it, said as a gap', async () => {
    const data = await check(traps.tokens.maxWallet);
    const s = data.onchain.simulation;
    expect(tokens(s.max_wallet.tokens)).toBeLessThanOrEqual(SUPPLY / 100n);
    expect(tokens(s.max_wallet.tokens)).toBeGreaterThan(SUPPLY / 100n - E18);
    expect(s.max_wallet.pct_supply).toBe(1);
    // A single buy into a fresh wallet stops at the same 1 %: the largest buy is what the wallet allows.
    expect(tokens(s.max_tx.buy_tokens)).toBeLessThanOrEqual(SUPPLY / 100n);
    expect(s.max_tx.sell_tokens).toBeNull();
    expect(data.data_gaps).toContainEqual({ signal: 'max_tx_sell', reason: expect.stringMatching(/^the largest holder could not move tokens to the seller/) });
    expect(signal(data, 'chain_max_wallet')).toMatchObject({ value: true });
  });

  it('a 60 s sell cooldown: the second sell, one block and one second later, fails while the first went through', async () => {
    const data = await check(traps.tokens.cooldown);
    expect(data.onchain.simulation).toMatchObject({ cooldown: true, sell_ok: true, max_tx: null, max_wallet: null });
    expect(signal(data, 'chain_cooldown')).toMatchObject({ value: true, weight: 2 });
  });

  it('taxes raised after launch: none now, 25 % / 90 % with the block moved forward (eth_simulateV1), scored', async () => {
    const data = await check(traps.tokens.laterTax);
    const s = data.onchain.simulation;
    expect(s).toMatchObject({ buy_tax_pct: 0, sell_tax_pct: 0 });
    expect(s.tax_later).toMatchObject({ sell_ok: true, after_blocks: 300, after_s: 3600, block_override: 'eth_simulateV1' });
    expect(Math.abs(s.tax_later.buy_tax_pct - 25)).toBeLessThanOrEqual(0.3);
    expect(Math.abs(s.tax_later.sell_tax_pct - 90)).toBeLessThanOrEqual(0.3);
    expect(signal(data, 'chain_tax_raised_later')).toMatchObject({ value: true, weight: 6, group: 'tax' });
    // A 90 % sell still leaves something: not critical.
    expect(data.score_breakdown.critical_floor_applied).toBe(false);
  });

  it('trading never opened: trading_enabled false; with no is_honeypot from the provider the sellability is unknown, never low', async () => {
    provider = { is_honeypot: undefined };
    const data = await check(traps.tokens.noTrading);
    expect(data.onchain.simulation).toMatchObject({ trading_enabled: false, sell_ok: null, failed_step: 'buy', revert_reason: 'UniswapV2: TRANSFER_FAILED' });
    expect(signal(data, 'chain_trading_disabled')).toMatchObject({ value: true, weight: 3 });
    expect(data.score_breakdown.unknown).toEqual([
      expect.objectContaining({ signal: 'sellable', weight: 10, risk: 0.5, contribution: expect.any(Number) }),
    ]);
    expect(data.score).toBeGreaterThanOrEqual(50);
    expect(data.score_breakdown.unknown_sell_floor_applied).toBe(data.score === 50);
    expect(data.data_gaps).toContainEqual({ signal: 'is_honeypot', reason: 'GoPlus gave no value; the chain: the simulation tried no sell (the buy failed or gave nothing)' });
  });

  it('sells closed to real holders: a fresh address sells, none of the 3 largest holders can, which is critical', async () => {
    const data = await check(traps.tokens.holderBlock);
    const s = data.onchain.simulation;
    expect(s).toMatchObject({ sell_ok: true, holders_sell_ok: 0, holders_tried: 3 });
    expect(signal(data, 'chain_sell_blocked')).toMatchObject({ value: false });
    expect(signal(data, 'chain_holders_cannot_sell')).toMatchObject({ value: true, weight: 8 });
    expect(data.score).toBeGreaterThanOrEqual(80);
    expect(data.score_breakdown.critical_floor_applied).toBe(true);
    // The holders tried are the three test accounts that bought it (the owner left out): their holdings are in the logs.
    const logs = node.requests.flatMap(callsOf).find((c) => c.method === 'eth_getLogs')!;
    expect(logs.params[0]).toMatchObject({ address: lower(traps.tokens.holderBlock) });
    expect(traps.holders.holderBlock).toEqual(HOLDERS.map((h) => h.address));
  });

  it('the inputs and the block are given, to rerun it on another node', async () => {
    const data = await check(traps.tokens.maxTx);
    expect(data.onchain.block_number).toBe(Number(await w.chain.publicClient.getBlockNumber()));
    expect(data.onchain.simulation.inputs).toEqual({
      router: lower(w.router),
      path: [lower(w.weth), lower(traps.tokens.maxTx)],
      amount_in: '10000000000000000',
      from: '0xebc8486ff8be3706383f34f0db5654f8046af40f',
    });
  });
});

describe('a simulation the node refuses', () => {
  it('the limits call refused (its gas cap): max_tx and max_wallet null with the reason, not "no limit", and not scored', async () => {
    refuseLimits = true;
    const data = await check(traps.tokens.maxTx);
    expect(data.onchain.simulation).toMatchObject({ max_tx: null, max_wallet: null, trading_enabled: true, cooldown: false, holders_tried: 3 });
    const reason = `the limits simulation could not run: ${LIMITS_REFUSAL}`;
    expect(data.data_gaps).toEqual(expect.arrayContaining([{ signal: 'max_tx', reason }, { signal: 'max_wallet', reason }]));
    expect(signal(data, 'chain_max_tx')).toBeUndefined();
    expect(signal(data, 'chain_max_wallet')).toBeUndefined();
  });
});

describe('block overrides: eth_simulateV1 first, then eth_call', () => {
  it('a node without eth_simulateV1: the later taxes by eth_call\'s block override; the cooldown is a gap', async () => {
    mode = { simulateV1: 'error', callOverride: 'emulate' };
    provider = { trading_cooldown: undefined };
    const data = await check(traps.tokens.laterTax);
    expect(data.onchain.simulation.tax_later).toMatchObject({ block_override: 'eth_call', sell_ok: true });
    expect(Math.abs(data.onchain.simulation.tax_later.sell_tax_pct - 90)).toBeLessThanOrEqual(0.3);
    expect(data.onchain.simulation.cooldown).toBeNull();
    // Neither the provider (no trading_cooldown) nor the chain could tell.
    expect(data.data_gaps).toContainEqual({
      signal: 'trading_cooldown',
      reason: 'GoPlus gave no value; the chain: a sell in a later block needs eth_simulateV1, which the node did not run (the method eth_simulateV1 does not exist/is not available)',
    });
  });

  it('a node that ignores eth_call\'s block override: no later taxes rather than today\'s taken for them', async () => {
    mode = { simulateV1: 'error', callOverride: 'ignore' };
    const data = await check(traps.tokens.laterTax);
    const now = Number(await w.chain.publicClient.getBlockNumber());
    expect(data.onchain.simulation.tax_later).toBeNull();
    expect(data.data_gaps).toContainEqual({ signal: 'tax_later', reason: `the node ignored eth_call's block override (the call ran in block ${now}, not ${now + 300})` });
    expect(signal(data, 'chain_tax_raised_later')).toBeUndefined();
  });

  it('a node with neither: tax_later null and a gap naming both', async () => {
    mode = { simulateV1: 'error', callOverride: 'error' };
    const data = await check(traps.tokens.laterTax);
    expect(data.onchain.simulation.tax_later).toBeNull();
    expect(data.data_gaps).toContainEqual({ signal: 'tax_later', reason: 'the node ran neither eth_simulateV1 nor eth_call with a block override (too many arguments, want at most 3)' });
  });
});

describe('speed: three rounds of batched JSON-RPC', () => {
  it("every read is in one of three rounds (a request that starts after another's answer is a round later); round 3 pinned to round 1's block", async () => {
    await check(traps.tokens.cooldown);
    // The round of each request: one more than the latest round of any request answered before it started.
    const spans = timings.slice();
    const round: number[] = [];
    spans.forEach((r, i) => (round[i] = 1 + Math.max(0, ...spans.slice(0, i).map((q, j) => (q.end <= r.start ? round[j]! : 0)))));
    expect(Math.max(...round)).toBe(3);
    const methods = (i: number) => callsOf(node.requests[i]!).map((c) => c.method);
    // Round 1: one batch with the head, the code, the slots, owner() and the first simulation.
    expect(round.filter((r) => r === 1)).toHaveLength(1);
    expect(methods(round.indexOf(1))).toEqual(expect.arrayContaining(['eth_getBlockByNumber', 'eth_getCode', 'eth_getStorageAt', 'eth_call']));
    // The logs alone, in round 2; the later blocks in round 2; the limits and the holders' sells in round 3, at round 1's block.
    const logs = node.requests.findIndex((r) => callsOf(r).some((c) => c.method === 'eth_getLogs'));
    expect(methods(logs)).toEqual(['eth_getLogs']);
    expect(round[logs]).toBe(2);
    expect(round[node.requests.findIndex((r) => callsOf(r).some((c) => c.method === 'eth_simulateV1'))]).toBe(2);
    const limits = node.requests.findIndex((r) => callsOf(r).some((c) => c.method === 'eth_call' && String((c.params[0] as { data: string }).data).startsWith('0x1124959e')));
    expect(round[limits]).toBe(3);
    const block = `0x${(await w.chain.publicClient.getBlockNumber()).toString(16)}`;
    const simulatorCalls = callsOf(node.requests[limits]!).filter((c) => (c.params[0] as { from?: string }).from !== undefined);
    expect(simulatorCalls.map((c) => c.params[1])).toEqual([block, block]);
  });
});
