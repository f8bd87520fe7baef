// CoinGecko API v3 (key optional).
//   GET {base}/api/v3/global  →  {data: {active_cryptocurrencies, total_market_cap: {usd, ...}, total_volume: {usd, ...},
//                                 market_cap_percentage: {btc, eth, ... top 10}, market_cap_change_percentage_24h_usd, updated_at}}
//   GET {base}/api/v3/coins/markets?vs_currency=usd&order=market_cap_desc&per_page=250&page=1
//       →  [{id, symbol, name, current_price, market_cap, market_cap_rank, total_volume, price_change_percentage_24h, ...}]
// Quirks: numbers are JSON numbers (large ones may come in exponent form); percentages are percent;
// market_cap_rank and prices can be null for small coins; /global updates every 10 minutes (updated_at,
// unix s), and its per-currency maps may hold null for some currency (only usd, btc and eth are read). Keys: a Demo key is sent as `x-cg-demo-api-key` to api.coingecko.com; a paid (Pro) key only
// works on pro-api.coingecko.com, as `x-cg-pro-api-key` — so the header follows COINGECKO_BASE_URL.
// Errors: HTTP 4xx/429 with {status: {error_code, error_message}} (10010/10011: key and host do not match).
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { secondsTime } from './wire.ts';

export const COINGECKO = 'coingecko';

/** Rows asked of /coins/markets on every call (CoinGecko's maximum per page), so one cached answer serves every `limit`. */
export const MARKETS_PAGE = 250;

const PRO_HOST = 'pro-api.coingecko.com';

/** The header that carries a key for this base URL: Pro keys on the Pro host, Demo keys everywhere else. */
export function coingeckoKeyHeader(baseUrl: string): 'x-cg-pro-api-key' | 'x-cg-demo-api-key' {
  return new URL(baseUrl).hostname === PRO_HOST ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key';
}

/** CoinGecko's error body `{status: {error_code, error_message}}`; 429 is its rate limit. */
export const COINGECKO_PROTOCOL: Protocol = {
  classify(body, status) {
    if (!isRecord(body) || !isRecord(body.status) || body.status.error_code === undefined) return undefined;
    const code = body.status.error_code;
    const detail = `error_code ${String(code)}${typeof body.status.error_message === 'string' ? ` (${body.status.error_message})` : ''}`;
    return code === 429 || status === 429 ? { kind: 'rate_limited', detail } : { kind: 'provider_error', detail };
  },
};

const num = z.number().nullable().optional().transform((v) => v ?? null);

export interface GlobalMarket {
  total_market_cap_usd: number | null;
  total_volume_24h_usd: number | null;
  btc_dominance_pct: number | null;
  eth_dominance_pct: number | null;
  market_cap_change_24h_pct: number | null;
  active_cryptocurrencies: number | null;
  /** CoinGecko's updated_at, ISO. */
  as_of: string;
}

// Only the entries served are validated: /global lists some sixty currencies and the ten largest coins, and a null
// (or anything else) in one this route never serves must not fail the answer. The others are dropped unread.
const usdOnly = z.object({ usd: num });
const btcAndEth = z.object({ btc: num, eth: num });

const globalSchema = z
  .object({
    data: z.object({
      active_cryptocurrencies: z.number().int().nullable().optional(),
      total_market_cap: usdOnly,
      total_volume: usdOnly,
      market_cap_percentage: btcAndEth,
      market_cap_change_percentage_24h_usd: num,
      updated_at: secondsTime,
    }),
  })
  .transform(({ data: g }): GlobalMarket => ({
    total_market_cap_usd: g.total_market_cap.usd,
    total_volume_24h_usd: g.total_volume.usd,
    btc_dominance_pct: g.market_cap_percentage.btc,
    eth_dominance_pct: g.market_cap_percentage.eth,
    market_cap_change_24h_pct: g.market_cap_change_percentage_24h_usd,
    active_cryptocurrencies: g.active_cryptocurrencies ?? null,
    as_of: g.updated_at,
  }));

export interface MarketCoin {
  rank: number | null;
  /** Upper-cased ticker (CoinGecko sends it lower-case). */
  symbol: string;
  name: string;
  /** CoinGecko's coin id (bitcoin). */
  id: string;
  price_usd: number | null;
  market_cap_usd: number | null;
  volume_24h_usd: number | null;
  change_24h_pct: number | null;
}

const marketsSchema = z
  .array(
    z.object({
      id: z.string(),
      symbol: z.string(),
      name: z.string(),
      current_price: num,
      market_cap: num,
      market_cap_rank: z.number().int().nullable().optional(),
      total_volume: num,
      price_change_percentage_24h: num,
    }),
  )
  .transform((rows) =>
    rows.map(
      (c): MarketCoin => ({
        rank: c.market_cap_rank ?? null,
        symbol: c.symbol.toUpperCase(),
        name: c.name,
        id: c.id,
        price_usd: c.current_price,
        market_cap_usd: c.market_cap,
        volume_24h_usd: c.total_volume,
        change_24h_pct: c.price_change_percentage_24h,
      }),
    ),
  );

export interface CoinGeckoSettings {
  baseUrl: string;
  apiKey: string | undefined;
  ttlS: number;
}

function createCoinGecko(ctx: SourceContext<CoinGeckoSettings>) {
  const { baseUrl, apiKey, ttlS } = ctx.settings;
  const headers: Record<string, string> = apiKey ? { [coingeckoKeyHeader(baseUrl)]: apiKey } : {};
  return {
    /** Whole-market figures (/global). */
    async global(): Promise<Sourced<GlobalMarket>> {
      return ctx.fetch({ url: `${baseUrl}/api/v3/global`, headers, schema: globalSchema, protocol: COINGECKO_PROTOCOL, ttlS });
    },

    /** The MARKETS_PAGE largest coins by market cap, in CoinGecko's order (market_cap_desc). */
    async topCoins(): Promise<Sourced<MarketCoin[]>> {
      const query = new URLSearchParams({ vs_currency: 'usd', order: 'market_cap_desc', per_page: String(MARKETS_PAGE), page: '1' });
      return ctx.fetch({ url: `${baseUrl}/api/v3/coins/markets?${query}`, headers, schema: marketsSchema, protocol: COINGECKO_PROTOCOL, ttlS });
    },
  };
}

export type CoinGecko = ReturnType<typeof createCoinGecko>;

export const coingeckoSource = defineSource({
  key: 'coingecko',
  name: COINGECKO,
  title: 'CoinGecko API v3',
  docs: 'https://docs.coingecko.com/reference/introduction',
  notes:
    'Keyless works with a shared, IP-based limit; a free Demo key (x-cg-demo-api-key, about 30-100 calls/min) raises it. ' +
    'A paid key needs COINGECKO_BASE_URL=https://pro-api.coingecko.com (sent as x-cg-pro-api-key). 429 when limited.',
  env: {
    COINGECKO_BASE_URL: env.url('https://api.coingecko.com', 'CoinGecko API; https://pro-api.coingecko.com for a paid key.'),
    COINGECKO_API_KEY: env.secret('Optional CoinGecko key: a Demo key on api.coingecko.com, a Pro key on pro-api.coingecko.com.'),
    CACHE_TTL_MARKET_OVERVIEW_S: env.ttl(60, 'CoinGecko global figures and top coins'),
  },
  settings: (e) => ({ baseUrl: e.COINGECKO_BASE_URL, apiKey: e.COINGECKO_API_KEY, ttlS: e.CACHE_TTL_MARKET_OVERVIEW_S }),
  create: createCoinGecko,
});
