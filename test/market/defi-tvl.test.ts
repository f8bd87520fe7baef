// GET /v1/defi-tvl against a fake DefiLlama (all three hosts on one fake) on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, type FakeReply } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_DEADLINE_MS, TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp, type TestApp } from '../helpers.ts';
import { LIDO } from '../fakes/defillama.ts';

const CHAINS = '/v2/chains';
const STABLES = '/stablecoins';
const POOLS = '/pools';

const t = useFakeUpstreamApp(
  (url) => ({
    ...TEST_KEY_ENV,
    DEFILLAMA_BASE_URL: url,
    DEFILLAMA_STABLECOINS_BASE_URL: url,
    DEFILLAMA_YIELDS_BASE_URL: url,
    // The yields document has its own deadline, far above the TEST_DEADLINE_MS of the other test calls (a worker thread starts per parse).
    DEFILLAMA_YIELDS_DEADLINE_MS: '15000',
    DEFILLAMA_YIELDS_MAX_BODY_BYTES: String(1024 * 1024),
  }),
  { headers: TEST_KEY },
);
const { fake, get } = t;


/** CONSTRUCTED pools in the recorded format (the recorded Lido row with other values; not recordings). */
function poolsDocument() {
  const doc = recorded('defillama__yields_pools.json');
  const [lido] = doc.data;
  doc.data.push(
    { ...lido, pool: 'p-aave-arb', project: 'aave-v3', chain: 'Arbitrum', symbol: 'USDC', tvlUsd: 500_000_000, apy: 5.5, apyBase: 4, apyReward: 1.5, stablecoin: true, ilRisk: 'no' },
    { ...lido, pool: 'p-aave-eth', project: 'aave-v3', chain: 'Ethereum', symbol: 'WETH', tvlUsd: 2_000_000_000, apy: 1.9, apyBase: 1.9, apyReward: null },
    { ...lido, pool: 'p-uni-arb', project: 'uniswap-v3', chain: 'Arbitrum', symbol: 'USDC-WETH', tvlUsd: 90_000_000, apy: 20, apyBase: 20, apyReward: null, stablecoin: false, ilRisk: 'yes' },
  );
  return doc;
}

describe('GET /v1/defi-tvl?view=chains', () => {
  it('answers the recorded /v2/chains row with the total (the default view)', async () => {
    fake.route(`GET ${CHAINS}`, { body: recorded('defillama__v2_chains.json') });
    const res = await get('/v1/defi-tvl');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // One chain: tvl 65998652431.40251 as sent; the total Σ tvl is rounded to 12 significant digits: 65998652431.4.
    expect(data).toEqual({
      view: 'chains',
      total_tvl_usd: 65998652431.4,
      chains_total: 1,
      chains: [{ name: 'Ethereum', tvl_usd: 65998652431.40251, token_symbol: 'ETH', chain_id: 1 }],
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'defillama', cached: false })]);
  });

  it('sorts by TVL, sums every chain (not only those shown), and keeps the nulls DefiLlama sends', async () => {
    // CONSTRUCTED rows in the recorded format.
    fake.route(`GET ${CHAINS}`, {
      body: [
        { gecko_id: 'ethereum', tvl: 100.5, tokenSymbol: 'ETH', cmcId: '1027', name: 'Ethereum', chainId: 1 },
        { gecko_id: null, tvl: 300.25, tokenSymbol: null, name: 'Hyperliquid L1', chainId: null },
        { gecko_id: 'tron', tvl: 200, tokenSymbol: 'TRX', cmcId: '1958', name: 'Tron', chainId: null },
      ],
    });
    const { data } = (await get('/v1/defi-tvl?view=chains&limit=2')).json();
    // 100.5 + 300.25 + 200 = 600.75, over all three although two are shown.
    expect(data.total_tvl_usd).toBe(600.75);
    expect(data.chains_total).toBe(3);
    expect(data.chains).toEqual([
      { name: 'Hyperliquid L1', tvl_usd: 300.25, token_symbol: null, chain_id: null },
      { name: 'Tron', tvl_usd: 200, token_symbol: 'TRX', chain_id: null },
    ]);
  });
});

