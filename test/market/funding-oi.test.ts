// GET /v1/funding-oi against fake Binance USD-M and Bybit v5 servers on 127.0.0.1.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FakeReply } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureOptions } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, BINANCE_FUTURES_BASE_URL: url, BYBIT_BASE_URL: url }), { headers: TEST_KEY });

const INVALID_SYMBOL = { status: 400, body: { code: -1121, msg: 'Invalid symbol.' } };
const CLOUDFRONT_403 = readFileSync(new URL('../fixtures/upstream/bybit__error_403_cloudfront.html', import.meta.url), 'utf8');

const BINANCE_PATHS = ['/fapi/v1/premiumIndex', '/fapi/v1/openInterest', '/fapi/v1/fundingRate', '/futures/data/openInterestHist'];
const BYBIT_PATHS = ['/v5/market/tickers', '/v5/market/funding/history', '/v5/market/open-interest'];

function serveBinance(overrides: Record<string, FakeReply> = {}) {
  fake.route('GET /fapi/v1/premiumIndex', overrides.premiumIndex ?? { body: recorded('binance__futures_premiumIndex.json') });
  // Only symbols with adjusted settings are listed (official example); BTCUSDT is not → default 8 h.
  fake.route('GET /fapi/v1/fundingInfo', overrides.fundingInfo ?? {
    body: [{ symbol: 'BLZUSDT', adjustedFundingRateCap: '0.02500000', adjustedFundingRateFloor: '-0.02500000', fundingIntervalHours: 4, disclaimer: false }],
  });
  fake.route('GET /fapi/v1/openInterest', overrides.openInterest ?? { body: recorded('binance__futures_openInterest.json') });
  fake.route('GET /fapi/v1/fundingRate', overrides.fundingRate ?? { body: recorded('binance-futures__fundingRate_BTCUSDT_7d.json') });
  fake.route('GET /futures/data/openInterestHist', overrides.openInterestHist ?? { body: recorded('binance-futures__openInterestHist_BTCUSDT_1h.json') });
}

function serveBybit(overrides: Record<string, FakeReply> = {}) {
  fake.route('GET /v5/market/tickers', overrides.tickers ?? { body: recorded('bybit__market_tickers_linear.json') });
  fake.route('GET /v5/market/funding/history', overrides.funding ?? { body: recorded('bybit__funding_history_BTCUSDT_7d.json') });
  fake.route('GET /v5/market/open-interest', overrides.openInterest ?? { body: recorded('bybit__open_interest_BTCUSDT_1h.json') });
}

/** Every path of a venue answers the same failure. */
function failVenue(paths: string[], reply: FakeReply) {
  for (const p of paths) fake.route(`GET ${p}`, reply);
}

/** The shared failures of one venue as rows `[name, venue, reply, error]`, the name led by `label`. */
function venueFailures(label: string, venue: string, options: FailureOptions): [string, string, FakeReply, string][] {
  return upstreamFailures(venue, options).map(([name, reply, error]) => [`${label} ${name}`, venue, reply, error]);
}

/** Each shared failure from both venues at once, as rows `[name, binance reply, bybit reply, error]`: the error names both. */
function bothVenuesFail(): [string, FakeReply, FakeReply, string][] {
  const bybit = upstreamFailures('bybit', { malformed: 'nope' });
  return upstreamFailures('binance-futures', { malformed: '[{' }).map(([name, binanceReply, binanceError], i) => {
    const [, bybitReply, bybitError] = bybit[i]!;
    return [name, binanceReply, bybitReply, `${binanceError}; ${bybitError}`];
  });
}

// Hand-worked values from the payloads:
// Binance: OI 104935.279 BTC × mark 63392.81973913 = 6 652 143 225.92 USD.
//          7-day mean: 20 settlements at 0.0001 + the newest 0.000077 → 0.002077 / 21 = 0.0000989047619;
//          the two rows at 0.001 are at/after 7 days back and do not count.
//          OI 24 h: (104882.705 − 100000) / 100000 = +4.882705 %.
// Bybit:   OI value 1 207 155 324.63 (its own); 7-day mean: 7 × 0.0003 + 14 × 0 = 0.0021 / 21 = 0.0001
//          (the −0.01 row exactly 168 h back does not count); interval inferred 8 h from the two newest settlements;
//          OI 24 h: (51737.719 − 50000) / 50000 = +3.475438 %.
// Aggregate: funding (0.00009007 × 6652143225.92 + 0.0001 × 1207155324.63) / 7859298550.55 = 0.0000915952;
//            7-day (0.0000989047619 × B + 0.0001 × Y) / (B + Y) = 0.0000990730;
//            OI 24 h in coins: (104882.705 + 51737.719 − 150000) / 150000 = +4.413616 %.
const B_USD = 6652143225.92;
const Y_USD = 1207155324.63;

