// Whether a symbol without asset_class is crypto comes from the venues' own listings (Binance spot
// exchangeInfo, Coinbase Exchange products, Hyperliquid's coins), fetched through the guard and kept for
// hours, with the shipped list as the floor and as the fallback while they are not loaded.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CryptoListings, listedNames, type ListingVenue } from '../../src/sources/crypto-listings.ts';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

const venue = (name: string, load: () => Promise<string[]>, ttlMs = 3_600_000): ListingVenue => ({ venue: name, ttlMs, load });
const never = () => new Promise<string[]>(() => {});

describe('CryptoListings (the decision and its timing)', () => {
  it('uses the shipped list alone until a listing is loaded, then the union', async () => {
    const listings = new CryptoListings([venue('a', async () => ['PUMP']), venue('b', async () => ['ZORA'])]);
    expect([listings.isCrypto('BTC'), listings.isCrypto('PUMP')]).toEqual([true, false]);
    const isCrypto = await listings.predicate();
    expect(['BTC', 'PUMP', 'ZORA', 'AAPL'].map(isCrypto)).toEqual([true, true, true, false]);
    expect(listings.state()).toEqual([
      { venue: 'a', assets: 1, loaded_at: expect.any(String), error: null },
      { venue: 'b', assets: 1, loaded_at: expect.any(String), error: null },
    ]);
  });

  it('the first requests wait for the load at most firstWaitMs, then go on with the shipped list; once it has settled nothing waits', async () => {
    let loaded!: (names: string[]) => void;
    const listings = new CryptoListings([venue('slow', () => new Promise((r) => (loaded = r)))], { firstWaitMs: 50 });
    const started = Date.now();
    const isCrypto = await listings.predicate();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(Date.now() - started).toBeLessThan(500);
    expect([isCrypto('BTC'), isCrypto('PUMP')]).toEqual([true, false]);
    loaded(['PUMP']);
    await new Promise((r) => setTimeout(r, 0));
    // Settled: later requests take the listing without waiting, and a venue that hangs later never holds them.
    const again = Date.now();
    expect((await listings.predicate())('PUMP')).toBe(true);
    expect(Date.now() - again).toBeLessThan(20);
  });

  it('requests arriving while the first load is in flight wait for it too, so concurrent first requests agree', async () => {
    const listings = new CryptoListings([venue('v', () => new Promise((r) => setTimeout(() => r(['PUMP']), 30)))]);
    const [a, b] = await Promise.all([listings.predicate(), new Promise((r) => setTimeout(r, 5)).then(() => listings.predicate())]);
    expect([a('PUMP'), b('PUMP')]).toEqual([true, true]);
  });

  it('a failed venue is asked again only after retryMs; a loaded listing is refreshed after its TTL, in the background', async () => {
    let now = 1_000_000;
    let calls = 0;
    let answer: () => Promise<string[]> = async () => {
      throw new Error('binance answered HTTP 451');
    };
    const listings = new CryptoListings([venue('v', () => (calls++, answer()), 10_000)], { retryMs: 1_000, now: () => now });
    await listings.predicate();
    expect(calls).toBe(1);
    expect(listings.state()[0]).toMatchObject({ assets: 0, error: 'binance answered HTTP 451' });

    now += 999;
    await listings.predicate();
    expect(calls).toBe(1); // within retryMs: not asked again

    now += 1;
    answer = async () => ['PUMP'];
    await listings.predicate(); // starts the retry in the background; not awaited after the first attempt
    await new Promise((r) => setTimeout(r, 0));
    expect(calls).toBe(2);
    expect(listings.isCrypto('PUMP')).toBe(true);

    // Past the TTL a refresh starts; while it is in flight (or if it fails) the listing in hand is used.
    now += 10_000;
    answer = never;
    const isCrypto = await listings.predicate();
    expect(calls).toBe(3);
    expect(isCrypto('PUMP')).toBe(true);
  });

  it('a failure keeps the listing loaded before (stale beats none)', async () => {
    let now = 0;
    let fail = false;
    const listings = new CryptoListings([venue('v', async () => (fail ? Promise.reject(new Error('down')) : ['PUMP']), 10)], { retryMs: 0, now: () => now });
    await listings.predicate();
    fail = true;
    now = 100;
    await listings.predicate();
    await new Promise((r) => setTimeout(r, 0));
    expect(listings.state()[0]).toMatchObject({ assets: 1, error: 'down' });
    expect(listings.isCrypto('PUMP')).toBe(true);
  });

  it('reads Hyperliquid\'s thousand-unit names (kPEPE) as both KPEPE and PEPE', () => {
    expect(listedNames('kPEPE')).toEqual(['KPEPE', 'PEPE']);
    expect(listedNames('BTC')).toEqual(['BTC']);
    expect(listedNames('kaito')).toEqual(['KAITO']);
  });
});