describe('GET /v1/defi-tvl?view=stablecoins', () => {
  it('answers the recorded asset; a non-USD peg has no circulating_usd and stays out of the total', async () => {
    const body = recorded('defillama__stablecoins.json');
    // CONSTRUCTED euro stablecoin in the documented format (circulating keyed by its peg).
    body.peggedAssets.push({ id: '50', name: 'Euro Coin', symbol: 'EURC', pegType: 'peggedEUR', pegMechanism: 'fiat-backed', circulating: { peggedEUR: 50_000_000 }, price: 1.08 });
    body.peggedAssets.reverse();
    fake.route(`GET ${STABLES}`, { body });
    const res = await get('/v1/defi-tvl?view=stablecoins');
    expect(res.statusCode).toBe(200);
    // Tether: circulating.peggedUSD 159510682147.76874 as sent; total = that, to 12 significant digits = 159510682148.
    expect(res.json().data).toEqual({
      view: 'stablecoins',
      total_circulating_usd: 159510682148,
      stablecoins_total: 2,
      stablecoins: [
        { symbol: 'USDT', name: 'Tether', peg_type: 'peggedUSD', peg_mechanism: 'fiat-backed', circulating_usd: 159510682147.76874, circulating: 159510682147.76874, price: 1.001 },
        { symbol: 'EURC', name: 'Euro Coin', peg_type: 'peggedEUR', peg_mechanism: 'fiat-backed', circulating_usd: null, circulating: 50_000_000, price: 1.08 },
      ],
    });
    expect(fake.calls(STABLES)[0]!.query.get('includePrices')).toBe('true');
  });

  it('answers price null when DefiLlama has none', async () => {
    const body = recorded('defillama__stablecoins.json');
    body.peggedAssets[0].price = null;
    fake.route(`GET ${STABLES}`, { body });
    const { data } = (await get('/v1/defi-tvl?view=stablecoins')).json();
    expect(data.stablecoins[0].price).toBeNull();
  });
});

