// GET /v1/volatility against a fake Deribit on 127.0.0.1.
import { describe, expect, it } from 'vitest';
import type { FakeReply } from './fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from './fakes/failures.ts';
import { recorded } from './fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from './helpers.ts';

const DVOL = '/api/v2/public/get_volatility_index_data';
const HV = '/api/v2/public/get_historical_volatility';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, DERIBIT_BASE_URL: url }), { headers: TEST_KEY });
const serve = (dvol: FakeReply, hv: FakeReply = { body: recorded('deribit__get_historical_volatility.json') }) => {
  fake.route(`GET ${DVOL}`, dvol);
  fake.route(`GET ${HV}`, hv);
};

describe('GET /v1/volatility', () => {
  it('reads DVOL and realized volatility from the recorded answers', async () => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') });
    const res = await get('/v1/volatility');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // DVOL: newest candle [1791282300000, 47.55, 47.55, 47.55, 47.55] → 47.55 at 2026-10-06T10:25:00Z. The recording spans
    // 10 minutes, so there is no candle 24 h before it: the change is null, not a guess.
    // Realized: newest point [1550228400000, 46.371891307340015] → 2019-02-15T11:00:00Z.
    // Spread: 47.55 − 46.371891307340015 = 1.17810869266 (12 significant digits).
    expect(data).toEqual({
      symbol: 'BTC',
      currency: 'BTC',
      implied_volatility_30d: 47.55,
      implied_volatility_change_24h: null,
      realized_volatility: 46.371891307340015,
      iv_rv_spread: 1.17810869266,
      as_of: '2026-10-06T10:25:00.000Z',
      realized_volatility_as_of: '2019-02-15T11:00:00.000Z',
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'deribit', cached: false })]);

    // Hourly candles over the last 25 h, the end on a whole minute; the default currency is BTC.
    const q = fake.calls(DVOL)[0]!.query;
    expect(q.get('currency')).toBe('BTC');
    expect(q.get('resolution')).toBe('3600');
    const start = Number(q.get('start_timestamp'));
    const end = Number(q.get('end_timestamp'));
    expect(end - start).toBe(25 * 3600 * 1000);
    expect(end % 60_000).toBe(0);
    expect(Math.abs(Date.now() - end)).toBeLessThan(120_000);
    expect(fake.calls(HV)[0]!.query.get('currency')).toBe('BTC');
  });

  it('computes the 24 h change against the candle exactly 24 h before the newest', async () => {
    const body = recorded('deribit__get_volatility_index_data.json');
    // CONSTRUCTED candle: 1791282300000 − 86 400 000 = 1791195900000, close 50.05 (not a recording).
    body.result.data.unshift([1791195900000, 50.1, 50.2, 50.0, 50.05]);
    serve({ body });
    const { data } = (await get('/v1/volatility?currency=BTC')).json();
    // 47.55 − 50.05 = −2.5 volatility points.
    expect(data.implied_volatility_change_24h).toBe(-2.5);
    expect(data.implied_volatility_30d).toBe(47.55);
  });

  it('asks for ETH when told to', async () => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') });
    const res = await get('/v1/volatility?currency=ETH');
    expect(res.json().data.currency).toBe('ETH');
    expect(fake.calls(DVOL)[0]!.query.get('currency')).toBe('ETH');
    expect(fake.calls(HV)[0]!.query.get('currency')).toBe('ETH');
  });

  it('leaves realized volatility and the spread null when Deribit gives no point', async () => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') }, { body: { jsonrpc: '2.0', result: [] } });
    const { data } = (await get('/v1/volatility')).json();
    expect(data).toMatchObject({ implied_volatility_30d: 47.55, realized_volatility: null, iv_rv_spread: null, realized_volatility_as_of: null });
  });

  it('serves a repeated request within the minute from the cache', async () => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') });
    await get('/v1/volatility');
    const { meta } = (await get('/v1/volatility')).json();
    // Both requests fall in the same minute almost always; when a minute boundary falls between them, the DVOL call repeats.
    expect(fake.calls(HV)).toHaveLength(1);
    expect(fake.calls(DVOL).length).toBeLessThanOrEqual(2);
    if (fake.calls(DVOL).length === 1) expect(meta.sources[0].cached).toBe(true);
  });

  it('answers 502 when Deribit sends no DVOL candle at all', async () => {
    serve({ body: { jsonrpc: '2.0', result: { data: [], continuation: null } } });
    const res = await get('/v1/volatility');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'deribit returned no DVOL candle for BTC in the last 25 h', source: 'deribit' });
  });

  it.each<FailureCase>([
    ...upstreamFailures('deribit', { malformed: '{"jsonrpc":"2.0","result":{"data":[[' }),
    ['its error (HTTP 400)', { status: 400, body: { jsonrpc: '2.0', error: { message: 'Invalid params', code: -32602 }, testnet: false } }, 'deribit error: code -32602 (Invalid params)'],
    ['its rate limit', { status: 429, body: { jsonrpc: '2.0', error: { message: 'too_many_requests', code: 10028 } } }, 'deribit is rate limiting this server (code 10028 (too_many_requests))', 503],
    ['a candle that is not five numbers', { body: { jsonrpc: '2.0', result: { data: [[1791282300000, '47.5']], continuation: null } } }, 'deribit returned an unexpected response shape at result.data.0'],
  ])('answers 502/503 naming deribit on %s', async (_name, reply, message, status = 502) => {
    serve(reply);
    const res = await get('/v1/volatility');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'deribit' });
  });

  it.each(['SOL', 'BTC,ETH', ''])('answers 400 for currency=%s', async (currency) => {
    const res = await get(`/v1/volatility?currency=${encodeURIComponent(currency)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "query parameter 'currency' must be one of BTC, ETH" });
    expect(fake.requests).toHaveLength(0);
  });

  it.each([
    ['currency=eth', 'ETH'],
    ['currency=Btc', 'BTC'],
    ['symbol=eth', 'ETH'],
    ['symbol=ETHUSDT', 'ETH'],
    ['symbol=btc-usd', 'BTC'],
    ['symbol=ETH&currency=eth', 'ETH'],
  ])('%s asks Deribit for %s (any case; `symbol` is the name every route uses, `currency` its older name here)', async (qs, underlying) => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') });
    const res = await get(`/v1/volatility?${qs}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ symbol: underlying, currency: underlying });
    expect(fake.calls(DVOL)[0]!.query.get('currency')).toBe(underlying);
  });

  it.each([
    ['symbol=SOL', "query parameter 'symbol' must be BTC or ETH (the currencies Deribit publishes DVOL for), alone or as a USD pair (BTCUSDT, ETH-USD); got 'SOL'"],
    ['symbol=ETHBTC', "query parameter 'symbol' must be BTC or ETH (the currencies Deribit publishes DVOL for), alone or as a USD pair (BTCUSDT, ETH-USD); got 'ETHBTC'"],
    ['symbol=BTC&currency=ETH', "query parameters 'symbol' and 'currency' name the same thing (currency is the older name); give one, or the same value in both"],
  ])('answers 400 for %s', async (qs, error) => {
    const res = await get(`/v1/volatility?${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error });
    expect(fake.requests).toHaveLength(0);
  });

  it('is paid: 401 without credentials (x402 off), before any upstream call', async () => {
    const res = await get('/v1/volatility', {});
    expect(res.statusCode).toBe(401);
    expect(fake.requests).toHaveLength(0);
  });
});
