import { describe, expect, it } from 'vitest';
import { recorded } from '../fixtures.ts';
import { useFakeUpstreamApps } from '../helpers.ts';

// Last prices live 1 s here (default 5 s) so that the freshness of the two legs can be tested quickly;
// derivatives keep their default 30 s.
const PRICE_TTL_S = 1;
const t = useFakeUpstreamApps(['spot', 'futures'], (urls) => ({
  API_KEYS: 'test-key',
  BINANCE_SPOT_BASE_URL: urls.spot,
  BINANCE_FUTURES_BASE_URL: urls.futures,
  CACHE_TTL_PRICE_S: String(PRICE_TTL_S),
}));
const { spot, futures } = t.fakes;

function serveAll(fundingInfo: unknown = [{ symbol: 'ETHUSDT', fundingIntervalHours: 4 }]) {
  spot.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr_BTCUSDT.json') });
  futures.route('GET /fapi/v1/premiumIndex', { body: recorded('binance__futures_premiumIndex.json') });
  futures.route('GET /fapi/v1/fundingInfo', { body: fundingInfo });
}
const get = (qs: string, key = 'test-key') => t.get(`/v1/basis?${qs}`, key ? { 'x-api-key': key } : {});

describe('GET /v1/basis', () => {
  it('derives basis and annualized carry from Binance spot and the USD-M premium index', async () => {
    serveAll();
    const res = await get('symbol=btc');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    expect(spot.calls('/api/v3/ticker/24hr')[0]!.query.get('symbol')).toBe('BTCUSDT');
    expect(futures.calls('/fapi/v1/premiumIndex')[0]!.query.get('symbol')).toBe('BTCUSDT');
    // mark 63392.81973913 − spot 63350.10 = 42.71973913; / 63350.10 × 100 = 0.0674343673175 (12 significant digits)
    // funding 0.00009007 per 8 h (BTCUSDT is not in fundingInfo → default 8): × 3 × 365 × 100 = 9.862665 %
    expect(data).toEqual({
      symbol: 'BTC/USDT',
      venue_symbol: 'BTCUSDT',
      currency: 'USDT',
      spot_price: 63350.1,
      perp_mark_price: 63392.81973913,
      index_price: 63415.27130435,
      basis: 42.71973913,
      basis_pct: 0.0674343673175,
      funding_rate: 0.00009007,
      funding_interval_hours: 8,
      annualized_carry_pct: 9.862665,
      spot_as_of: '2026-07-06T03:16:28.000Z',
      perp_as_of: '2026-07-06T03:16:28.007Z',
    });
    expect(meta.sources.map((s: { provider: string }) => s.provider)).toEqual(['binance', 'binance-futures']);
  });

  it('uses a non-default funding interval from fundingInfo (4 h → 6 settlements a day)', async () => {
    serveAll([{ symbol: 'BTCUSDT', fundingIntervalHours: 4 }]);
    const { data } = (await get('symbol=BTCUSDT')).json();
    expect(data.funding_interval_hours).toBe(4);
    expect(data.annualized_carry_pct).toBe(19.72533); // 0.00009007 × 6 × 365 × 100
  });

  it('leaves the carry null when the funding interval cannot be read, instead of assuming one', async () => {
    serveAll();
    futures.route('GET /fapi/v1/fundingInfo', { status: 500, body: 'x' });
    const { data } = (await get('symbol=BTC')).json();
    expect(data.funding_interval_hours).toBeNull();
    expect(data.annualized_carry_pct).toBeNull();
    expect(data.basis).toBe(42.71973913);
  });

  it('spot failing (451) → 502 naming binance; futures failing → 502 naming binance-futures', async () => {
    serveAll();
    spot.route('GET /api/v3/ticker/24hr', { status: 451, body: recorded('binance__error_451_restricted_location.json') });
    const a = await get('symbol=BTC');
    expect(a.statusCode).toBe(502);
    expect(a.json()).toEqual({ error: 'binance answered HTTP 451', source: 'binance' });
    t.app.services.cache.clear(); // the premium index answered in the first call and was cached
    serveAll();
    futures.route('GET /fapi/v1/premiumIndex', { body: '{"symbol":' });
    const b = await get('symbol=BTC');
    expect(b.statusCode).toBe(502);
    expect(b.json().source).toBe('binance-futures');
  });

  it('a pair Binance does not list → 404', async () => {
    serveAll();
    spot.route('GET /api/v3/ticker/24hr', { status: 400, body: { code: -1121, msg: 'Invalid symbol.' } });
    const res = await get('symbol=NOPEUSDT');
    expect(res.statusCode).toBe(404);
    expect(res.json().source).toBe('binance');
  });

  it('missing symbol → 400; no credentials → 401', async () => {
    const res = await get('');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^query parameter 'symbol' is required/);
    expect((await get('symbol=BTC', '')).statusCode).toBe(401);
  });
});

describe('basis legs and interval (issue 9)', () => {
  it('12. both legs are at most the last-price TTL apart: the mark is not reused from a 30 s derivatives cache', async () => {
    serveAll();
    const first = (await get('symbol=BTC')).json();
    expect(first.data.perp_mark_price).toBe(63392.81973913);
    // The perpetual moves; once the spot price has expired, both legs are asked again.
    const moved = recorded('binance__futures_premiumIndex.json');
    moved.markPrice = '63500.00000000';
    futures.route('GET /fapi/v1/premiumIndex', { body: moved });
    await new Promise((r) => setTimeout(r, PRICE_TTL_S * 1000 + 300));
    const { data, meta } = (await get('symbol=BTC')).json();
    // 63500 − 63350.10 = 149.9 (before: the spot of now against the mark of the first call, 42.71973913).
    expect(data.perp_mark_price).toBe(63500);
    expect(data.basis).toBe(149.9);
    expect(futures.calls('/fapi/v1/premiumIndex')).toHaveLength(2);
    expect(meta.legs).toEqual({
      spot: { provider: 'binance', fetched_at: expect.any(String), as_of: '2026-07-06T03:16:28.000Z' },
      perp: { provider: 'binance-futures', fetched_at: expect.any(String), as_of: '2026-07-06T03:16:28.007Z' },
      fetched_apart_s: expect.any(Number),
    });
    expect(meta.legs.fetched_apart_s).toBeLessThanOrEqual(PRICE_TTL_S);
    expect(Math.abs(Date.parse(meta.legs.spot.fetched_at) - Date.parse(meta.legs.perp.fetched_at)) / 1000).toBeCloseTo(meta.legs.fetched_apart_s, 1);
  });

  it('11. fundingInfo unreadable: the interval is inferred from jittered settlement times, so the carry is kept', async () => {
    serveAll();
    futures.route('GET /fapi/v1/fundingInfo', { status: 500, body: 'x' });
    const rows = recorded('binance-futures__fundingRate_BTCUSDT_7d.json');
    rows.forEach((r: { fundingTime: number }, i: number) => (r.fundingTime += [11, 4, 7, 0, 9][i % 5]!));
    futures.route('GET /fapi/v1/fundingRate', { body: rows });
    const { data } = (await get('symbol=BTC')).json();
    // Settlements 8 h ± a few ms apart → 8 h; 0.00009007 × 3 × 365 × 100 = 9.862665 %.
    expect(data.funding_interval_hours).toBe(8);
    expect(data.annualized_carry_pct).toBe(9.862665);
  });
});
