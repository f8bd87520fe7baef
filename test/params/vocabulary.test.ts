// One vocabulary across routes, as a new user meets it: enumerated parameters take any case and the
// handler gets the listed value (OpenAPI still lists it); every candle route defaults to the same
// timeframe and says which it used; momentum-score takes pairs like every other symbol parameter; the
// quote field is `currency` everywhere; `venue_symbol` comes with every answer read from a venue's market.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { klinesHandler } from '../fakes/candles.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApps } from '../helpers.ts';

const KLINES = '/api/v3/klines';

const t = useFakeUpstreamApps(
  ['binance', 'coinbase', 'kraken', 'coingecko', 'defillama', 'futures', 'bybit'] as const,
  (u) => ({
    ...TEST_KEY_ENV,
    FREE_RATE_LIMIT: '100000',
    BINANCE_SPOT_BASE_URL: u.binance,
    COINBASE_BASE_URL: u.coinbase,
    KRAKEN_BASE_URL: u.kraken,
    COINGECKO_BASE_URL: u.coingecko,
    DEFILLAMA_BASE_URL: u.defillama,
    BINANCE_FUTURES_BASE_URL: u.futures,
    BYBIT_BASE_URL: u.bybit,
  }),
  { headers: TEST_KEY },
);
const { fakes, get } = t;

afterEach(() => vi.useRealTimers());
const freeze = () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2025-03-10T10:30:00Z'));
};

describe('enumerated parameters take any case', () => {
  it('exchange=KRAKEN reads as kraken', async () => {
    fakes.kraken.route('GET /0/public/Depth', { body: recorded('kraken__public_depth.json') });
    const res = await get('/v1/orderbook?symbol=BTC&exchange=KRAKEN&depth=5');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.exchange).toBe('kraken');
  });

  it('view=TOP (market-overview) and view=Chains (defi-tvl) read as top and chains', async () => {
    fakes.coingecko.route('GET /api/v3/coins/markets', { body: recorded('coingecko__coins_markets.json') });
    const top = await get('/v1/market-overview?view=TOP&limit=1');
    expect(top.statusCode).toBe(200);
    expect(top.json().data.view).toBe('top');
    fakes.defillama.route('GET /v2/chains', { body: recorded('defillama__v2_chains.json') });
    const chains = await get('/v1/defi-tvl?view=Chains&limit=2');
    expect(chains.statusCode).toBe(200);
    expect(chains.json().data.view).toBe('chains');
  });

  it('type=FOMC (macro-calendar) reads as fomc', async () => {
    const res = await get('/v1/macro-calendar?type=FOMC&days=400');
    expect(res.statusCode).toBe(200);
    const types = new Set(res.json().data.events.map((e: { type: string }) => e.type));
    expect([...types]).toEqual(['fomc']);
  });

  it('a value outside the list is still a 400 listing the values as written', async () => {
    const res = await get('/v1/orderbook?symbol=BTC&exchange=okx');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "query parameter 'exchange' must be one of binance, coinbase, kraken" });
  });

  it('OpenAPI lists the values as written, with their defaults', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const param = (path: string, name: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name).schema;
    expect(param('/v1/volatility', 'currency')).toMatchObject({ type: 'string', enum: ['BTC', 'ETH'] });
    expect(param('/v1/orderbook', 'exchange')).toMatchObject({ type: 'string', enum: ['binance', 'coinbase', 'kraken'], default: 'binance' });
    expect(param('/v1/ohlcv', 'asset_class')).toMatchObject({ type: 'string', enum: ['crypto', 'equity'] });
    expect(param('/v1/macro-calendar', 'type')).toMatchObject({ type: 'string', enum: ['fomc', 'cpi', 'jobs'] });
  });
});

