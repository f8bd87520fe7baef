// Crypto-only routes (orderbook, funding-oi, long-short-ratio, basis, perpdex) take any well-formed base
// asset or pair: nothing there can be an equity, so a base asset outside the shipped list is asked of the
// venue, and the venue's "unknown symbol" is the 404 (with `source`), never a 400 "reads as an equity
// ticker". Only what cannot be a crypto symbol at all (BRK.B) is a 400.
import { describe, expect, it } from 'vitest';
import type { FakeReply } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApps } from '../helpers.ts';

const t = useFakeUpstreamApps(['binance', 'futures', 'bybit', 'coinbase', 'kraken', 'hyperliquid'] as const, (urls) => ({
  ...TEST_KEY_ENV,
  BINANCE_SPOT_BASE_URL: urls.binance,
  BINANCE_FUTURES_BASE_URL: urls.futures,
  BYBIT_BASE_URL: urls.bybit,
  COINBASE_BASE_URL: urls.coinbase,
  KRAKEN_BASE_URL: urls.kraken,
  HYPERLIQUID_BASE_URL: urls.hyperliquid,
}), { headers: TEST_KEY });
const { fakes, get } = t;

const BINANCE_INVALID: FakeReply = { status: 400, body: recorded('binance__error_invalid_symbol.json') };
const FUTURES_PATHS = ['/fapi/v1/premiumIndex', '/fapi/v1/openInterest', '/fapi/v1/fundingRate', '/fapi/v1/fundingInfo', '/futures/data/openInterestHist'];
const RATIO_PATHS = ['/futures/data/globalLongShortAccountRatio', '/futures/data/topLongShortAccountRatio', '/futures/data/topLongShortPositionRatio', '/futures/data/takerlongshortRatio'];
const BYBIT_PATHS = ['/v5/market/tickers', '/v5/market/funding/history', '/v5/market/open-interest'];

describe('crypto-only routes ask the venue for any well-formed base asset', () => {
  it.each(['PUMP', 'NOPE', 'AAPL'])('/v1/orderbook?symbol=%s on Binance: asked with the USDT quote; the venue\'s -1121 is a 404 naming binance', async (asset) => {
    fakes.binance.route('GET /api/v3/depth', BINANCE_INVALID);
    const res = await get(`/v1/orderbook?symbol=${asset}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: `binance does not list the spot pair ${asset}USDT`, source: 'binance' });
    expect(fakes.binance.calls('/api/v3/depth')[0]!.query.get('symbol')).toBe(`${asset}USDT`);
  });

  it('/v1/orderbook on Coinbase and Kraken: their "unknown" answers are 404s naming them', async () => {
    fakes.coinbase.route('GET /products/NOPE-USD/book', { status: 404, body: recorded('coinbase__error_not_found.json') });
    fakes.kraken.route('GET /0/public/Depth', { body: recorded('kraken__error_unknown_pair.json') });
    const cb = await get('/v1/orderbook?symbol=NOPE&exchange=coinbase');
    expect([cb.statusCode, cb.json().source]).toEqual([404, 'coinbase']);
    const kr = await get('/v1/orderbook?symbol=nope&exchange=kraken');
    expect([kr.statusCode, kr.json().source]).toEqual([404, 'kraken']);
    expect(fakes.kraken.calls('/0/public/Depth')[0]!.query.get('pair')).toBe('NOPEUSD');
  });

  it('/v1/funding-oi?symbol=NOPE: Binance -1121 and Bybit retCode 10001 → 404', async () => {
    for (const path of FUTURES_PATHS) fakes.futures.route(`GET ${path}`, BINANCE_INVALID);
    for (const path of BYBIT_PATHS) fakes.bybit.route(`GET ${path}`, { body: recorded('bybit__error_not_supported_symbols.json') });
    const res = await get('/v1/funding-oi?symbol=NOPE');
    expect(res.statusCode).toBe(404);
    expect(res.json().source).toBe('binance-futures');
    expect(res.json().error).toMatch(/^no venue lists a perpetual 'NOPEUSDT'/);
  });

  it('/v1/basis?symbol=MSFT: asked of Binance as MSFTUSDT, its -1121 → 404', async () => {
    fakes.binance.route('GET /api/v3/ticker/24hr', BINANCE_INVALID);
    fakes.futures.route('GET /fapi/v1/premiumIndex', BINANCE_INVALID);
    const res = await get('/v1/basis?symbol=MSFT');
    expect(res.statusCode).toBe(404);
    expect(res.json().source).toMatch(/^binance/);
    expect(fakes.binance.calls('/api/v3/ticker/24hr')[0]!.query.get('symbol')).toBe('MSFTUSDT');
  });

  it('/v1/long-short-ratio?symbol=SPY: Binance -1121 → 404', async () => {
    for (const path of RATIO_PATHS) fakes.futures.route(`GET ${path}`, BINANCE_INVALID);
    const res = await get('/v1/long-short-ratio?symbol=SPY');
    expect(res.statusCode).toBe(404);
    expect(res.json().source).toBe('binance-futures');
  });

  it('/v1/perpdex?symbol=PUMP: a coin Hyperliquid lists is answered (it is on no shipped list)', async () => {
    fakes.hyperliquid.route('POST /info', { body: recorded('hyperliquid__metaAndAssetCtxs_with_PUMP.json') });
    const res = await get('/v1/perpdex?symbol=pump');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ symbol: 'PUMP', venue_symbol: 'PUMP', currency: 'USD', mark_price: 0.004252 });
  });

  it.each(['NOPE', 'TSLA'])('/v1/perpdex?symbol=%s: a coin Hyperliquid does not list → 404 naming hyperliquid', async (coin) => {
    fakes.hyperliquid.route('POST /info', { body: recorded('hyperliquid__metaAndAssetCtxs_with_PUMP.json') });
    const res = await get(`/v1/perpdex?symbol=${coin}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: `hyperliquid lists no perpetual '${coin}'`, source: 'hyperliquid' });
  });

  it.each(['/v1/orderbook', '/v1/funding-oi', '/v1/basis', '/v1/long-short-ratio', '/v1/perpdex'])(
    '%s?symbol=BRK.B: what cannot be a crypto symbol is a 400 that says crypto only, before any call',
    async (path) => {
      const res = await get(`${path}?symbol=BRK.B`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: "query parameter 'symbol' takes crypto only: a crypto base asset (BTC, PEPE) or a pair (BTCUSDT, BTC-USDT, BTC/USDT); got 'BRK.B'",
      });
      for (const fake of Object.values(fakes)) expect(fake.requests).toHaveLength(0);
    },
  );
});
