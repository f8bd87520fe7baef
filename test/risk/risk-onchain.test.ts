// GET /risk/v1/token-risk with the chain's own evidence, read from a local EDR node (test/risk/chain/world.ts)
// with Uniswap V2 from its npm packages and test tokens; GoPlus is a fake serving the recorded sample, edited
// to say what each test needs. The node is reached through a fake on 127.0.0.1 that forwards every JSON-RPC
// call to it (so calls can be counted, failed or altered); every figure asserted is one the world set.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeUpstream, type FakeHandler, type SeenRequest } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';
import { overrideNode } from './chain/override-node.ts';
import { PROXY_ADMIN, startRiskChainWorld, type RiskChainWorld } from './chain/world.ts';

let w: RiskChainWorld;
let app: FastifyInstance;
const node = new FakeUpstream();
const goplus = new FakeUpstream();
/** The provider's fields for the next answers (over a clean copy of the recorded sample). */
let provider: Record<string, unknown> = {};
const lower = (a: string) => a.toLowerCase();

/** The recorded GoPlus sample made clean (every flag "0", source verified), owned by the world's owner, then `overrides`. */
function goplusAnswer(address: string, overrides: Record<string, unknown>) {
  const sample = recorded('goplus__token_security_evm.json');
  const token = { ...(Object.values(sample.result)[0] as Record<string, unknown>) };
  for (const [k, v] of Object.entries(token)) if (v === '1') token[k] = '0';
  Object.assign(token, { is_open_source: '1', owner_address: lower(w.owner), token_name: 'Test', token_symbol: 'TST' }, overrides);
  return { ...sample, result: { [address]: token } };
}

type Call = { jsonrpc: '2.0'; id: number; method: string; params: unknown[] };
/** Answers a JSON-RPC request (one call or a batch) from the local node, with eth_simulateV1 and eth_call's block override emulated. */
let emulate: (body: string) => Promise<string>;
async function forward(body: string): Promise<{ body: string; headers: Record<string, string> }> {
  return { body: await emulate(body), headers: { 'content-type': 'application/json' } };
}
const forwarding: FakeHandler = (req) => forward(req.body);
/** The calls of a request body: the check sends batches. */
const callsOf = (body: string) => [JSON.parse(body) as Call | Call[]].flat();
const rpcCalls = () => node.requests.flatMap((r: SeenRequest) => callsOf(r.body));

const goplusRoute = (chainId: number) => goplus.route(`GET /api/v1/token_security/${chainId}`, (req) => ({ body: goplusAnswer(String(req.query.get('contract_addresses')), provider) }));

beforeAll(async () => {
  w = await startRiskChainWorld();
  emulate = overrideNode(w.chain.rpcUrl, () => ({ simulateV1: 'emulate', callOverride: 'emulate' }));
  await Promise.all([node.start(), goplus.start()]);
  ({ app } = await makeApp({
    GOPLUS_BASE_URL: goplus.url,
    RPC_URL_ETHEREUM: node.url,
    DEX_ROUTER_ETHEREUM: w.router,
    WRAPPED_NATIVE_ETHEREUM: w.weth,
    RISK_RATE_LIMIT: '100000',
    // The local node answers in milliseconds, but the 2-core test machine is shared: a roomy deadline.
    UPSTREAM_DEADLINE_MS: '5000',
  }));
}, 120_000);
afterAll(async () => {
  await app?.close();
  await Promise.all([node.stop(), goplus.stop()]);
  await w?.close();
});
beforeEach(() => {
  node.reset();
  goplus.reset();
  node.route('POST /', forwarding);
  goplusRoute(1);
  provider = {};
  app.services.cache.clear();
  app.services.answers.clear();
  app.services.guard.reset();
});