describe('GET /v1/defi-tvl?view=yields', () => {
  it('answers the recorded pool (parsed on a worker thread), within its own deadline', async () => {
    // Slower than the deadline of every other call in this app (TEST_DEADLINE_MS): the yields document has its own.
    fake.route(`GET ${POOLS}`, { body: recorded('defillama__yields_pools.json'), delayMs: TEST_DEADLINE_MS + 500 });
    const res = await get('/v1/defi-tvl?view=yields');
    expect(res.statusCode, res.body).toBe(200);
    // tvlUsd, apy, apyBase, apyReward (null) and stablecoin as sent; ilRisk "no" → false.
    expect(res.json().data).toEqual({ view: 'yields', chain: null, project: null, pools_matched: 1, pools_skipped: 0, pools: [LIDO] });
  });

  it('sorts by TVL and filters by chain and project, case-insensitively, from one cached download', async () => {
    fake.route(`GET ${POOLS}`, { body: poolsDocument() });
    const all = (await get('/v1/defi-tvl?view=yields&limit=3')).json().data;
    // 23.9 bn (lido) > 2 bn (aave WETH) > 500 m (aave USDC) > 90 m (uniswap): four matched, three shown.
    expect(all.pools.map((p: { pool: string }) => p.pool)).toEqual([LIDO.pool, 'p-aave-eth', 'p-aave-arb']);
    expect(all.pools_matched).toBe(4);

    const arb = (await get('/v1/defi-tvl?view=yields&chain=arbitrum')).json();
    expect(arb.data).toMatchObject({ chain: 'arbitrum', project: null, pools_matched: 2 });
    expect(arb.data.pools[0]).toEqual({
      pool: 'p-aave-arb', project: 'aave-v3', chain: 'Arbitrum', symbol: 'USDC', tvl_usd: 500_000_000, apy: 5.5, apy_base: 4, apy_reward: 1.5, stablecoin: true, il_risk: false,
    });
    expect(arb.data.pools[1]).toMatchObject({ pool: 'p-uni-arb', il_risk: true });

    const aaveEth = (await get('/v1/defi-tvl?view=yields&chain=Ethereum&project=AAVE-V3')).json();
    expect(aaveEth.data.pools.map((p: { pool: string }) => p.pool)).toEqual(['p-aave-eth']);
    expect(aaveEth.meta.sources[0].cached).toBe(true);

    // Both known, no pool in common: an empty answer, not a 404.
    const none = (await get('/v1/defi-tvl?view=yields&chain=Arbitrum&project=lido')).json();
    expect(none.data).toMatchObject({ pools_matched: 0, pools: [] });
    expect(fake.calls(POOLS)).toHaveLength(1);
  });

  it('skips a pool it cannot serve (tvlUsd null, an APY as a string) and serves the others, counting what it skipped', async () => {
    const doc = poolsDocument();
    const [lido] = recorded('defillama__yields_pools.json').data;
    doc.data.push({ ...lido, pool: 'no-tvl', tvlUsd: null }, { ...lido, pool: 'odd-apy', tvlUsd: 1e12, apy: '7' });
    fake.route(`GET ${POOLS}`, { body: doc });
    const res = await get('/v1/defi-tvl?view=yields&limit=200');
    expect(res.statusCode, res.body).toBe(200);
    const { data } = res.json();
    expect(data.pools.map((p: { pool: string }) => p.pool)).toEqual([LIDO.pool, 'p-aave-eth', 'p-aave-arb', 'p-uni-arb']);
    expect(data).toMatchObject({ pools_matched: 4, pools_skipped: 2 });
  });

  it.each([
    ['chain=Solana', "defillama lists no yield pool on chain 'Solana'"],
    ['project=nonexistent', "defillama lists no yield pool of project 'nonexistent'"],
  ])('answers 404 for a filter no pool has (%s)', async (qs, message) => {
    fake.route(`GET ${POOLS}`, { body: poolsDocument() });
    const res = await get(`/v1/defi-tvl?view=yields&${qs}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: message, source: 'defillama' });
  });

  it.each<FailureCase>([
    ['HTTP 500', { status: 500, body: 'oops' }, 'defillama answered HTTP 500'],
    ['an HTML page (HTTP 200)', { body: '<!DOCTYPE html><html><body>Just a moment...</body></html>', headers: { 'content-type': 'text/html' } }, 'defillama returned HTML instead of JSON'],
    ['truncated JSON', { body: '{"status":"success","data":[{"chain":', headers: { 'content-type': 'application/json' } }, 'defillama returned a body that is not valid JSON'],
    ['status "error"', { body: { status: 'error', data: [] } }, 'defillama returned an unexpected response shape at status'],
    ['its only pool without tvlUsd (no pool to serve)', { body: { status: 'success', data: [{ ...recorded('defillama__yields_pools.json').data[0], tvlUsd: null }] } }, 'defillama returned an unexpected response shape at data.0.tvlUsd'],
    ['a body over DEFILLAMA_YIELDS_MAX_BODY_BYTES', { hugeBytes: 2 * 1024 * 1024 }, 'defillama response exceeded 1048576 bytes'],
  ])('answers 502 naming defillama when /pools gives %s', async (_name, reply, message) => {
    fake.route(`GET ${POOLS}`, reply);
    const res = await get('/v1/defi-tvl?view=yields');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: message, source: 'defillama' });
  });
});

describe('GET /v1/defi-tvl — failures, parameters, access', () => {
  const failuresOf = (view: string, path: string, cases: FailureCase[]) =>
    cases.map(([name, reply, message]): [string, string, string, FakeReply, string] => [view, name, path, reply, message]);
  it.each([
    ...failuresOf('chains', CHAINS, [
      ...upstreamFailures('defillama', { malformed: '[{"name":"Ethereum","tvl":' }),
      ['a row without a name', { body: [{ tvl: 1 }] }, 'defillama returned an unexpected response shape at 0.name'],
    ]),
    ...failuresOf('stablecoins', STABLES, upstreamFailures('defillama', { malformed: '{"peggedAssets":[' })),
  ])('view=%s: answers 502 naming defillama on %s', async (view, _name, path, reply, message) => {
    fake.route(`GET ${path}`, reply);
    const res = await get(`/v1/defi-tvl?view=${view}`);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: message, source: 'defillama' });
  });

  it.each([
    ['?view=tvl', "query parameter 'view' must be one of chains, stablecoins, yields"],
    ['?limit=201', "query parameter 'limit' must be a whole number from 1 to 200"],
    ['?limit=0', "query parameter 'limit' must be a whole number from 1 to 200"],
    ['?view=chains&chain=Ethereum', "query parameters 'chain' and 'project' apply to view=yields only"],
    ['?view=stablecoins&project=lido', "query parameters 'chain' and 'project' apply to view=yields only"],
    ['?view=yields&chain=', "query parameter 'chain' must not be empty"],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/defi-tvl${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: message });
    expect(fake.requests).toHaveLength(0);
  });

  it('is paid: 401 without credentials (x402 off)', async () => {
    const res = await get('/v1/defi-tvl', {});
    expect(res.statusCode).toBe(401);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('the yields deadline', () => {
  const slow = new FakeUpstream();
  let app: TestApp;
  beforeAll(async () => {
    await slow.start();
    app = await makeApp({ ...TEST_KEY_ENV, DEFILLAMA_YIELDS_BASE_URL: slow.url, DEFILLAMA_YIELDS_DEADLINE_MS: '1000' });
  });
  afterAll(async () => {
    await app.app.close();
    await slow.stop();
  });

  it('is DEFILLAMA_YIELDS_DEADLINE_MS: a document that takes longer is a 502', async () => {
    slow.route(`GET ${POOLS}`, { hang: true });
    const started = performance.now();
    const res = await app.app.inject({ url: '/v1/defi-tvl?view=yields', headers: TEST_KEY });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'defillama did not answer within 1000 ms', source: 'defillama' });
    // Generous margin for a loaded machine.
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