describe('GET /v1/funding-oi', () => {
  it('combines Binance USD-M and Bybit linear: per-venue values, OI-weighted aggregate, bias', async () => {
    serveBinance();
    serveBybit();
    const res = await get('/v1/funding-oi?symbol=btc');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();

    expect(data.symbol).toBe('BTC/USDT');
    expect(data.venue_symbol).toBe('BTCUSDT');
    expect(data.venues_unavailable).toEqual([]);
    const [binance, bybit] = data.venues;
    expect(binance).toEqual({
      venue: 'binance-futures',
      symbol: 'BTCUSDT',
      funding_rate: 0.00009007,
      funding_interval_hours: 8,
      next_funding_time: '2026-07-06T08:00:00.000Z', // 1783324800000
      mark_price: 63392.81973913,
      open_interest: 104935.279,
      open_interest_usd: B_USD,
      funding_rate_avg_7d: expect.closeTo(0.0000989047619, 12),
      funding_rate_avg_7d_samples: 21,
      open_interest_change_24h_pct: 4.882705,
    });
    expect(bybit).toEqual({
      venue: 'bybit',
      symbol: 'BTCUSDT',
      funding_rate: 0.0001,
      funding_interval_hours: 8,
      next_funding_time: '2023-02-28T00:00:00.000Z', // "1677542400000"
      mark_price: 23332.21,
      open_interest: 51737.719,
      open_interest_usd: Y_USD,
      funding_rate_avg_7d: 0.0001,
      funding_rate_avg_7d_samples: 21,
      open_interest_change_24h_pct: 3.475438,
    });

    expect(data.aggregate).toEqual({
      funding_rate: expect.closeTo(0.0000915952, 10),
      funding_rate_avg_7d: expect.closeTo(0.000099073, 9),
      funding_interval_hours: 8,
      open_interest_usd: 7859298550.55,
      open_interest_change_24h_pct: 4.413616,
      open_interest_change_24h_venues: ['binance-futures', 'bybit'],
    });
    expect(data.bias).toEqual({
      signal: 'neutral',
      reason:
        'OI-weighted funding +0.0092% per 8h is inside the neutral band -0.0100% to +0.0300% (7-day average +0.0099% per 8h, open interest +4.41% in 24h)',
    });

    expect(meta.sources.map((s: { provider: string }) => s.provider)).toEqual(['binance-futures', 'bybit']);
    expect(meta.sources.every((s: { cached: boolean }) => s.cached === false)).toBe(true);

    // What was asked of the venues.
    expect(Object.fromEntries(fake.calls('/fapi/v1/premiumIndex')[0]!.query)).toEqual({ symbol: 'BTCUSDT' });
    expect(Object.fromEntries(fake.calls('/fapi/v1/openInterest')[0]!.query)).toEqual({ symbol: 'BTCUSDT' });
    expect(Object.fromEntries(fake.calls('/fapi/v1/fundingRate')[0]!.query)).toEqual({ symbol: 'BTCUSDT', limit: '200' });
    expect(Object.fromEntries(fake.calls('/futures/data/openInterestHist')[0]!.query)).toEqual({ symbol: 'BTCUSDT', period: '1h', limit: '25' });
    expect(Object.fromEntries(fake.calls('/v5/market/tickers')[0]!.query)).toEqual({ category: 'linear', symbol: 'BTCUSDT' });
    expect(Object.fromEntries(fake.calls('/v5/market/funding/history')[0]!.query)).toEqual({ category: 'linear', symbol: 'BTCUSDT', limit: '200' });
    expect(Object.fromEntries(fake.calls('/v5/market/open-interest')[0]!.query)).toEqual({ category: 'linear', symbol: 'BTCUSDT', intervalTime: '1h', limit: '25' });
  });

  it('restates a 4-hour Binance funding rate per 8 h in the aggregate (fundingInfo lists the symbol)', async () => {
    serveBinance({ fundingInfo: { body: [{ symbol: 'BTCUSDT', adjustedFundingRateCap: '0.02', adjustedFundingRateFloor: '-0.02', fundingIntervalHours: 4, disclaimer: false }] } });
    serveBybit();
    const { data } = (await get('/v1/funding-oi?symbol=BTCUSDT')).json();
    expect(data.venues[0].funding_interval_hours).toBe(4);
    expect(data.venues[0].funding_rate).toBe(0.00009007); // per the venue's own interval, untouched
    // (2 × 0.00009007 × B + 0.0001 × Y) / (B + Y)
    const expected = (0.00018014 * B_USD + 0.0001 * Y_USD) / (B_USD + Y_USD);
    expect(data.aggregate.funding_rate).toBeCloseTo(expected, 12);
  });

  it('falls back to the spacing of settlements when fundingInfo fails, and uses a Bybit-stated interval', async () => {
    serveBinance({ fundingInfo: { status: 500, body: 'down' } });
    const tickers = recorded('bybit__market_tickers_linear.json');
    tickers.result.list[0].fundingIntervalHour = '4';
    serveBybit({ tickers: { body: tickers } });
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    expect(data.venues[0].funding_interval_hours).toBe(8); // inferred: 8 h between the two newest settlements
    expect(data.venues[1].funding_interval_hours).toBe(4); // stated by Bybit
  });

  it.each([
    ['long', '0.00050000', '0.0005', 'OI-weighted funding +0.0500% per 8h is above +0.0300%: longs are crowded and pay shorts'],
    ['short', '-0.00030000', '-0.0003', 'OI-weighted funding -0.0300% per 8h is below -0.0100%: shorts are crowded and pay longs'],
  ])('bias %s', async (signal, binanceRate, bybitRate, reason) => {
    const premium = recorded('binance__futures_premiumIndex.json');
    premium.lastFundingRate = binanceRate;
    const tickers = recorded('bybit__market_tickers_linear.json');
    tickers.result.list[0].fundingRate = bybitRate;
    serveBinance({ premiumIndex: { body: premium } });
    serveBybit({ tickers: { body: tickers } });
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    expect(data.bias.signal).toBe(signal);
    expect(data.bias.reason.startsWith(reason)).toBe(true);
  });

  it('leaves fields the venue did not send null, and keeps them out of the aggregate', async () => {
    const tickers = recorded('bybit__market_tickers_linear.json');
    delete tickers.result.list[0].openInterestValue;
    delete tickers.result.list[0].openInterest;
    tickers.result.list[0].fundingRate = '';
    serveBinance();
    serveBybit({ tickers: { body: tickers }, openInterest: { body: { retCode: 0, retMsg: 'OK', result: { category: 'linear', symbol: 'BTCUSDT', list: [] }, time: 1 } } });
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    expect(data.venues[1]).toMatchObject({ funding_rate: null, open_interest: null, open_interest_usd: null, open_interest_change_24h_pct: null });
    expect(data.aggregate.funding_rate).toBe(0.00009007); // Binance only
    expect(data.aggregate.open_interest_usd).toBe(B_USD);
    expect(data.aggregate.open_interest_change_24h_venues).toEqual(['binance-futures']);
    expect(data.aggregate.open_interest_change_24h_pct).toBe(4.882705);
  });

  it('a repeat within the TTL is served from the cache', async () => {
    serveBinance();
    serveBybit();
    await get('/v1/funding-oi?symbol=BTC');
    const again = (await get('/v1/funding-oi?symbol=BTCUSDT')).json();
    expect(again.meta.sources.every((s: { cached: boolean }) => s.cached)).toBe(true);
    expect(fake.requests).toHaveLength(8); // 5 Binance (incl. fundingInfo) + 3 Bybit, once
  });
});

