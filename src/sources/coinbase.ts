// Coinbase Exchange public market data (no key).
//   GET {base}/products/{product_id}/ticker        last trade: {ask, bid, volume, trade_id, price, size, time}
//   GET {base}/products/{product_id}/book?level=2  aggregated book: levels [price, size, num_orders]
//   GET {base}/products/{product_id}/candles?granularity=&start=&end=
//        rows [time (unix s, bucket start), low, high, open, close, volume]: mind the column order
//        (low before high, open after them) and the direction (NEWEST FIRST). granularity is one of
//        60, 300, 900, 3600, 21600, 86400 s; at most 300 candles per request (a wider start..end is
//        rejected), so longer ranges are paged. No row is published for a bucket without trades, and
//        a row before `start` may come back (both documented).
//   GET {base}/products                             every product: [{id, base_currency, quote_currency, status, trading_disabled, ...}];
//        status is online, offline, internal or delisted (Coinbase Exchange reference: Get all known trading pairs)
// Quirks: numbers are decimal strings (candles: JSON numbers); `time` is an ISO string with microseconds
// (the book has it only in newer responses). An unknown product is HTTP 404 {"message":"NotFound"} (our 404).
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { mergeSourceMetas } from '../upstream/envelope.ts';
import { defineSource, type Fetched, type SourceContext, type Sourced } from './define-source.ts';
import { TTL_ENV } from './ttls.ts';
import { decimal } from './wire.ts';

export const COINBASE = 'coinbase';

const isoTime = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'expected an ISO-8601 time')
  .transform((v) => new Date(v).toISOString());

/**
 * Coinbase's error body is `{"message": ...}`: "NotFound" (HTTP 404) is an unknown product; a rate
 * limit is HTTP 429 with "Public rate limit exceeded"; any other message is the provider's error.
 */
export const COINBASE_PROTOCOL: Protocol = {
  classify(body, status) {
    if (!isRecord(body) || typeof body.message !== 'string' || status < 400) return undefined;
    if (body.message === 'NotFound') return { kind: 'not_found', detail: body.message };
    if (status === 429 || /rate limit/i.test(body.message)) return { kind: 'rate_limited', detail: body.message };
    return { kind: 'provider_error', detail: body.message };
  },
};

const tickerSchema = z.object({ price: decimal, time: isoTime });

const level = z.tuple([decimal, decimal], z.unknown());
const bookSchema = z.object({ bids: z.array(level), asks: z.array(level), time: isoTime.optional() });

/** Candle widths Coinbase Exchange serves, seconds (any other value is rejected by the venue). */
export const COINBASE_GRANULARITIES = [60, 300, 900, 3600, 21600, 86400] as const;
export type CoinbaseGranularity = (typeof COINBASE_GRANULARITIES)[number];

/**
 * Buckets per page. The venue serves at most 300 candles per request; each page asks for
 * start = its oldest bucket and end = one bucket past its newest (so the newest bucket is inside
 * whether `end` is inclusive or not): 299 + 1 = 300 buckets.
 */
export const COINBASE_PAGE_BUCKETS = 299;

/** Requests one candle call may make (public limit: 10 requests/s per IP, bursts of 15): 2,990 buckets at most. */
export const COINBASE_MAX_PAGES = 10;

/** Mapped in the schema (oldest first, named fields), so the cache keeps the final rows. */
const candlesSchema = z
  .array(z.tuple([z.number().int(), decimal, decimal, decimal, decimal, decimal], z.unknown()))
  .transform((rows) =>
    rows
      .map((r): CoinbaseCandle => ({ time: r[0] * 1000, open: r[3], high: r[2], low: r[1], close: r[4], volume: r[5] }))
      .sort((a, b) => a.time - b.time),
  );

/** Only the base currencies of products not delisted are kept (sorted, unique). */
const productsSchema = z
  .array(z.object({ id: z.string(), base_currency: z.string().min(1), quote_currency: z.string(), status: z.string().optional() }).loose())
  .transform((products) => [...new Set(products.filter((p) => p.status !== 'delisted').map((p) => p.base_currency.toUpperCase()))].sort());

export interface CoinbaseCandle {
  /** Bucket start, epoch ms. */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** In the base asset. */
  volume: number;
}

export interface CoinbaseTicker {
  price: number;
  /** Time of the last trade, as the venue gives it. */
  time: string;
}

export interface CoinbaseBook {
  bids: [number, number][];
  asks: [number, number][];
  /** The book's time when the venue gives one; null otherwise. */
  time: string | null;
}

export interface CoinbaseSettings {
  baseUrl: string;
  ttl: { price: number; orderbook: number; ohlcv: number; listings: number };
}

