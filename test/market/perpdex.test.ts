// GET /v1/perpdex against a fake Hyperliquid /info server on 127.0.0.1.
import { describe, expect, it } from 'vitest';
import type { FakeReply } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, HYPERLIQUID_BASE_URL: url }), { headers: TEST_KEY });
const serve = (reply: FakeReply) => fake.route('POST /info', reply);

describe('GET /v1/perpdex', () => {
  it('reads the official sample (ctxs aligned by index with the universe)', async () => {
    serve({ body: recorded('hyperliquid__info_metaAndAssetCtxs.json') });
    const res = await get('/v1/perpdex?symbol=BTC');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // universe[0] = BTC → ctxs[0]:
    //   funding 0.0000125 × 24 × 365 × 100 = 10.95 % a year
    //   OI 688.11 × mark 14.3161 = 9851.051571
    //   change (14.3161 − 15.322) / 15.322 × 100 = −6.56506983423 %
    expect(data).toEqual({
      symbol: 'BTC',
      venue_symbol: 'BTC',
      venue: 'hyperliquid',
      currency: 'USD',
      funding_rate_hourly: 0.0000125,
      funding_annualized_pct: 10.95,
      open_interest: 688.11,
      open_interest_usd: 9851.051571,
      mark_price: 14.3161,
      oracle_price: 14.32,
      mid_price: 14.314,
      premium: 0.00031774,
      volume_24h_usd: 1169046.29406,
      prev_day_price: 15.322,
      change_24h_pct: -6.56506983423,
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'hyperliquid', cached: false })]);

    // One read-only POST with the documented body.
    const [call] = fake.calls('/info');
    expect(call!.method).toBe('POST');
    expect(JSON.parse(call!.body)).toEqual({ type: 'metaAndAssetCtxs' });
    expect(call!.headers['content-type']).toBe('application/json');
  });

  it('picks the context by position: ETH is ctxs[1]', async () => {
    serve({ body: recorded('hyperliquid__info_metaAndAssetCtxs.json') });
    const { data } = (await get('/v1/perpdex?symbol=ETH')).json();
    expect(data).toMatchObject({ symbol: 'ETH', mark_price: 6.0436, open_interest: 1882.55, prev_day_price: 6.3611 });
  });

  it('reads the live shape (real BTC ctx; extra top-level fields)', async () => {
    serve({ body: recorded('hyperliquid__metaAndAssetCtxs_live_shape.json') });
    const { data } = (await get('/v1/perpdex?symbol=BTC-USD')).json();
    // 0.0000052764 × 8760 × 100 = 4.6221264 %; 36295.80812 × 80639.0 = 2 926 857 670.99;
    // (80639 − 77759) / 77759 × 100 = 3.70375133425 %.
    expect(data).toEqual({
      symbol: 'BTC',
      venue_symbol: 'BTC',
      venue: 'hyperliquid',
      currency: 'USD',
      funding_rate_hourly: 0.0000052764,
      funding_annualized_pct: 4.6221264,
      open_interest: 36295.80812,
      open_interest_usd: 2926857670.99,
      mark_price: 80639,
      oracle_price: 80684.7,
      mid_price: 80639.5,
      premium: -0.0005540084,
      volume_24h_usd: 4490636711.43,
      prev_day_price: 77759,
      change_24h_pct: 3.70375133425,
    });
  });

  it('mid_price and premium are null when the venue gives null', async () => {
    serve({ body: recorded('hyperliquid__metaAndAssetCtxs_live_shape.json') });
    const { data } = (await get('/v1/perpdex?symbol=eth')).json();
    expect(data).toMatchObject({ symbol: 'ETH', mid_price: null, premium: null, funding_rate_hourly: -0.0000125, funding_annualized_pct: -10.95 });
    // (2412 − 2400) / 2400 × 100 = 0.5 %
    expect(data.change_24h_pct).toBe(0.5);
  });

  it('matches coin names case-insensitively and answers with the venue spelling', async () => {
    serve({ body: recorded('hyperliquid__metaAndAssetCtxs_live_shape.json') });
    const { data } = (await get('/v1/perpdex?symbol=kpepe')).json();
    expect(data.symbol).toBe('kPEPE');
    expect(data.open_interest_usd).toBe(36458240); // 2 912 000 000 × 0.01252
  });

  it.each(['BTCUSDT', 'btc/usdc', 'BTC-USD'])('a USD-quoted pair %s is read as its base asset', async (symbol) => {
    serve({ body: recorded('hyperliquid__info_metaAndAssetCtxs.json') });
    const res = await get(`/v1/perpdex?symbol=${encodeURIComponent(symbol)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.symbol).toBe('BTC');
  });

  it('one upstream answer serves every coin within the TTL', async () => {
    serve({ body: recorded('hyperliquid__info_metaAndAssetCtxs.json') });
    await get('/v1/perpdex?symbol=BTC');
    const eth = (await get('/v1/perpdex?symbol=ETH')).json();
    expect(eth.meta.sources[0].cached).toBe(true);
    expect(fake.calls('/info')).toHaveLength(1);
  });
});

describe('perpdex: unknown, delisted, failures', () => {
  it.each([
    ['an unknown coin', 'DOGE', "hyperliquid lists no perpetual 'DOGE'"],
    ['a delisted coin', 'FTT', "hyperliquid perpetual 'FTT' is delisted"],
    ['a non-USD quote', 'ETHBTC', 'hyperliquid perpetuals are quoted in USD; there is no ETH/BTC perpetual'],
  ])('%s → 404', async (_name, symbol, error) => {
    serve({ body: recorded('hyperliquid__metaAndAssetCtxs_live_shape.json') });
    const res = await get(`/v1/perpdex?symbol=${symbol}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error, source: 'hyperliquid' });
  });

  it.each<FailureCase>([
    ...upstreamFailures('hyperliquid', { malformed: '[{"universe":', timeoutBody: [] }),
    ['an error string body', { body: 'Failed to deserialize the JSON body into the target type' }, 'hyperliquid returned a body that is not valid JSON'],
  ])('%s → 502 with source', async (_name, reply, error) => {
    serve(reply);
    const res = await get('/v1/perpdex?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error, source: 'hyperliquid' });
  });

  it('contexts not aligned with the universe → 502 rather than a wrong coin\'s numbers', async () => {
    const body = recorded('hyperliquid__info_metaAndAssetCtxs.json');
    body[1].pop();
    serve({ body });
    const res = await get('/v1/perpdex?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'hyperliquid returned an unexpected response shape at 1', source: 'hyperliquid' });
  });

  it('HTTP 503 is retried once (the POST is a read), then fails', async () => {
    serve({ status: 503, body: 'busy' });
    const res = await get('/v1/perpdex?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(fake.calls('/info')).toHaveLength(2);
  });

  it('a missing symbol → 400', async () => {
    const res = await get('/v1/perpdex');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^query parameter 'symbol' is required/);
  });

  it('requires credentials: no key → 401, the key → 200', async () => {
    serve({ body: recorded('hyperliquid__info_metaAndAssetCtxs.json') });
    expect((await get('/v1/perpdex?symbol=BTC', {})).statusCode).toBe(401);
    expect(fake.requests).toHaveLength(0);
    expect((await get('/v1/perpdex?symbol=BTC')).statusCode).toBe(200);
  });
});