describe('funding-oi with one venue down', () => {
  it.each<[string, string, FakeReply, string]>([
    ['Bybit 403 (CloudFront HTML, geo-block)', 'bybit', { status: 403, body: CLOUDFRONT_403, headers: { 'content-type': 'text/html' } }, 'bybit answered HTTP 403'],
    ...venueFailures('Bybit', 'bybit', { malformed: '{"retCode":0,"result":{' }),
    ['Bybit retCode 10006', 'bybit', { body: { retCode: 10006, retMsg: 'Too many visits!', result: {}, time: 1 } }, 'bybit is rate limiting this server (retCode 10006 (Too many visits!))'],
    ...venueFailures('Binance', 'binance-futures', { geoBlock: true, malformed: '{"symbol":"BTCUSDT","markPrice":' }),
    ['Binance error code', 'binance-futures', { status: 400, body: { code: -1130, msg: "Data sent for parameter 'limit' is not valid." } }, "binance-futures error: code -1130 (Data sent for parameter 'limit' is not valid.)"],
  ])('%s → the other venue, and venues_unavailable', async (_name, down, reply, error) => {
    serveBinance();
    serveBybit();
    failVenue(down === 'bybit' ? BYBIT_PATHS : BINANCE_PATHS, reply);
    const res = await get('/v1/funding-oi?symbol=BTC');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    const up = down === 'bybit' ? 'binance-futures' : 'bybit';
    expect(data.venues.map((v: { venue: string }) => v.venue)).toEqual([up]);
    expect(data.venues_unavailable).toEqual([{ venue: down, error }]);
    expect(meta.sources.map((s: { provider: string }) => s.provider)).toEqual([up]);
    // The aggregate is that venue alone.
    if (up === 'binance-futures') {
      expect(data.aggregate).toMatchObject({ funding_rate: 0.00009007, open_interest_usd: B_USD, open_interest_change_24h_pct: 4.882705 });
    } else {
      expect(data.aggregate).toMatchObject({ funding_rate: 0.0001, open_interest_usd: Y_USD, open_interest_change_24h_pct: 3.475438 });
    }
  });

  it('one failing call of a venue makes the whole venue unavailable (no half-filled row)', async () => {
    serveBinance({ openInterestHist: { status: 500, body: 'oops' } });
    serveBybit();
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    expect(data.venues_unavailable).toEqual([{ venue: 'binance-futures', error: 'binance-futures answered HTTP 500' }]);
  });

  it('a body that is not the documented shape names the field', async () => {
    const premium = recorded('binance__futures_premiumIndex.json');
    delete premium.markPrice;
    serveBinance({ premiumIndex: { body: premium } });
    serveBybit();
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    expect(data.venues_unavailable).toEqual([{ venue: 'binance-futures', error: 'binance-futures returned an unexpected response shape at markPrice' }]);
  });
});

