// GET /risk/v1/token-risk's liquidity, capabilities, owner kind and impersonation, read from a local EDR node
// (test/risk/chain/evidence-world.ts: Uniswap V2 from its npm packages, a $2,000 WETH priced by a stablecoin
// pair, tokens written for each case). GoPlus has no data for these tokens (its empty answer), so the chain's
// evidence is all there is; every figure asserted is one the world set.
import type { FastifyInstance } from 'fastify';
import { parseEther } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { selectorOf } from '../../src/sources/evm-capabilities.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';
import { SAFE_OWNERS, SAFE_THRESHOLD, startEvidenceWorld, TIMELOCK_DELAY_S, timelockedProxy, type EvidenceWorld } from './chain/evidence-world.ts';
import { SUPPLY } from './chain/world.ts';

let w: EvidenceWorld;
let app: FastifyInstance;
const goplus = new FakeUpstream();
const lower = (a: string) => a.toLowerCase();
const t: Record<string, { token: string; pair: string }> = {};

beforeAll(async () => {
  w = await startEvidenceWorld();
  t.plain = await w.listed('PlainToken', ['Plain', 'PLAIN', SUPPLY]);
  t.burned = await w.listed('PlainToken', ['Burned', 'BURN', SUPPLY], { lp: 'burn' });
  t.locked = await w.listed('PlainToken', ['Locked', 'LOCK', SUPPLY], { lp: 'lock' });
  t.thin = await w.listed('PlainToken', ['Thin', 'THIN', SUPPLY], { weth: parseEther('0.1') });
  t.renounced = await w.listed('PlainToken', ['Renounced', 'GONE', SUPPLY]);
  await w.write(t.renounced.token as `0x${string}`, 'PlainToken', 'renounceOwnership', []);
  t.mint = await w.listed('MintToken', ['Mint', 'MINT', SUPPLY]);
  t.powers = await w.listed('BalanceSetterToken', ['Balances', 'BAL', SUPPLY]);
  t.safe = await w.listed('OwnedToken', ['Safe owned', 'SAFE', SUPPLY]);
  await w.write(t.safe.token as `0x${string}`, 'OwnedToken', 'transferOwnership', [w.safe]);
  const proxy = await timelockedProxy(w);
  t.proxy = { ...(await w.list(proxy.token, 'UpgradeableToken', { lp: 'burn' })), implementation: proxy.implementation } as { token: string; pair: string };
  t.usdc = await w.listed('PlainToken', ['USD Coin', 'USDC', SUPPLY]);
  t.weth = await w.listed('PlainToken', ['Wrapped Ether', 'WETH', SUPPLY]);
  await goplus.start();
  ({ app } = await makeApp({
    GOPLUS_BASE_URL: goplus.url,
    RPC_URL_ETHEREUM: w.chain.rpcUrl,
    DEX_ROUTER_ETHEREUM: w.router,
    WRAPPED_NATIVE_ETHEREUM: w.weth,
    STABLE_TOKEN_ETHEREUM: w.stable,
    LP_LOCKERS_ETHEREUM: w.locker,
    RISK_RATE_LIMIT: '100000',
    UPSTREAM_DEADLINE_MS: '8000',
  }));
}, 180_000);
afterAll(async () => {
  await app?.close();
  await goplus.stop();
  await w?.close();
});
beforeEach(() => {
  goplus.reset();
  goplus.route('GET /api/v1/token_security/1', { body: recorded('goplus__empty_result.json') });
  app.services.cache.clear();
  app.services.answers.clear();
  app.services.guard.reset();
});