describe('candle routes: one default timeframe, stated in every answer', () => {
  it.each(['/v1/ohlcv?symbol=BTC', '/v1/atr?symbol=BTC', '/v1/fvg?symbol=BTC', '/v1/liquidity-levels?symbol=BTC', '/v1/momentum-score?symbol=BTC'])(
    '%s without timeframe uses 1h and says so',
    async (url) => {
      freeze();
      fakes.binance.route(`GET ${KLINES}`, klinesHandler());
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      expect(fakes.binance.calls(KLINES)[0]!.query.get('interval')).toBe('1h');
      expect(res.json().data).toMatchObject({ timeframe: '1h', venue_symbol: 'BTCUSDT', currency: 'USDT' });
    },
  );

  it('documents the same default for each in OpenAPI', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    for (const path of ['/v1/ohlcv', '/v1/atr', '/v1/fvg', '/v1/liquidity-levels', '/v1/momentum-score']) {
      const tf = doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'timeframe');
      expect(tf.schema.default, path).toBe('1h');
    }
  });
});

describe('momentum-score takes pairs like every other symbol parameter', () => {
  it('BTCUSDT is Binance\'s BTCUSDT', async () => {
    freeze();
    fakes.binance.route(`GET ${KLINES}`, klinesHandler());
    const res = await get('/v1/momentum-score?symbol=btcusdt');
    expect(res.statusCode).toBe(200);
    expect(fakes.binance.calls(KLINES)[0]!.query.get('symbol')).toBe('BTCUSDT');
    expect(res.json().data).toMatchObject({ symbol: 'BTC/USDT', venue_symbol: 'BTCUSDT', currency: 'USDT' });
  });

  it('ETH-USD is Coinbase Exchange\'s ETH-USD, asked directly', async () => {
    const rows = (n: number, start: number, g: number) => Array.from({ length: n }, (_, i) => [start - i * g, 99, 101, 100, 100 + (i % 3), 1]);
    fakes.coinbase.route('GET /products/ETH-USD/candles', (req) => {
      const g = Number(req.query.get('granularity'));
      const end = Date.parse(req.query.get('end')!) / 1000 - g;
      const start = Date.parse(req.query.get('start')!) / 1000;
      return { body: rows(Math.floor((end - start) / g) + 1, end, g) };
    });
    const res = await get('/v1/momentum-score?symbol=ETH-USD');
    expect(res.statusCode).toBe(200);
    expect(fakes.binance.calls(KLINES)).toHaveLength(0);
    expect(res.json().data).toMatchObject({ symbol: 'ETH/USD', venue_symbol: 'ETH-USD', currency: 'USD', timeframe: '1h' });
  });
});

describe('the quote field is `currency`; venue_symbol comes with every venue market', () => {
  it('orderbook: currency (quote_currency kept as its older name)', async () => {
    fakes.binance.route('GET /api/v3/depth', { body: recorded('binance__spot_depth.json') });
    const { data } = (await get('/v1/orderbook?symbol=ETHBTC')).json();
    expect(data).toMatchObject({ symbol: 'ETH/BTC', venue_symbol: 'ETHBTC', currency: 'BTC', quote_currency: 'BTC' });
  });

  it('funding-oi: currency beside venue_symbol', async () => {
    for (const p of ['/fapi/v1/premiumIndex', '/fapi/v1/openInterest', '/fapi/v1/fundingRate', '/fapi/v1/fundingInfo', '/futures/data/openInterestHist']) {
      fakes.futures.route(`GET ${p}`, { status: 400, body: recorded('binance__error_invalid_symbol.json') });
    }
    fakes.bybit.route('GET /v5/market/tickers', { body: recorded('bybit__market_tickers_linear.json') });
    fakes.bybit.route('GET /v5/market/funding/history', { body: recorded('bybit__market_funding_history.json') });
    fakes.bybit.route('GET /v5/market/open-interest', { body: recorded('bybit__market_open_interest.json') });
    const res = await get('/v1/funding-oi?symbol=BTC');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ symbol: 'BTC/USDT', venue_symbol: 'BTCUSDT', currency: 'USDT' });
  });
});