describe('the listings through the app (fake venues)', () => {
  const binance = new FakeUpstream();
  const coinbase = new FakeUpstream();
  const hyperliquid = new FakeUpstream();
  const yahoo = new FakeUpstream();
  let t: TestApp | undefined;

  beforeAll(async () => {
    await Promise.all([binance, coinbase, hyperliquid, yahoo].map((f) => f.start()));
  });
  afterEach(async () => {
    await t?.app.close();
    t = undefined;
    for (const f of [binance, coinbase, hyperliquid, yahoo]) f.reset();
  });
  afterAll(async () => {
    await Promise.all([binance, coinbase, hyperliquid, yahoo].map((f) => f.stop()));
  });

  /** A fresh app (the listings are held per app), every listing venue answering its recorded-format listing. */
  async function app(listings: 'served' | 'down' = 'served') {
    if (listings === 'served') {
      binance.route('GET /api/v3/exchangeInfo', { body: recorded('constructed__binance_exchangeInfo.json') });
      coinbase.route('GET /products', { body: recorded('constructed__coinbase_products.json') });
      hyperliquid.route('POST /info', { body: recorded('hyperliquid__metaAndAssetCtxs_live_shape.json') });
    } else {
      binance.route('GET /api/v3/exchangeInfo', { status: 451, body: recorded('binance__error_451_restricted_location.json') });
      coinbase.route('GET /products', { status: 500, body: { message: 'Internal server error' } });
      hyperliquid.route('POST /info', { status: 500, body: 'null' });
    }
    binance.route('GET /api/v3/ticker/24hr', { body: recorded('binance__spot_ticker_24hr.json') });
    yahoo.otherwise({ body: recorded('yahoo__chart_AAPL_1d.json') });
    t = await makeApp({
      ...TEST_KEY_ENV,
      BINANCE_SPOT_BASE_URL: binance.url,
      COINBASE_BASE_URL: coinbase.url,
      HYPERLIQUID_BASE_URL: hyperliquid.url,
      YAHOO_BASE_URL: yahoo.url,
    });
    return t;
  }
  const get = (url: string) => t!.app.inject({ url, headers: TEST_KEY });

  it('asks each venue for its listing as documented and keeps the base assets it lists', async () => {
    await app();
    const res = await get('/v1/price?symbol=AAPL');
    expect(res.json().data.asset_class).toBe('equity');
    const [info] = binance.calls('/api/v3/exchangeInfo');
    expect(Object.fromEntries(info!.query)).toEqual({ symbolStatus: 'TRADING', showPermissionSets: 'false' });
    expect(coinbase.calls('/products')).toHaveLength(1);
    expect(JSON.parse(hyperliquid.calls('/info')[0]!.body)).toEqual({ type: 'metaAndAssetCtxs' });
  });

  it.each([
    // Binance lists PUMP (PUMPUSDT): crypto, priced on Binance.
    ['PUMP', 'crypto', 'PUMP/USDT'],
    // Coinbase alone lists ZORA.
    ['zora', 'crypto', 'ZORA/USDT'],
    // Hyperliquid's kPEPE counts PEPE (on the shipped list anyway) and KPEPE.
    ['KPEPE', 'crypto', 'KPEPE/USDT'],
    // A base asset listed on no venue is an equity ticker.
    ['AAPL', 'equity', 'AAPL'],
    // Only pairs trading now count (OLDCOIN is BREAK on Binance); delisted products do not (GONE on Coinbase); nor delisted perpetuals (FTT).
    ['OLDCOIN', 'equity', null],
    ['GONE', 'equity', 'GONE'],
    ['FTT', 'equity', 'FTT'],
  ])('/v1/price?symbol=%s without asset_class reads as %s', async (symbol, assetClass, answered) => {
    await app();
    const res = await get(`/v1/price?symbol=${symbol}`);
    if (answered === null) {
      // OLDCOIN is 7 letters: not an equity ticker either → 400 naming the rule and the way out.
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe(
        "query parameter 'symbol' must be a US equity/ETF ticker such as AAPL, SPY or BRK.B; got 'OLDCOIN' (no crypto venue lists it either; add asset_class=crypto to ask the crypto venues for it)",
      );
      return;
    }
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ asset_class: assetClass, symbol: answered });
    if (assetClass === 'crypto') expect(binance.calls('/api/v3/ticker/24hr')[0]!.query.get('symbol')).toBe(`${symbol.toUpperCase()}USDT`);
  });

  it('a ticker the venues list as crypto (F: SynFutures on Binance, Ford on NYSE) is crypto by default; asset_class=equity asks for the equity', async () => {
    await app();
    expect((await get('/v1/price?symbol=F')).json().data).toMatchObject({ asset_class: 'crypto', symbol: 'F/USDT', venue_symbol: 'FUSDT' });
    expect((await get('/v1/price?symbol=F&asset_class=equity')).json().data).toMatchObject({ asset_class: 'equity', symbol: 'F', venue_symbol: 'F' });
    expect(yahoo.calls('/v8/finance/chart/F')).toHaveLength(1);
  });

  it('XYZUSD splits into XYZ/USD when XYZ is listed (PUMPUSD on Coinbase asks for PUMP-USD)', async () => {
    await app();
    coinbase.route('GET /products/PUMP-USD/book', { body: recorded('coinbase__product_book_level2.json') });
    const res = await get('/v1/orderbook?symbol=PUMPUSD&exchange=coinbase');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ symbol: 'PUMP/USD', venue_symbol: 'PUMP-USD', currency: 'USD' });
  });

  it('loads each listing once and reuses it for later requests', async () => {
    await app();
    for (const s of ['AAPL', 'PUMP', 'MSFT', 'ZORA']) expect((await get(`/v1/price?symbol=${s}`)).statusCode).toBe(200);
    expect(binance.calls('/api/v3/exchangeInfo')).toHaveLength(1);
    expect(coinbase.calls('/products')).toHaveLength(1);
    expect(hyperliquid.calls('/info')).toHaveLength(1);
  });

  it('a symbol the shipped list settles (BTC, a pair) never waits for or asks for the listings', async () => {
    await app();
    expect((await get('/v1/price?symbol=BTC')).json().data.asset_class).toBe('crypto');
    expect((await get('/v1/price?symbol=ETHUSDT')).json().data.asset_class).toBe('crypto');
    expect(binance.calls('/api/v3/exchangeInfo')).toHaveLength(0);
    expect(coinbase.calls('/products')).toHaveLength(0);
  });

  it('every venue failing: the shipped list decides (PUMP an equity ticker, BTC crypto), and the answer does not wait for them', async () => {
    await app('down');
    const started = Date.now();
    const pump = await get('/v1/price?symbol=PUMP');
    expect(Date.now() - started).toBeLessThan(1500);
    expect(pump.json().data).toMatchObject({ asset_class: 'equity', symbol: 'PUMP' });
    expect((await get('/v1/price?symbol=BTC')).json().data.asset_class).toBe('crypto');
    // Failed listings are not asked again on every request (a minute later at the earliest).
    await get('/v1/price?symbol=MSFT');
    expect(binance.calls('/api/v3/exchangeInfo')).toHaveLength(1);
  });
});
