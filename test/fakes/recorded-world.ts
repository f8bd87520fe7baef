// Every provider of the source list as a fake upstream on 127.0.0.1 serving its recorded payloads,
// so that every route's example works end to end. Used by the route-schema test and the bench.
import { SOURCES, urlVariables } from '../../src/sources/index.ts';
import { recorded } from '../fixtures.ts';
import { FakeUpstream, type FakeHandler, type FakeReply } from './fake-upstream.ts';
import { feeHistoryWithMedianColumn } from './fee-history.ts';

/** The recorded answer of each provider, by `METHOD path`, for the requests the route examples make. */
export const RECORDED_ROUTES: Record<string, Record<string, FakeReply | FakeHandler>> = {
  goplus: {
    // GoPlus keys its result by the address asked for; the recorded token is served under whatever address.
    'GET /api/v1/token_security/8453': (req) => {
      const sample = recorded('goplus__token_security_evm.json');
      const [only] = Object.values(sample.result);
      return { body: { ...sample, result: { [String(req.query.get('contract_addresses')).toLowerCase()]: only } } };
    },
    'GET /api/v1/solana/token_security': { body: recorded('goplus__solana_token_security.json') },
  },
  binance: {
    'GET /api/v3/ticker/24hr': { body: recorded('binance__spot_ticker_24hr.json') },
    'GET /api/v3/klines': { body: recorded('binance__spot_klines.json') },
    'GET /api/v3/depth': { body: recorded('binance__spot_depth.json') },
  },
  coinbase: {
    'GET /products/BTC-USD/ticker': { body: recorded('coinbase__ticker.json') },
    'GET /products/BTC-USD/book': { body: recorded('coinbase__product_book_level2.json') },
  },
  kraken: { 'GET /0/public/Depth': { body: recorded('kraken__public_depth.json') } },
  yahoo: { 'GET /v8/finance/chart/AAPL': { body: recorded('yahoo__chart_AAPL_1d.json') } },
  'binance-futures': {
    'GET /fapi/v1/premiumIndex': { body: recorded('binance__futures_premiumIndex.json') },
    'GET /fapi/v1/fundingInfo': { body: [] },
    'GET /fapi/v1/openInterest': { body: recorded('binance__futures_openInterest.json') },
    'GET /fapi/v1/fundingRate': { body: recorded('binance-futures__fundingRate_BTCUSDT_7d.json') },
    'GET /futures/data/openInterestHist': { body: recorded('binance-futures__openInterestHist_BTCUSDT_1h.json') },
    'GET /futures/data/globalLongShortAccountRatio': { body: recorded('binance__futures_globalLongShortAccountRatio.json') },
    'GET /futures/data/topLongShortAccountRatio': { body: recorded('binance__futures_topLongShortAccountRatio.json') },
    'GET /futures/data/topLongShortPositionRatio': { body: recorded('binance__futures_topLongShortPositionRatio.json') },
    'GET /futures/data/takerlongshortRatio': { body: recorded('binance__futures_takerlongshortRatio.json') },
  },
  bybit: {
    'GET /v5/market/tickers': { body: recorded('bybit__market_tickers_linear.json') },
    'GET /v5/market/funding/history': { body: recorded('bybit__funding_history_BTCUSDT_7d.json') },
    'GET /v5/market/open-interest': { body: recorded('bybit__open_interest_BTCUSDT_1h.json') },
  },
  hyperliquid: { 'POST /info': { body: recorded('hyperliquid__metaAndAssetCtxs_live_shape.json') } },
  deribit: {
    'GET /api/v2/public/get_volatility_index_data': { body: recorded('deribit__get_volatility_index_data.json') },
    'GET /api/v2/public/get_historical_volatility': { body: recorded('deribit__get_historical_volatility.json') },
  },
  defillama: {
    'GET /v2/chains': { body: recorded('defillama__v2_chains.json') },
    'GET /stablecoins': { body: recorded('defillama__stablecoins.json') },
    'GET /pools': { body: recorded('defillama__yields_pools.json') },
  },
  'alternative.me': { 'GET /fng/': { body: recorded('alternativeme__fng.json') } },
  coingecko: {
    'GET /api/v3/global': { body: recorded('coingecko__global.json') },
    'GET /api/v3/coins/markets': { body: recorded('coingecko__coins_markets.json') },
  },
  etherscan: { 'GET /v2/api': { body: recorded('etherscan__gasoracle.json') } },
  // /v1/gas without ETHERSCAN_API_KEY: eth_feeHistory (see fee-history.ts for its constructed median column).
  'rpc:ethereum': {
    'POST /': (req) =>
      JSON.parse(req.body).method === 'eth_feeHistory'
        ? { body: feeHistoryWithMedianColumn() }
        : { body: { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'the recorded world has no answer for this method' } } },
  },
};

export interface RecordedWorld {
  /** One fake per provider, by provider name. */
  fakes: Record<string, FakeUpstream>;
  /** Every source's *_BASE_URL variables pointed at its fake. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startRecordedWorld(): Promise<RecordedWorld> {
  const fakes: Record<string, FakeUpstream> = {};
  const env: Record<string, string> = {};
  for (const s of SOURCES) {
    const fake = await new FakeUpstream().start();
    for (const [key, reply] of Object.entries(RECORDED_ROUTES[s.name] ?? {})) fake.route(key, reply);
    fakes[s.name] = fake;
    for (const name of urlVariables(s)) env[name] = fake.url;
  }
  return { fakes, env, stop: async () => void (await Promise.all(Object.values(fakes).map((f) => f.stop()))) };
}