function createCoinbase(ctx: SourceContext<CoinbaseSettings>) {
  const options = ctx.settings;
  const get = <S extends z.ZodType>(product: string, path: string, schema: S, ttlS: number) =>
    ctx.fetch({
      url: `${options.baseUrl}/products/${encodeURIComponent(product)}${path}`,
      schema,
      protocol: COINBASE_PROTOCOL,
      notFound: `coinbase does not list the product ${product}`,
      ttlS,
    });

  return {
    /** Last trade of a product such as BTC-USD. */
    async ticker(product: string): Promise<Sourced<CoinbaseTicker>> {
      return get(product, '/ticker', tickerSchema, options.ttl.price);
    },

    /** The aggregated (level 2) book, as listed; callers trim. */
    async book(product: string): Promise<Sourced<CoinbaseBook>> {
      const res = await get(product, '/book?level=2', bookSchema, options.ttl.orderbook);
      const side = (levels: (readonly unknown[])[]) => levels.map((l) => [l[0], l[1]] as [number, number]);
      return { data: { bids: side(res.data.bids), asks: side(res.data.asks), time: res.data.time ?? null }, meta: res.meta };
    },

    /**
     * The `count` most recent buckets of `granularity` seconds up to the one forming at `now`
     * (which may still be open), oldest first, paged 299 buckets per request (at most
     * COINBASE_MAX_PAGES requests, in parallel: older buckets beyond them are not asked for). A bucket
     * the venue published no candle for is absent, never filled; rows outside the asked buckets
     * (the venue may send some before `start`) are left out. `sentAt` is the earliest page's.
     */
    async candles(product: string, granularity: CoinbaseGranularity, count: number, now = Date.now()): Promise<Fetched<CoinbaseCandle[]>> {
      const width = granularity * 1000;
      const newest = Math.floor(now / width) * width;
      const oldest = newest - (Math.max(1, count) - 1) * width;
      const pages: { first: number; last: number }[] = [];
      for (let last = newest; last >= oldest && pages.length < COINBASE_MAX_PAGES; last -= COINBASE_PAGE_BUCKETS * width) {
        pages.push({ first: Math.max(oldest, last - (COINBASE_PAGE_BUCKETS - 1) * width), last });
      }
      const iso = (ms: number) => new Date(ms).toISOString();
      const answers = await Promise.all(
        pages.map((p) => get(product, `/candles?granularity=${granularity}&start=${iso(p.first)}&end=${iso(p.last + width)}`, candlesSchema, options.ttl.ohlcv)),
      );
      const byTime = new Map<number, CoinbaseCandle>();
      answers.forEach((a, i) => {
        const { first, last } = pages[i]!;
        for (const c of a.data) if (c.time >= first && c.time <= last) byTime.set(c.time, c);
      });
      return {
        data: [...byTime.values()].sort((a, b) => a.time - b.time),
        meta: mergeSourceMetas(answers.map((a) => a.meta))[0]!,
        sentAt: Math.min(...answers.map((a) => a.sentAt)),
      };
    },

    /** The base currencies of every product not delisted (BTC, PEPE), upper case, sorted. */
    async listedBaseAssets(): Promise<Sourced<string[]>> {
      return ctx.fetch({ url: `${options.baseUrl}/products`, schema: productsSchema, protocol: COINBASE_PROTOCOL, ttlS: options.ttl.listings });
    },
  };
}

export type Coinbase = ReturnType<typeof createCoinbase>;

export const coinbaseSource = defineSource({
  key: 'coinbase',
  name: COINBASE,
  title: 'Coinbase Exchange',
  docs: 'https://docs.cdp.coinbase.com/exchange/reference/exchangerestapi_getproductticker',
  notes:
    'No key. Public endpoints allow 10 requests/s per IP (bursts of 15); USD markets (BTC-USD). Candles: 300 per request, newest first, ' +
    'granularity 1m/5m/15m/1h/6h/1d only; no candle for a bucket without trades.',
  env: {
    COINBASE_BASE_URL: env.url('https://api.exchange.coinbase.com', 'Coinbase Exchange REST API.'),
    CACHE_TTL_PRICE_S: TTL_ENV.CACHE_TTL_PRICE_S,
    CACHE_TTL_ORDERBOOK_S: TTL_ENV.CACHE_TTL_ORDERBOOK_S,
    CACHE_TTL_OHLCV_S: TTL_ENV.CACHE_TTL_OHLCV_S,
    CACHE_TTL_LISTINGS_S: TTL_ENV.CACHE_TTL_LISTINGS_S,
  },
  settings: (e) => ({
    baseUrl: e.COINBASE_BASE_URL,
    ttl: { price: e.CACHE_TTL_PRICE_S, orderbook: e.CACHE_TTL_ORDERBOOK_S, ohlcv: e.CACHE_TTL_OHLCV_S, listings: e.CACHE_TTL_LISTINGS_S },
  }),
  create: createCoinbase,
});
