// Cache lifetimes per kind of data, shared by the sources that serve that kind (Binance, Coinbase and
// Yahoo all serve last prices, so one CACHE_TTL_PRICE_S governs all three). A descriptor lists the
// ones it uses; the composed config declares each once.
import { env } from '../lib/env.ts';

export const TTL_ENV = {
  CACHE_TTL_PRICE_S: env.ttl(5, 'last prices'),
  CACHE_TTL_OHLCV_S: env.ttl(30, 'candles'),
  CACHE_TTL_ORDERBOOK_S: env.ttl(2, 'order books'),
  CACHE_TTL_DERIVATIVES_S: env.ttl(30, 'funding, open interest and long/short figures'),
  CACHE_TTL_PERPDEX_S: env.ttl(10, 'Hyperliquid perpetual contexts'),
  CACHE_TTL_LISTINGS_S: env.ttl(
    21600,
    "venue listings (the base assets Binance spot, Coinbase Exchange and Hyperliquid list: whether a symbol without asset_class is crypto)",
  ),
} as const;

/**
 * For data that changes once per funding interval (settled funding, funding intervals): the
 * derivatives TTL, but at least 300 s (0 still disables caching), which also keeps within Binance's
 * 500 calls per 5 minutes per IP on fundingRate/fundingInfo.
 */
export const slowTtl = (ttlS: number) => (ttlS === 0 ? 0 : Math.max(ttlS, 300));
