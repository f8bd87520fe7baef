// Stale-while-revalidate, per route. A route whose data may be served a little old names one of these
// settings in its declaration (`maxStale` in defineRoute): an upstream answer past its cache TTL by at most
// that many seconds is then answered at once, saying its real age (meta.sources: cached true, age_s), and is
// refreshed in the background by one load, across instances too (src/upstream/cache.ts). Past it, the
// request waits for the upstream as any cache miss does. A route that names none never serves an answer past
// its TTL: the on-chain routes (balances, nonces, transactions, blocks, ENS, gas) and token risk name none,
// nor does /v1/basis, whose two legs must be fetched within the last-price TTL of each other (a stale leg
// refreshed apart from the other would break that).
// Each route's value is published as max_stale_s in /v1/status and as x-max-stale-s in OpenAPI.
import { env } from '../lib/env.ts';

const staleness = (def: number, what: string) =>
  env.int(
    0,
    86_400,
    def,
    `Seconds past its cache TTL an answer of ${what} may still be served at once, with its real age, while it is refreshed in the background (0 = never: wait for the upstream).`,
  );

export const STALE_ENV = {
  PRICE_STALE_S: staleness(10, '/v1/price'),
  ORDERBOOK_STALE_S: staleness(2, '/v1/orderbook'),
  CANDLES_STALE_S: staleness(30, '/v1/ohlcv and the candle analytics (/v1/atr, /v1/fvg, /v1/liquidity-levels, /v1/momentum-score)'),
  DERIVATIVES_STALE_S: staleness(30, 'the derivatives routes (/v1/funding-oi, /v1/long-short-ratio, /v1/perpdex, /v1/volatility)'),
  PREDICTION_MARKETS_STALE_S: staleness(30, 'the prediction-market routes (/v1/predmkt-probability, /v1/predmkt-market, /v1/macro-calendar)'),
  MARKET_CONTEXT_STALE_S: staleness(300, 'the slow market context (/v1/sentiment, /v1/defi-tvl, /v1/market-overview, /v1/rates, /v1/earnings-calendar)'),
} as const;

/** The name of a staleness setting, as a route declares it. */
export type StaleSetting = keyof typeof STALE_ENV;

/** Each setting's value in seconds, as config.ts parsed it. */
export type StaleSettings = Record<StaleSetting, number>;