const check = async (token: string, url = `/risk/v1/token-risk?chain=ethereum&address=${token}`) => {
  const res = await app.inject({ url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const chainSignal = (data: { score_breakdown: { signals: { signal: string; contribution: number }[] } }, name: string) => data.score_breakdown.signals.find((s) => s.signal === name);

describe('the chain reads Uniswap V2 as its npm packages ship it', () => {
  it("Router02's hard-coded init code hash is the pair's: the router finds the pairs the factory made", async () => {
    const { keccak256 } = await import('viem');
    const { UNISWAP, ROUTER_INIT_CODE_HASH, pairFor } = await import('./chain/world.ts');
    expect(keccak256(UNISWAP.pair.bytecode)).toBe(ROUTER_INIT_CODE_HASH);
    for (const [name, pair] of Object.entries(w.pairs)) expect(lower(pairFor(w.factory, w.tokens[name as keyof typeof w.pairs], w.weth)), name).toBe(lower(pair));
  });
});

describe('EVM evidence read from the chain', () => {
  it('a plain token: code, no proxy, a live owner, and a buy, transfer and sell without tax', async () => {
    const { data, meta } = await check(w.tokens.plain);
    expect(data.onchain).toEqual({
      block_number: Number(await w.chain.publicClient.getBlockNumber()),
      has_code: true,
      proxy: null,
      owner: { address: lower(w.owner), renounced: false, kind: 'eoa', threshold: null, owners: null, min_delay_s: null },
      owner_unavailable: null,
      simulation: {
        router: lower(w.router),
        pair: lower(w.pairs.plain),
        // The smaller of 0.01 ETH and a thousandth of the pair's 100 WETH.
        buy_amount: '10000000000000000',
        buy_tax_pct: 0,
        transfer_tax_pct: 0,
        sell_tax_pct: 0,
        transfer_ok: true,
        sell_ok: true,
        failed_step: null,
        revert_reason: null,
        // The trading restrictions: none. Its only holder is its owner (and the pair), so no real holder was tried.
        trading_enabled: true,
        max_tx: null,
        max_wallet: null,
        cooldown: false,
        tax_later: { buy_tax_pct: 0, sell_tax_pct: 0, sell_ok: true, after_blocks: 300, after_s: 3600, block_override: 'eth_simulateV1' },
        holders_sell_ok: null,
        holders_tried: 0,
        inputs: { router: lower(w.router), path: [lower(w.weth), lower(w.tokens.plain)], amount_in: '10000000000000000', from: '0xebc8486ff8be3706383f34f0db5654f8046af40f' },
      },
      simulation_unavailable: null,
      // The default stablecoin (Ethereum's USDC) has no code on the local chain: no USD price, no $1,000 impact.
      // (test/risk/risk-onchain-evidence.test.ts reads them with a stable pair of the local chain.)
      liquidity: { pair: lower(w.pairs.plain), reserve_native: 100, reserve_usd: null, impact_1k_pct: null, lp_burned_pct: 0, lp_locked_pct: 0, lp_owner_pct: 100 },
      liquidity_unavailable: null,
      capabilities: [],
      capabilities_unavailable: null,
      impersonation: null,
      impersonation_unavailable: null,
    });
    // What neither side could determine: the provider's sample (not in a DEX) gives no LP share; no real holder to try.
    expect(data.data_gaps).toEqual([
      { signal: 'lp_unlocked_share', reason: expect.stringMatching(/^GoPlus gave no value \(The token is not traded on a DEX/) },
      { signal: 'holders_sell', reason: 'no holder in the recent Transfer logs but the pair, the owner and burn addresses' },
    ]);
    expect(data.onchain_unavailable).toBeNull();
    expect(data.disagreements).toEqual([]);
    // The chain's signals, scored beside the provider's: a sell that went through, no upgradeable proxy.
    expect(chainSignal(data, 'chain_sell_blocked')).toEqual({ signal: 'chain_sell_blocked', source: 'chain', group: 'honeypot', value: false, weight: 10, risk: 0, contribution: 0 });
    expect(chainSignal(data, 'chain_proxy_admin_live')).toEqual({ signal: 'chain_proxy_admin_live', source: 'chain', group: 'authority', value: false, weight: 3, risk: 0, contribution: 0 });
    // Clean evidence weighs in too: the provider's risk points (its holder and LP shares) over 13 more weight.
    const providerPoints = data.score_breakdown.signals.reduce((sum: number, x: { weight: number; risk: number }) => sum + x.weight * x.risk, 0);
    expect(data.score).toBe(Math.round((100 * providerPoints) / data.score_breakdown.weight_total));
    expect(meta.sources.map((s: { provider: string; error?: string }) => [s.provider, s.error])).toEqual([
      ['goplus', undefined],
      ['rpc:ethereum', undefined],
    ]);
    // Nothing was sent: only reads, the standard methods (the test node emulates the last two on EDR).
    expect(new Set(rpcCalls().map((c) => c.method))).toEqual(new Set(['eth_getBlockByNumber', 'eth_getCode', 'eth_getStorageAt', 'eth_call', 'eth_getLogs', 'eth_simulateV1']));
  });

  it('a honeypot whose sells revert: the failed sell is critical even though the provider says is_honeypot "0", and the disagreement is listed', async () => {
    provider = { is_honeypot: '0' };
    const { data } = await check(w.tokens.honeypot);
    expect(data.onchain.simulation).toMatchObject({
      router: lower(w.router),
      pair: lower(w.pairs.honeypot),
      buy_amount: '10000000000000000',
      buy_tax_pct: 0,
      transfer_tax_pct: 0,
      sell_tax_pct: null,
      transfer_ok: true,
      sell_ok: false,
      failed_step: 'sell',
      // The token reverts "HoneypotToken: sells are closed" inside the router's transferFrom, which reports its own reason.
      revert_reason: 'TransferHelper: TRANSFER_FROM_FAILED',
      // A buy goes through; the later sell fails as the sell does now; a cooldown cannot be tried without a first sell.
      trading_enabled: true,
      tax_later: { buy_tax_pct: 0, sell_tax_pct: null, sell_ok: false, after_blocks: 300, after_s: 3600, block_override: 'eth_simulateV1' },
      cooldown: null,
    });
    // The provider's trading_cooldown ("0") stands where the chain could not try: no gap.
    expect(data.data_gaps.map((g: { signal: string }) => g.signal)).toEqual(['lp_unlocked_share', 'holders_sell']);
    expect(chainSignal(data, 'chain_sell_blocked')).toMatchObject({ value: true, risk: 1, weight: 10, contribution: expect.any(Number) });
    expect(data.score).toBe(80);
    expect(data.score_breakdown.critical_floor_applied).toBe(true);
    expect(data.disagreements).toEqual([{ signal: 'is_honeypot', provider: false, chain: true }]);
  });

  it('a 10 % sell tax measures 10 % (within the rounding of the pair fee), shown beside the provider\'s 0, not in place of it', async () => {
    const { data } = await check(w.tokens.sellTax);
    const s = data.onchain.simulation;
    expect(s).toMatchObject({ pair: lower(w.pairs.sellTax), buy_tax_pct: 0, transfer_tax_pct: 0, sell_ok: true, failed_step: null, revert_reason: null });
    expect(Math.abs(s.sell_tax_pct - 10)).toBeLessThanOrEqual(0.3);
    expect(data.flags.tax.sell_tax).toBe(0);
    expect(data.disagreements).toEqual([{ signal: 'sell_tax', provider: 0, chain: s.sell_tax_pct / 100 }]);
    // The provider's sell_tax (0) is what is scored; the chain's measurement adds no tax signal of its own.
    expect(data.score_breakdown.signals.filter((x: { signal: string }) => x.signal.includes('tax')).map((x: { signal: string; source: string }) => [x.signal, x.source])).toEqual([
      ['buy_tax', 'provider'],
      ['sell_tax', 'provider'],
      ['tax_modifiable', 'provider'],
      ['personal_tax_modifiable', 'provider'],
      // The same 10 % in the later block: not raised.
      ['chain_tax_raised_later', 'chain'],
    ]);
    expect(s.tax_later).toMatchObject({ buy_tax_pct: 0, sell_ok: true });
    expect(s.tax_later.sell_tax_pct).toBe(s.sell_tax_pct);
  });

  it('a token behind an EIP-1967 proxy with a live admin: implementation and admin from the slots, scored as its own signal', async () => {
    const { data } = await check(w.tokens.proxied);
    expect(data.onchain.proxy).toEqual({
      kind: 'eip1967',
      implementation: lower(w.tokens.implementation),
      admin: lower(PROXY_ADMIN),
      admin_source: 'eip1967_admin_slot',
      beacon: null,
      upgradeable: true,
    });
    expect(data.onchain.owner).toEqual({ address: lower(w.owner), renounced: false, kind: 'eoa', threshold: null, owners: null, min_delay_s: null });
    expect(data.onchain.simulation).toMatchObject({ sell_ok: true, sell_tax_pct: 0 });
    expect(chainSignal(data, 'chain_proxy_admin_live')).toMatchObject({ value: true, risk: 1, weight: 3 });
    // The provider said is_proxy "0".
    expect(data.disagreements).toEqual([{ signal: 'proxy', provider: false, chain: true }]);
    // The live admin adds its 3 weight points at risk 1: 100 × 3 / weight_total points of the score.
    expect(chainSignal(data, 'chain_proxy_admin_live')!.contribution).toBe(Math.round((100 * 3 * 100) / data.score_breakdown.weight_total) / 100);
  });

  it('a token with no pair: the simulation is null with its reason; a renounced owner is read as such', async () => {
    const { data } = await check(w.tokens.noPair);
    expect(data.onchain).toMatchObject({
      has_code: true,
      proxy: null,
      owner: { address: '0x0000000000000000000000000000000000000000', renounced: true },
      simulation: null,
      simulation_unavailable: `the token has no pair with the wrapped native coin (${lower(w.weth)}) on the router ${lower(w.router)}`,
    });
    expect(chainSignal(data, 'chain_sell_blocked')).toBeUndefined();
    // The provider said the owner is the world's deployer; the chain shows the zero address.
    expect(data.disagreements).toEqual([{ signal: 'owner_address', provider: lower(w.owner), chain: '0x0000000000000000000000000000000000000000' }]);
  });

  it('an EIP-1167 clone: a proxy whose implementation is fixed (not upgradeable)', async () => {
    const { data } = await check(w.tokens.clone);
    expect(data.onchain.proxy).toEqual({ kind: 'eip1167', implementation: lower(w.tokens.plain), admin: null, admin_source: null, beacon: null, upgradeable: false });
    expect(chainSignal(data, 'chain_proxy_admin_live')).toMatchObject({ value: false, risk: 0 });
  });

  it('an address without code: has_code false, everything else null with the reason', async () => {
    const { data } = await check(lower(PROXY_ADMIN));
    const none = 'the address holds no code (not a contract)';
    expect(data.onchain).toEqual({
      block_number: expect.any(Number),
      has_code: false,
      proxy: null,
      owner: null,
      owner_unavailable: none,
      simulation: null,
      simulation_unavailable: none,
      liquidity: null,
      liquidity_unavailable: none,
      capabilities: null,
      capabilities_unavailable: none,
      impersonation: null,
      impersonation_unavailable: none,
    });
    expect(data.score_breakdown.signals.filter((s: { source: string }) => s.source === 'chain')).toEqual([]);
  });
});

describe('speed and failures', () => {
  const url = () => `/risk/v1/token-risk?chain=ethereum&address=${w.tokens.sellTax}`;

  it('a cached answer makes no new chain call (and no new provider call)', async () => {
    const first = await check(w.tokens.sellTax, url());
    const chainCalls = node.requests.length;
    const providerCalls = goplus.requests.length;
    expect(chainCalls).toBeGreaterThan(0);
    const again = await check(w.tokens.sellTax, url());
    expect(node.requests).toHaveLength(chainCalls);
    expect(goplus.requests).toHaveLength(providerCalls);
    expect(again.data).toEqual(first.data);
    expect(again.meta.sources.map((s: { provider: string; cached: boolean }) => [s.provider, s.cached])).toEqual([
      ['goplus', true],
      ['rpc:ethereum', true],
    ]);
  });

  it("the chain's RPC failing is a 200 with the provider's part, onchain null naming the failure, and meta.sources saying so", async () => {
    node.route('POST /', { status: 500, body: 'down' });
    provider = { is_honeypot: '1' };
    const res = await app.inject({ url: url() });
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    expect(data.onchain).toBeNull();
    expect(data.onchain_unavailable).toBe('rpc:ethereum answered HTTP 500');
    expect(meta.sources[1]).toMatchObject({ provider: 'rpc:ethereum', cached: false, error: 'rpc:ethereum answered HTTP 500' });
    expect(data.flags.honeypot.is_honeypot).toBe(true);
    expect(data.score).toBe(80);
    expect(data.disagreements).toEqual([]);
    // One check's first round is one batch, one failure: five checks open rpc:ethereum's breaker (BREAKER_FAILURES
    // 5), so the next check fails fast, without calling the node, and says so.
    for (let i = 0; i < 4; i++) await app.inject({ url: url() });
    await vi.waitFor(() => expect(app.services.guard.report()['rpc:ethereum']?.breaker.state).toBe('open'));
    const calls = node.requests.length;
    const paused = (await app.inject({ url: url() })).json();
    expect(paused.data.onchain_unavailable).toMatch(/^rpc:ethereum is failing \(5 failures in a row, last: rpc:ethereum answered HTTP 500\); calls are paused, retry in \d+ s$/);
    expect(node.requests).toHaveLength(calls);
    // While the breaker stays open the answer without the chain's part is served again like any cached answer
    // (issue 34 §5: it was scored, assembled and serialised anew on every request): the same data, the failure's
    // time and reason in meta.sources, until at most the breaker's retry time.
    const answersBefore = app.services.answers.size;
    const again = (await app.inject({ url: url() })).json();
    expect(app.services.answers.size).toBe(answersBefore);
    expect(answersBefore).toBeGreaterThan(0);
    expect(again.data).toEqual(paused.data);
    expect(again.meta.sources[1]).toEqual({
      provider: 'rpc:ethereum',
      fetched_at: paused.meta.sources[1].fetched_at,
      cached: true,
      age_s: expect.any(Number),
      error: paused.data.onchain_unavailable,
    });
    expect(node.requests).toHaveLength(calls);
    // A failure is not kept past the breaker: once the node answers (the breaker's cool-down over, which ends the
    // remembered answer too; reset() stands in for it here), the next check reads the chain.
    node.route('POST /', forwarding);
    app.services.guard.reset();
    app.services.answers.clear();
    const after = (await app.inject({ url: url() })).json();
    expect(after.data.onchain.simulation).toMatchObject({ sell_ok: true });
    expect(after.meta.sources.map((s: { provider: string; cached: boolean }) => [s.provider, s.cached])).toEqual([
      ['goplus', true],
      ['rpc:ethereum', false],
    ]);
  });

  it('the provider failing is still a 502 naming it, whatever the chain says', async () => {
    goplus.route('GET /api/v1/token_security/1', { status: 500, body: 'oops' });
    const res = await app.inject({ url: url() });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'goplus answered HTTP 500', source: 'goplus' });
  });

  it('a node that refuses state overrides: the simulation is null with its error, the other reads stand', async () => {
    node.route('POST /', async (req) => {
      const calls = callsOf(req.body);
      const refused = (c: Call) => c.method === 'eth_call' && c.params.length >= 3;
      const answered = JSON.parse((await forward(JSON.stringify(calls.filter((c) => !refused(c))))).body) as unknown[];
      return { body: [...answered, ...calls.filter(refused).map((c) => ({ jsonrpc: '2.0', id: c.id, error: { code: -32602, message: 'invalid argument 2: state overrides are not supported' } }))] };
    });
    const { data } = await check(w.tokens.sellTax, url());
    expect(data.onchain).toMatchObject({ has_code: true, owner: { address: lower(w.owner) }, simulation: null });
    expect(data.onchain.simulation_unavailable).toBe('the node refused the simulation: rpc:ethereum error: JSON-RPC error -32602 (invalid argument 2: state overrides are not supported)');
  });

  it('a node that ignores state overrides (the call reaches an empty account): the simulation is null, not a guess', async () => {
    node.route('POST /', (req) => forward(JSON.stringify(callsOf(req.body).map((c) => (c.method === 'eth_call' ? { ...c, params: c.params.slice(0, 2) } : c)))));
    const { data } = await check(w.tokens.sellTax, url());
    expect(data.onchain.simulation).toBeNull();
    expect(data.onchain.simulation_unavailable).toBe('the node returned nothing for the simulation (it may not apply eth_call state overrides)');
  });

  it("a node that never answers: the chain's reads end with the provider's deadline, the provider's part is served", async () => {
    const slow = await makeApp({ GOPLUS_BASE_URL: goplus.url, RPC_URL_ETHEREUM: node.url, DEX_ROUTER_ETHEREUM: w.router, WRAPPED_NATIVE_ETHEREUM: w.weth, UPSTREAM_DEADLINE_MS: '400' });
    try {
      node.route('POST /', { hang: true });
      const res = await slow.app.inject({ url: url() });
      expect(res.statusCode).toBe(200);
      const { data, meta } = res.json();
      expect(data.onchain).toBeNull();
      expect(data.onchain_unavailable).toMatch(/^rpc:ethereum did not answer within (\d+ ms|the deadline it shares with the provider's call)$/);
      expect(Number(/within (\d+) ms/.exec(data.onchain_unavailable)?.[1] ?? 0)).toBeLessThanOrEqual(400);
      expect(meta.sources[1].error).toBe(data.onchain_unavailable);
      expect(data.raw).not.toBeNull();
    } finally {
      await slow.app.close();
    }
  });
});