describe('funding-oi when no venue answers', () => {
  it.each<[string, FakeReply, FakeReply, string]>([
    ['geo-blocked everywhere (451 / 403 HTML)', { status: 451, body: recorded('binance__error_451_restricted_location.json') }, { status: 403, body: CLOUDFRONT_403 }, 'binance-futures answered HTTP 451; bybit answered HTTP 403'],
    ...bothVenuesFail(),
  ])('%s → 502 naming the first venue as source and both in the message', async (_name, binanceReply, bybitReply, error) => {
    failVenue(BINANCE_PATHS, binanceReply);
    failVenue(BYBIT_PATHS, bybitReply);
    const res = await get('/v1/funding-oi?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error, source: 'binance-futures' });
  });

  it('Binance does not list it and Bybit fails → 502 from Bybit (unknown on one venue is not proof)', async () => {
    failVenue(BINANCE_PATHS, INVALID_SYMBOL);
    failVenue(BYBIT_PATHS, { status: 403, body: CLOUDFRONT_403 });
    const res = await get('/v1/funding-oi?symbol=BTC');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: "binance-futures lists no USD-M perpetual 'BTCUSDT'; bybit answered HTTP 403", source: 'bybit' });
  });
});

describe('funding-oi unknown symbols', () => {
  it('both venues say unknown (Binance -1121, Bybit retCode 10001) → 404', async () => {
    failVenue(BINANCE_PATHS, INVALID_SYMBOL);
    fake.route('GET /fapi/v1/fundingRate', { body: [] }); // the history endpoint answers an empty list
    fake.route('GET /fapi/v1/fundingInfo', { body: [] });
    failVenue(BYBIT_PATHS, { body: recorded('bybit__error_not_supported_symbols.json') });
    const res = await get('/v1/funding-oi?symbol=NOPEUSDT');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: "no venue lists a perpetual 'NOPEUSDT': binance-futures lists no USD-M perpetual 'NOPEUSDT'; bybit lists no linear perpetual 'NOPEUSDT'",
      source: 'binance-futures',
    });
  });

  it('Bybit answering an empty list counts as unknown too', async () => {
    failVenue(BINANCE_PATHS, INVALID_SYMBOL);
    fake.route('GET /fapi/v1/fundingRate', { body: [] });
    serveBybit({ tickers: { body: { retCode: 0, retMsg: 'OK', result: { category: 'linear', list: [] }, retExtInfo: {}, time: 1 } } });
    expect((await get('/v1/funding-oi?symbol=NOPEUSDT')).statusCode).toBe(404);
  });

  it('listed on Binance only → 200 with Bybit under venues_unavailable', async () => {
    serveBinance();
    failVenue(BYBIT_PATHS, { body: recorded('bybit__error_not_supported_symbols.json') });
    const res = await get('/v1/funding-oi?symbol=BTC');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.venues_unavailable).toEqual([{ venue: 'bybit', error: "bybit lists no linear perpetual 'BTCUSDT'" }]);
  });

  it('a retCode 10001 that is not about the symbol is a provider error, not a 404', async () => {
    serveBinance();
    failVenue(BYBIT_PATHS, { body: { retCode: 10001, retMsg: 'params error: category invalid', result: {}, time: 1 } });
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    expect(data.venues_unavailable).toEqual([{ venue: 'bybit', error: 'bybit error: retCode 10001 (params error: category invalid)' }]);
  });
});

