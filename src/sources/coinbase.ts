// Coinbase Exchange public market data (no key).
//   GET {base}/products/{product_id}/ticker        last trade: {ask, bid, volume, trade_id, price, size, time}
//   GET {base}/products/{product_id}/book?level=2  aggregated book: levels [price, size, num_orders]
// Quirks: numbers are decimal strings; `time` is an ISO string with microseconds (the book has it only
// in newer responses). An unknown product is HTTP 404 {"message":"NotFound"} (our 404).
import { z } from 'zod';
import { env } from '../env.ts';
import { isRecord, type Protocol } from '../http/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
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
  ttl: { price: number; orderbook: number };
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
  };
}

export type Coinbase = ReturnType<typeof createCoinbase>;

export const coinbaseSource = defineSource({
  key: 'coinbase',
  name: COINBASE,
  title: 'Coinbase Exchange',
  docs: 'https://docs.cdp.coinbase.com/exchange/reference/exchangerestapi_getproductticker',
  notes: 'No key. Public endpoints allow 10 requests/s per IP (bursts of 15); USD markets (BTC-USD).',
  env: {
    COINBASE_BASE_URL: env.url('https://api.exchange.coinbase.com', 'Coinbase Exchange REST API.'),
    CACHE_TTL_PRICE_S: TTL_ENV.CACHE_TTL_PRICE_S,
    CACHE_TTL_ORDERBOOK_S: TTL_ENV.CACHE_TTL_ORDERBOOK_S,
  },
  settings: (e) => ({ baseUrl: e.COINBASE_BASE_URL, ttl: { price: e.CACHE_TTL_PRICE_S, orderbook: e.CACHE_TTL_ORDERBOOK_S } }),
  create: createCoinbase,
});
