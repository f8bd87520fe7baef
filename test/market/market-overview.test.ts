// GET /v1/market-overview against a fake CoinGecko on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coingeckoKeyHeader } from '../../src/sources/coingecko.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, useFakeUpstreamApp, type TestApp } from '../helpers.ts';

const GLOBAL = '/api/v3/global';
const MARKETS = '/api/v3/coins/markets';

const { fake, get } = useFakeUpstreamApp((url) => ({ COINGECKO_BASE_URL: url }));

/** The recorded row (Bitcoin), as the app answers it. */
const BITCOIN = {
  rank: 1,
  symbol: 'BTC',
  name: 'Bitcoin',
  id: 'bitcoin',
  price_usd: 70187,
  market_cap_usd: 1381651251183,
  volume_24h_usd: 20154184933,
  change_24h_pct: 3.12502,
};

describe('GET /v1/market-overview?view=global', () => {
  it('answers the whole-market figures of the recorded /global, free and without credentials', async () => {
    fake.route(`GET ${GLOBAL}`, { body: recorded('coingecko__global.json') });
    const res = await get('/v1/market-overview');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // total_market_cap.usd, total_volume.usd, market_cap_percentage.btc/.eth, market_cap_change_percentage_24h_usd,
    // active_cryptocurrencies as sent; updated_at 1712512855 s = 2024-04-07T18:00:55Z.
    expect(data).toEqual({
      view: 'global',
      total_market_cap_usd: 2721226850772.63,
      total_volume_24h_usd: 69327091133.5489,
      btc_dominance_pct: 50.4465263233584,
      eth_dominance_pct: 14.9228066918211,
      market_cap_change_24h_pct: 1.72179506060272,
      active_cryptocurrencies: 13690,
      as_of: '2024-04-07T18:00:55.000Z',
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'coingecko', cached: false })]);
    // Keyless: no key header.
    const [call] = fake.calls(GLOBAL);
    expect(call!.headers['x-cg-demo-api-key']).toBeUndefined();
    expect(call!.headers['x-cg-pro-api-key']).toBeUndefined();
  });

  it('answers null for a figure CoinGecko does not give (no eth share, no usd total)', async () => {
    const body = recorded('coingecko__global.json');
    delete body.data.market_cap_percentage.eth;
    delete body.data.total_volume.usd;
    fake.route(`GET ${GLOBAL}`, { body });
    const { data } = (await get('/v1/market-overview?view=global')).json();
    expect(data).toMatchObject({ eth_dominance_pct: null, total_volume_24h_usd: null, btc_dominance_pct: 50.4465263233584 });
  });
});

describe('GET /v1/market-overview?view=global — one bad value is not a failed answer', () => {
  it('serves the figures when CoinGecko sends null (or a string) for a currency or coin it does not serve', async () => {
    const body = recorded('coingecko__global.json');
    // EDITED recorded /global: currencies and shares this route never serves.
    body.data.total_market_cap.vef = null;
    body.data.total_volume.bits = null;
    body.data.total_volume.sats = 'n/a';
    body.data.market_cap_percentage.usdt = null;
    fake.route(`GET ${GLOBAL}`, { body });
    const res = await get('/v1/market-overview?view=global');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ total_market_cap_usd: 2721226850772.63, total_volume_24h_usd: 69327091133.5489, btc_dominance_pct: 50.4465263233584, eth_dominance_pct: 14.9228066918211 });
  });

  it('answers null for a served figure CoinGecko sends as null (usd total, eth share)', async () => {
    const body = recorded('coingecko__global.json');
    body.data.total_market_cap.usd = null;
    body.data.market_cap_percentage.eth = null;
    fake.route(`GET ${GLOBAL}`, { body });
    const { data } = (await get('/v1/market-overview?view=global')).json();
    expect(data).toMatchObject({ total_market_cap_usd: null, eth_dominance_pct: null, btc_dominance_pct: 50.4465263233584 });
  });
});