const check = async (token: string) => {
  const res = await app.inject({ url: `/risk/v1/token-risk?chain=ethereum&address=${token}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
};

describe('liquidity', () => {
  it("a plain token's pair: 100 WETH = $200,000 at the stable pair's $2,000; selling $1,000 moves the price 0.5 %; the owner holds the LP", async () => {
    const data = await check(t.plain!.token);
    expect(data.onchain.liquidity).toEqual({
      pair: lower(t.plain!.pair),
      reserve_native: 100,
      reserve_usd: 200_000,
      // 1000 / (200,000 + 1,000)
      impact_1k_pct: 0.5,
      // Uniswap V2 sends MINIMUM_LIQUIDITY (1,000 of 10^22 LP units) to the zero address: 0.00 %.
      lp_burned_pct: 0,
      lp_locked_pct: 0,
      lp_owner_pct: 100,
    });
    expect(data.onchain.liquidity_unavailable).toBeNull();
  });

  it('LP sent to the dead address is burned; LP in a known locker is locked', async () => {
    expect((await check(t.burned!.token)).onchain.liquidity).toMatchObject({ lp_burned_pct: 100, lp_locked_pct: 0, lp_owner_pct: 0 });
    expect((await check(t.locked!.token)).onchain.liquidity).toMatchObject({ lp_burned_pct: 0, lp_locked_pct: 100, lp_owner_pct: 0 });
  });

  it('a thin pool: 0.1 WETH = $200, so $1,000 sold is 83.33 % of price impact', async () => {
    expect((await check(t.thin!.token)).onchain.liquidity).toMatchObject({ reserve_native: 0.1, reserve_usd: 200, impact_1k_pct: 83.33 });
  });

  it("a renounced owner holds no LP it can pull (0); the token with no pair has no liquidity, with the reason", async () => {
    expect((await check(t.renounced!.token)).onchain.liquidity).toMatchObject({ lp_owner_pct: 0 });
    const none = await check(w.tokens.noPair);
    expect(none.onchain.liquidity).toBeNull();
    expect(none.onchain.liquidity_unavailable).toBe(`the token has no pair with the wrapped native coin (${lower(w.weth)}) on the router's factory ${lower(w.factory)}`);
  });
});

describe('capabilities and owner kind', () => {
  it('a plain token exposes none of the powers; its owner is an externally owned account', async () => {
    const data = await check(t.plain!.token);
    expect(data.onchain.capabilities).toEqual([]);
    expect(data.onchain.owner).toEqual({ address: lower(w.owner), renounced: false, kind: 'eoa', threshold: null, owners: null, min_delay_s: null });
  });

  it("mint(address,uint256) and setBalance(address,uint256) are found in the code, each with its selector", async () => {
    expect((await check(t.mint!.token)).onchain.capabilities).toEqual([{ power: 'mint', selector: selectorOf('mint(address,uint256)') }]);
    expect((await check(t.powers!.token)).onchain.capabilities).toEqual([{ power: 'set_balance', selector: selectorOf('setBalance(address,uint256)') }]);
  });

  it('a token owned by a Safe: kind safe, its threshold and owner count', async () => {
    expect((await check(t.safe!.token)).onchain.owner).toEqual({ address: lower(w.safe), renounced: false, kind: 'safe', threshold: SAFE_THRESHOLD, owners: SAFE_OWNERS.length, min_delay_s: null });
  });

  it("a proxy administered and owned by a timelock: the implementation's code is read for powers; kind timelock with its delay", async () => {
    const data = await check(t.proxy!.token);
    expect(data.onchain.proxy).toMatchObject({ kind: 'eip1967', admin: lower(w.timelock), admin_source: 'eip1967_admin_slot' });
    expect(data.onchain.owner).toEqual({ address: lower(w.timelock), renounced: false, kind: 'timelock', threshold: null, owners: null, min_delay_s: TIMELOCK_DELAY_S });
    expect(data.onchain.capabilities).toEqual([]);
    expect(data.onchain.capabilities_unavailable).toBeNull();
  });
});

describe('impersonation', () => {
  it('a token named USD Coin / USDC at another address impersonates Ethereum USDC; one called WETH the configured wrapper', async () => {
    expect((await check(t.usdc!.token)).onchain.impersonation).toEqual({ of: 'USDC', canonical_address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' });
    expect((await check(t.weth!.token)).onchain.impersonation).toEqual({ of: 'WETH', canonical_address: lower(w.weth) });
  });

  it('a token with its own name impersonates nothing; the wrapper itself is not its own impostor', async () => {
    expect((await check(t.plain!.token)).onchain).toMatchObject({ impersonation: null, impersonation_unavailable: null });
    expect((await check(w.weth)).onchain).toMatchObject({ impersonation: null, impersonation_unavailable: null });
  });
});