describe('funding-oi parameters and access', () => {
  it.each([
    ['missing symbol', '', /^query parameter 'symbol' is required: a crypto base asset/],
    ['symbol with bad characters', 'symbol=BTC%24', /^query parameter 'symbol' must be a crypto base asset/],
    ['symbol too long', `symbol=${'A'.repeat(30)}`, /^query parameter 'symbol' must be/],
  ])('%s → 400 naming the parameter', async (_name, qs, message) => {
    const res = await get(`/v1/funding-oi?${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
    expect(fake.requests).toHaveLength(0);
  });

  it('requires credentials: no key → 401, a wrong key → 401, the key → 200', async () => {
    serveBinance();
    serveBybit();
    const none = await get('/v1/funding-oi?symbol=BTC', {});
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toMatch(/API key is required/);
    expect((await get('/v1/funding-oi?symbol=BTC', { 'x-api-key': 'wrong' })).statusCode).toBe(401);
    expect(fake.requests).toHaveLength(0);
    expect((await get('/v1/funding-oi?symbol=BTC')).statusCode).toBe(200);
  });
});

describe('funding-oi reads each field as the venue documents it (issue 9)', () => {
  /**
   * The recorded Bybit ticker and hourly OI restated in the format Bybit documents since June 2026:
   * openInterest / openInterestValue are both sides (twice the recorded one-side figures), and
   * singleOpenInterest / singleOpenInterestValue carry the one side that Binance's openInterest counts.
   */
  function bybitTwoSided() {
    const tickers = recorded('bybit__market_tickers_linear.json');
    Object.assign(tickers.result.list[0], {
      openInterest: '103475.438', // 2 × 51737.719
      openInterestValue: '2414310649.26', // 2 × 1207155324.63
      singleOpenInterest: '51737.719',
      singleOpenInterestValue: '1207155324.63',
    });
    const oi = recorded('bybit__open_interest_BTCUSDT_1h.json');
    for (const row of oi.result.list) {
      row.singleOpenInterest = row.openInterest;
      row.openInterest = (2 * Number(row.openInterest)).toFixed(3);
    }
    return { tickers: { body: tickers }, openInterest: { body: oi } };
  }

  it('9. Bybit: the single-side fields when present, so its OI and weight are not doubled; meta names the fields', async () => {
    serveBinance();
    serveBybit(bybitTwoSided());
    const { data, meta } = (await get('/v1/funding-oi?symbol=BTC')).json();
    // The same one-side figures as the recorded (older API) answer: 51737.719 BTC, 1 207 155 324.63 USD, +3.475438 %.
    expect(data.venues[1]).toMatchObject({ open_interest: 51737.719, open_interest_usd: Y_USD, open_interest_change_24h_pct: 3.475438 });
    // Σ USD 6 652 143 225.92 + 1 207 155 324.63; had the two-sided value been summed it would be 9 066 453 875.18 (+15 %).
    expect(data.aggregate.open_interest_usd).toBe(7859298550.55);
    expect(data.aggregate.funding_rate).toBeCloseTo(0.0000915952, 10);
    expect(data.aggregate.open_interest_change_24h_pct).toBe(4.413616);
    expect(meta.bybit_open_interest_fields).toEqual({
      open_interest: 'singleOpenInterest',
      open_interest_usd: 'singleOpenInterestValue',
      history: ['singleOpenInterest'],
    });
  });

  it('9. Bybit: without single-side fields, openInterest is read as the older API documented it (one side), and meta says so', async () => {
    serveBinance();
    serveBybit();
    const { data, meta } = (await get('/v1/funding-oi?symbol=BTC')).json();
    expect(data.venues[1]).toMatchObject({ open_interest: 51737.719, open_interest_usd: Y_USD });
    expect(meta.bybit_open_interest_fields).toEqual({ open_interest: 'openInterest', open_interest_usd: 'openInterestValue', history: ['openInterest'] });
  });

  it('10. the 7-day figure is the funding paid over the window per 8 h when the interval changed during the week', async () => {
    // Binance moved BTCUSDT from 8 h to 1 h settlements: 18 settlements 8 h apart, then 24 one hour apart (the newest
    // at T), every one at 0.0001 per its own interval; one more 8 h settlement at T − 175 h shows the history covers
    // the whole window (T − 168 h, T] and is itself outside it.
    const T = 1783296000000;
    const H = 3_600_000;
    const times = [T - 175 * H, ...Array.from({ length: 18 }, (_, k) => T - 167 * H + k * 8 * H), ...Array.from({ length: 24 }, (_, k) => T - 23 * H + k * H)];
    const rows = times.map((fundingTime) => ({ symbol: 'BTCUSDT', fundingTime, fundingRate: '0.00010000', markPrice: '63000.00000000' }));
    const premium = recorded('binance__futures_premiumIndex.json');
    premium.nextFundingTime = T + H;
    serveBinance({
      premiumIndex: { body: premium },
      fundingRate: { body: rows },
      fundingInfo: { body: [{ symbol: 'BTCUSDT', adjustedFundingRateCap: '0.02', adjustedFundingRateFloor: '-0.02', fundingIntervalHours: 1, disclaimer: false }] },
    });
    failVenue(BYBIT_PATHS, { body: recorded('bybit__error_not_supported_symbols.json') });
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    // Paid over the window: 42 × 0.0001 = 0.0042 in 168 h = 0.0042 × 8 / 168 = 0.0002 per 8 h
    // (the mean per settlement restated at the current 1 h interval was 0.0001 × 8 = 0.0008, 4× too high).
    expect(data.venues[0]).toMatchObject({ funding_interval_hours: 1, funding_rate_avg_7d: 0.0002, funding_rate_avg_7d_samples: 42 });
    expect(data.aggregate.funding_rate_avg_7d).toBe(0.0002);
  });

  it('11. settlement times with millisecond jitter: the interval is still inferred, and the window edge still holds', async () => {
    // The recorded history with jitter on every settlement time (Binance stamps e.g. 08:00:00.011Z); the row
    // exactly 168 h before the newest gets a later jitter than the newest, so it would fall 9 ms inside the window.
    const rows = recorded('binance-futures__fundingRate_BTCUSDT_7d.json');
    rows.forEach((r: { fundingTime: number }, i: number) => (r.fundingTime += [11, 4, 7, 0, 9][i % 5]!));
    rows[rows.length - 1].fundingTime = 1783296000000 + 2;
    rows[rows.length - 22].fundingTime = 1783296000000 - 168 * 3_600_000 + 11;
    serveBinance({ fundingInfo: { status: 500, body: 'down' }, fundingRate: { body: rows } });
    serveBybit();
    const { data } = (await get('/v1/funding-oi?symbol=BTC')).json();
    // Inferred 8 h (gaps of 8 h ± a few ms, rounded), so Binance stays in the aggregate funding: the main test's
    // (0.00009007 × B + 0.0001 × Y) / (B + Y); the 7-day figure counts the same 21 settlements: 0.002077 × 8 / 168.
    expect(data.venues[0]).toMatchObject({ funding_interval_hours: 8, funding_rate_avg_7d_samples: 21 });
    expect(data.venues[0].funding_rate_avg_7d).toBeCloseTo(0.0000989047619, 12);
    expect(data.aggregate.funding_rate).toBeCloseTo(0.0000915952, 10);
  });
});
