// The chain's evidence on every EVM chain the check covers: each chain's RPC source (RPC_URL_<CHAIN>) and DEX
// settings (DEX_ROUTER_<CHAIN>, WRAPPED_NATIVE_<CHAIN>) reach the simulation, here all pointed at one local
// EDR node with Uniswap V2 (test/risk/chain/world.ts); and the documented defaults of those settings.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAINS } from '../../src/risk/chains.ts';
import { loadConfig } from '../../src/config.ts';
import { ALL_EVM_CHAINS } from '../../src/sources/evm-networks.ts';
import { EVM_RPC_SOURCE_KEYS } from '../../src/sources/evm-rpc.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';
import { startRiskChainWorld, type RiskChainWorld } from './chain/world.ts';

const EVM = CHAINS.filter((c) => c.family === 'evm');
let w: RiskChainWorld;
const goplus = new FakeUpstream();
let app: FastifyInstance;

beforeAll(async () => {
  w = await startRiskChainWorld();
  await goplus.start();
  goplus.otherwise({ body: recorded('goplus__empty_result.json') });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await goplus.stop();
  await w?.close();
});

const env = (withRouters: boolean) =>
  Object.fromEntries(
    EVM.flatMap((c) => {
      const upper = c.name.toUpperCase();
      return [[`RPC_URL_${upper}`, w.chain.rpcUrl], ...(withRouters ? [[`DEX_ROUTER_${upper}`, w.router], [`WRAPPED_NATIVE_${upper}`, w.weth]] : [[`WRAPPED_NATIVE_${upper}`, w.weth]])];
    }),
  );

describe('every EVM chain with a router configured', () => {
  it('reads the token and measures the 10 % sell tax through its own rpc:<chain> source', async () => {
    ({ app } = await makeApp({ GOPLUS_BASE_URL: goplus.url, RISK_RATE_LIMIT: '100000', UPSTREAM_DEADLINE_MS: '5000', ...env(true) }));
    expect(EVM.map((c) => c.name)).toEqual(['ethereum', 'bsc', 'base', 'polygon', 'arbitrum', 'optimism', 'avalanche', 'fantom', 'zksync', 'linea', 'scroll']);
    for (const chain of EVM) {
      const res = await app.inject({ url: `/risk/v1/token-risk?chain=${chain.name}&address=${w.tokens.sellTax}` });
      expect(res.statusCode, `${chain.name}: ${res.body}`).toBe(200);
      const { data, meta } = res.json();
      expect(meta.sources.map((s: { provider: string }) => s.provider), chain.name).toEqual(['goplus', `rpc:${chain.name}`]);
      expect(data.onchain.simulation, chain.name).toMatchObject({ router: w.router.toLowerCase(), sell_ok: true, buy_tax_pct: 0, transfer_tax_pct: 0 });
      expect(Math.abs(data.onchain.simulation.sell_tax_pct - 10), chain.name).toBeLessThanOrEqual(0.3);
      // GoPlus has no data for the token: the score rests on the chain's evidence alone, and says so.
      expect(data.raw, chain.name).toBeNull();
      expect(data.note).toMatch(/the score rests on the chain's evidence alone/);
    }
    await app.close();
  });

  it('a chain without a router: the simulation is null with that reason, the other evidence stands', async () => {
    ({ app } = await makeApp({ GOPLUS_BASE_URL: goplus.url, RISK_RATE_LIMIT: '100000', UPSTREAM_DEADLINE_MS: '5000', ...env(false) }));
    for (const name of ['fantom', 'scroll']) {
      const { data } = (await app.inject({ url: `/risk/v1/token-risk?chain=${name}&address=${w.tokens.sellTax}` })).json();
      expect(data.onchain).toMatchObject({ has_code: true, owner: { address: w.owner.toLowerCase() }, simulation: null });
      expect(data.onchain.simulation_unavailable).toBe(`no V2-style DEX router is configured for this chain (rpc:${name}; see DEX_ROUTER_<CHAIN>)`);
    }
  });
});

describe('the documented defaults', () => {
  const config = loadConfig({});
  const settings = (name: keyof typeof EVM_RPC_SOURCE_KEYS) => (config.sources as unknown as Record<string, { baseUrl: string; dex: { router?: string; wrappedNative: string } }>)[EVM_RPC_SOURCE_KEYS[name]]!;

  it('every EVM chain of the check has an RPC source, and every one a declaration', () => {
    expect(EVM.map((c) => c.name).sort()).toEqual(Object.keys(EVM_RPC_SOURCE_KEYS).sort());
    expect(ALL_EVM_CHAINS.map((c) => [c.name, c.id]).sort()).toEqual(EVM.map((c) => [c.name, c.id]).sort());
  });

  it.each([
    // chain, RPC default, router (the DEX's docs), wrapped native (the DEX's or the chain's docs)
    ['ethereum', 'https://ethereum-rpc.publicnode.com', '0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D', '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2'],
    ['base', 'https://mainnet.base.org', '0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24', '0x4200000000000000000000000000000000000006'],
    ['arbitrum', 'https://arb1.arbitrum.io/rpc', '0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24', '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1'],
    ['optimism', 'https://mainnet.optimism.io', '0x4A7b5Da61326A6379179b40d00F57E5bbDC962c2', '0x4200000000000000000000000000000000000006'],
    ['polygon', 'https://polygon-rpc.com', '0xedf6066a2b290C185783862C7F4776A2C8077AD1', '0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270'],
    ['bsc', 'https://bsc-dataseed.bnbchain.org', '0x10ED43C718714eb63d5aA57B78B54704E256024E', '0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c'],
    ['avalanche', 'https://api.avax.network/ext/bc/C/rpc', '0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24', '0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7'],
    ['fantom', 'https://rpcapi.fantom.network', undefined, '0x21be370D5312f44cB42ce377BC9b8a0cEF1A4C83'],
    ['zksync', 'https://mainnet.era.zksync.io', '0x5aEaF2883FBf30f3D62471154eDa3C0c1b05942d', '0x5AEa5775959fBC2557Cc8789bC1bf90A239D9a91'],
    ['linea', 'https://rpc.linea.build', '0x8cFe327CEc66d1C090Dd72bd0FF11d690C33a2Eb', '0xe5D7C2a44FfDDf6b295A15c148167daaAf5Cf34f'],
    ['scroll', 'https://rpc.scroll.io', undefined, '0x5300000000000000000000000000000000000004'],
  ] as const)('%s: RPC %s, router %s, wrapped native %s', (name, rpc, router, wrapped) => {
    const s = settings(name);
    expect(s.baseUrl).toBe(rpc);
    expect(s.dex.router).toBe(router);
    expect(s.dex.wrappedNative).toBe(wrapped);
  });

  it('RPC_URL_SOLANA defaults to the public mainnet endpoint', () => {
    expect((config.sources as unknown as Record<string, { baseUrl: string }>).rpcSolana!.baseUrl).toBe('https://api.mainnet-beta.solana.com');
  });

  it('a DEX setting that is not an address is refused at start-up, naming the variable', () => {
    expect(() => loadConfig({ DEX_ROUTER_BSC: '0x1234' })).toThrow(/DEX_ROUTER_BSC="0x1234" is invalid: expected a 0x address/);
    // WETH's address with one letter's case flipped: a wrong EIP-55 checksum.
    expect(() => loadConfig({ WRAPPED_NATIVE_ETHEREUM: '0xc02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2' })).toThrow(/WRAPPED_NATIVE_ETHEREUM=.* is invalid: expected an address with a correct EIP-55 checksum/);
  });
});
