// Coinbase Exchange public market data (no key).
//   GET {base}/products/{product_id}/ticker        last trade: {ask, bid, volume, trade_id, price, size, time}
//   GET {base}/products/{product_id}/book?level=2  aggregated book: levels [price, size, num_orders]
// Quirks: numbers are decimal strings; `time` is an ISO string with microseconds (the book has it only
// in newer responses). An unknown product is HTTP 404 {"message":"NotFound"} (our 404).
import { z } from 'zod';
import { NotFoundError } from '../http/errors.ts';
import { fetchSource, type SourceDeps, type Sourced } from '../http/fetch-source.ts';
import { decimal } from './wire.ts';

export const COINBASE = 'coinbase';

const isoTime = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'expected an ISO-8601 time')
  .transform((v) => new Date(v).toISOString());

/** Coinbase's error body, e.g. {"message":"NotFound"}. */
const errorBody = z.object({ message: z.string() });

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

export interface CoinbaseOptions {
  baseUrl: string;
  ttl: { price: number; orderbook: number };
}

export function createCoinbase(deps: SourceDeps, options: CoinbaseOptions) {
  async function get<S extends z.ZodType>(product: string, path: string, schema: S, ttlS: number) {
    const res = await fetchSource(deps, {
      source: COINBASE,
      url: `${options.baseUrl}/products/${encodeURIComponent(product)}${path}`,
      schema: z.union([schema, errorBody]),
      acceptStatus: [404],
      providerError: (b) => (isError(b) && b.message !== 'NotFound' ? b.message : undefined),
      ttlS,
    });
    if (isError(res.data)) throw new NotFoundError(`coinbase does not list the product ${product}`, COINBASE);
    return res as Sourced<z.output<S>>;
  }

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

function isError(body: unknown): body is z.output<typeof errorBody> {
  return typeof body === 'object' && body !== null && 'message' in body && !('price' in body) && !('bids' in body);
}

export type Coinbase = ReturnType<typeof createCoinbase>;