describe('GET /v1/market-overview?view=top', () => {
  it('answers the recorded /coins/markets row, asking for one page of 250 in USD by market cap', async () => {
    fake.route(`GET ${MARKETS}`, { body: recorded('coingecko__coins_markets.json') });
    const res = await get('/v1/market-overview?view=top');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ view: 'top', coins: [BITCOIN] });
    expect(Object.fromEntries(fake.calls(MARKETS)[0]!.query)).toEqual({ vs_currency: 'usd', order: 'market_cap_desc', per_page: '250', page: '1' });
  });

  it('cuts to `limit` from one cached page, in CoinGecko\'s order', async () => {
    const [btc] = recorded('coingecko__coins_markets.json');
    // CONSTRUCTED rows in the recorded format (values chosen for the test, not recorded).
    const eth = { ...btc, id: 'ethereum', symbol: 'eth', name: 'Ethereum', market_cap_rank: 2, current_price: 3400.5 };
    const sol = { ...btc, id: 'solana', symbol: 'sol', name: 'Solana', market_cap_rank: 3, current_price: 150 };
    fake.route(`GET ${MARKETS}`, { body: [btc, eth, sol] });
    const two = (await get('/v1/market-overview?view=top&limit=2')).json();
    expect(two.data.coins.map((c: { symbol: string }) => c.symbol)).toEqual(['BTC', 'ETH']);
    expect(two.data.coins[1]).toMatchObject({ rank: 2, price_usd: 3400.5, id: 'ethereum' });
    const all = (await get('/v1/market-overview?view=top&limit=250')).json();
    expect(all.data.coins).toHaveLength(3);
    expect(all.meta.sources[0].cached).toBe(true);
    expect(fake.calls(MARKETS)).toHaveLength(1);
  });

  it('answers null where CoinGecko gives null (small coins without rank or price)', async () => {
    const [btc] = recorded('coingecko__coins_markets.json');
    fake.route(`GET ${MARKETS}`, { body: [{ ...btc, market_cap_rank: null, current_price: null, price_change_percentage_24h: null }] });
    const { data } = (await get('/v1/market-overview?view=top')).json();
    expect(data.coins[0]).toEqual({ ...BITCOIN, rank: null, price_usd: null, change_24h_pct: null });
  });
});

describe('GET /v1/market-overview — failures and parameters', () => {
  it.each<FailureCase>([
    ...upstreamFailures('coingecko', { malformed: '{"data":{"active_cryptocurrencies":' }),
    [
      'its rate limit (HTTP 429)',
      { status: 429, body: { status: { error_code: 429, error_message: "You've exceeded the Rate Limit." } } },
      "coingecko is rate limiting this server (error_code 429 (You've exceeded the Rate Limit.))",
      503,
    ],
    [
      'a key on the wrong host (10010)',
      { status: 400, body: { status: { error_code: 10010, error_message: 'If you are using Pro API key, please change your root URL from api.coingecko.com to pro-api.coingecko.com' } } },
      'coingecko error: error_code 10010 (If you are using Pro API key, please change your root URL from api.coingecko.com to pro-api.coingecko.com)',
    ],
    ['a total that is not a number', { body: { data: { ...recorded('coingecko__global.json').data, total_market_cap: { usd: 'lots' } } } }, 'coingecko returned an unexpected response shape at data.total_market_cap.usd'],
  ])('answers 502/503 naming coingecko on %s', async (_name, reply, message, status = 502) => {
    fake.route(`GET ${GLOBAL}`, reply);
    const res = await get('/v1/market-overview?view=global');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'coingecko' });
  });

  it.each([
    ['?view=coins', "query parameter 'view' must be one of global, top"],
    ['?view=top&limit=251', "query parameter 'limit' must be a whole number from 1 to 250"],
    ['?view=top&limit=0', "query parameter 'limit' must be a whole number from 1 to 250"],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/market-overview${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: message });
    expect(fake.requests).toHaveLength(0);
  });

  it('ignores payment headers on this free route', async () => {
    fake.route(`GET ${GLOBAL}`, { body: recorded('coingecko__global.json') });
    const res = await get('/v1/market-overview', { 'payment-signature': 'AAAA', 'x-api-key': 'not-a-key' });
    expect(res.statusCode).toBe(200);
  });
});

describe('COINGECKO_API_KEY', () => {
  it('is sent as the header its host expects: x-cg-pro-api-key on pro-api.coingecko.com, x-cg-demo-api-key elsewhere', () => {
    expect(coingeckoKeyHeader('https://pro-api.coingecko.com')).toBe('x-cg-pro-api-key');
    expect(coingeckoKeyHeader('https://api.coingecko.com')).toBe('x-cg-demo-api-key');
    expect(coingeckoKeyHeader('http://127.0.0.1:1234')).toBe('x-cg-demo-api-key');
  });

  describe('with a key set', () => {
    const keyed = new FakeUpstream();
    let t: TestApp;
    beforeAll(async () => {
      await keyed.start();
      t = await makeApp({ COINGECKO_BASE_URL: keyed.url, COINGECKO_API_KEY: 'CG-demo-key' });
    });
    afterAll(async () => {
      await t.app.close();
      await keyed.stop();
    });

    it('sends it in x-cg-demo-api-key on every call, never in the query', async () => {
      keyed.route(`GET ${GLOBAL}`, { body: recorded('coingecko__global.json') });
      keyed.route(`GET ${MARKETS}`, { body: recorded('coingecko__coins_markets.json') });
      expect((await t.app.inject({ url: '/v1/market-overview' })).statusCode).toBe(200);
      expect((await t.app.inject({ url: '/v1/market-overview?view=top' })).statusCode).toBe(200);
      for (const call of keyed.requests) {
        expect(call.headers['x-cg-demo-api-key']).toBe('CG-demo-key');
        expect(call.query.has('x_cg_demo_api_key')).toBe(false);
      }
      expect(keyed.requests).toHaveLength(2);
    });
  });
});
