// Every provider of the source list as a fake upstream on 127.0.0.1 serving its recorded payloads,
// so that every route's example works end to end. Used by the route-schema test and the bench.
import { newYorkDate } from '../../src/lib/new-york-time.ts';
import { SOURCES, urlVariables } from '../../src/sources/index.ts';
import { recorded, recordedText } from '../fixtures.ts';
import { coinbaseCandlesHandler, constructedCoinbaseRow, klinesHandler } from './candles.ts';
import { FakeUpstream, type FakeHandler, type FakeReply } from './fake-upstream.ts';
import { recordedJsonRpc } from './recorded-rpc.ts';
import { recordedSolanaRpc } from './solana-rpc.ts';

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
    // The analytics need hundreds of candles: the constructed series in Binance's format, re-stamped onto the requested interval.
    'GET /api/v3/klines': klinesHandler(),
    'GET /api/v3/depth': { body: recorded('binance__spot_depth.json') },
  },
  coinbase: {
    'GET /products/BTC-USD/ticker': { body: recorded('coinbase__ticker.json') },
    'GET /products/BTC-USD/book': { body: recorded('coinbase__product_book_level2.json') },
    'GET /products/BTC-USD/candles': coinbaseCandlesHandler(constructedCoinbaseRow),
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
  'rpc:ethereum': { 'POST /': recordedJsonRpc },
  'rpc:base': { 'POST /': recordedJsonRpc },
  'rpc:arbitrum': { 'POST /': recordedJsonRpc },
  'rpc:optimism': { 'POST /': recordedJsonRpc },
  'rpc:polygon': { 'POST /': recordedJsonRpc },
  'rpc:bsc': { 'POST /': recordedJsonRpc },
  'rpc:avalanche': { 'POST /': recordedJsonRpc },
  'rpc:fantom': { 'POST /': recordedJsonRpc },
  'rpc:zksync': { 'POST /': recordedJsonRpc },
  'rpc:linea': { 'POST /': recordedJsonRpc },
  'rpc:scroll': { 'POST /': recordedJsonRpc },
  'rpc:solana': { 'POST /': recordedSolanaRpc },
  kalshi: {
    // Open events (the category walk and the Fed-decision series alike): the recorded October 2026 Fed event.
    'GET /events': { body: recorded('kalshi_events_KXFEDDECISION_open_nested.TRIMMED.json') },
    'GET /markets/KXELONMARS-99': { body: recorded('kalshi__market.json') },
    'GET /markets/KXELONMARS-99/orderbook': { body: recorded('kalshi__orderbook.json') },
    'GET /markets/trades': { body: recorded('kalshi__trades.json') },
  },
  // /v1/rates reads the file of the current New York year (and the year before when it is short).
  treasury: {
    [`GET ${treasuryCsvPath(Number(newYorkDate(Date.now()).slice(0, 4)))}`]: { body: recordedText('treasury__daily_par_yield_curve_2026.TRIMMED.csv') },
    [`GET ${treasuryCsvPath(Number(newYorkDate(Date.now()).slice(0, 4)) - 1)}`]: { body: recordedText('treasury__daily_par_yield_curve_2025_blank_cell.TRIMMED.csv') },
  },
  nasdaq: { 'GET /api/calendar/earnings': { body: recorded('nasdaq__calendar_earnings.json') } },
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
};

function treasuryCsvPath(year: number): string {
  return `/resource-center/data-chart-center/interest-rates/daily-treasury-rates.csv/${year}/all`;
}

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
