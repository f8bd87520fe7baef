// Binance spot market data (no key).
//   GET {base}/api/v3/ticker/24hr?symbol=BTCUSDT      rolling 24 h statistics; closeTime = the venue's time
//   GET {base}/api/v3/klines?symbol=&interval=&limit=  positional arrays, oldest first
//   GET {base}/api/v3/depth?symbol=&limit=             bids/asks [price, qty], best first, no timestamp
//   GET {base}/api/v3/exchangeInfo?symbolStatus=TRADING&showPermissionSets=false
//        {timezone, serverTime, rateLimits, exchangeFilters, symbols: [{symbol, status, baseAsset, quoteAsset, filters, ...}]}
//        weight 20; a few MB (every trading pair with its filters), so it is read rarely (CACHE_TTL_LISTINGS_S) and
//        only the base assets are kept. symbolStatus (TRADING, HALT, BREAK) filters on the pair's trading status;
//        showPermissionSets=false leaves out the permission sets, most of the body otherwise.
// Quirks: numbers are decimal strings, times int ms. An unknown symbol is HTTP 400
// {"code":-1121,"msg":"Invalid symbol."} (our 404). Restricted locations (the US included) get
// HTTP 451 on every endpoint; the WAF answers 403; both are 502s here (price falls back on them).
import { z } from 'zod';
import type { Candle } from '../analytics/candles.ts';
import { env } from '../lib/env.ts';
import { BINANCE_PROTOCOL, query } from './binance-api.ts';
import { defineSource, type Fetched, type SourceContext, type Sourced } from './define-source.ts';
import { TTL_ENV } from './ttls.ts';
import { decimal } from './wire.ts';

export const BINANCE = 'binance';

// Mapped in the schema, so the cache keeps the final object and serves the same one on every hit.
const ticker24hSchema = z
  .object({ symbol: z.string(), lastPrice: decimal, closeTime: z.number().int() })
  .transform((t): BinanceTicker => ({ symbol: t.symbol, lastPrice: t.lastPrice, closeTime: new Date(t.closeTime).toISOString() }));

/** [openTime, open, high, low, close, volume, closeTime, quoteVolume, trades, takerBase, takerQuote, "0"] */
const klineSchema = z.tuple([z.number().int(), decimal, decimal, decimal, decimal, decimal, z.number().int()], z.unknown());

const level = z.tuple([decimal, decimal], z.unknown());
const depthSchema = z.object({ lastUpdateId: z.number(), bids: z.array(level), asks: z.array(level) });

/** Only the base assets are kept (sorted, unique), so the cache holds a short list, not the whole document. */
const exchangeInfoSchema = z
  .object({ symbols: z.array(z.object({ baseAsset: z.string().min(1), status: z.string().optional() }).loose()) })
  .loose()
  .transform((info) => [...new Set(info.symbols.filter((s) => s.status === undefined || s.status === 'TRADING').map((s) => s.baseAsset.toUpperCase()))].sort());

/** Intervals Binance accepts that this API uses. */
export type BinanceInterval = '1m' | '5m' | '15m' | '30m' | '1h' | '4h' | '1d' | '1w';

/** `limit` values /api/v3/depth accepts. */
export const BINANCE_DEPTH_LIMITS = [5, 10, 20, 50, 100, 500, 1000, 5000] as const;

export interface BinanceTicker {
  /** Venue pair, e.g. BTCUSDT. */
  symbol: string;
  lastPrice: number;
  /** ISO time of the venue's statistics (end of its rolling 24 h window). */
  closeTime: string;
}

/** A Binance kline as a candle: volume in the base asset (always given). */
export type BinanceKline = Candle & { volume: number };

export interface BinanceDepth {
  bids: [number, number][];
  asks: [number, number][];
}

export interface BinanceSpotSettings {
  baseUrl: string;
  ttl: { price: number; ohlcv: number; orderbook: number; listings: number };
}

function createBinanceSpot(ctx: SourceContext<BinanceSpotSettings>) {
  const options = ctx.settings;
  /** One GET; the -1121 body becomes a 404 naming the pair, any other error code a 502. */
  const get = <S extends z.ZodType>(path: string, params: Record<string, string | number>, schema: S, ttlS: number) =>
    ctx.fetch({
      url: `${options.baseUrl}${path}?${query(params)}`,
      schema,
      protocol: BINANCE_PROTOCOL,
      notFound: `binance does not list the spot pair ${params.symbol}`,
      ttlS,
    });

  return {
    /** 24 h ticker of one pair: last price and the venue's statistics time. */
    async ticker24h(pair: string): Promise<Sourced<BinanceTicker>> {
      return get('/api/v3/ticker/24hr', { symbol: pair }, ticker24hSchema, options.ttl.price);
    },

    /** The last `limit` (1-1000) candles, oldest first; the newest one may still be open (closed ones are those ended by `sentAt`). */
    async klines(pair: string, interval: BinanceInterval, limit: number): Promise<Fetched<BinanceKline[]>> {
      const res = await get('/api/v3/klines', { symbol: pair, interval, limit }, z.array(klineSchema), options.ttl.ohlcv);
      return {
        data: res.data.map((k) => ({ time: new Date(k[0]).toISOString(), open: k[1], high: k[2], low: k[3], close: k[4], volume: k[5] })),
        meta: res.meta,
        sentAt: res.sentAt,
      };
    },

    /** The book with at least `depth` levels a side (as many as listed): Binance only takes certain limits, so this asks for the smallest allowed one ≥ depth; callers trim. */
    async depth(pair: string, depth: number): Promise<Sourced<BinanceDepth>> {
      const limit = BINANCE_DEPTH_LIMITS.find((l) => l >= depth) ?? BINANCE_DEPTH_LIMITS.at(-1)!;
      const res = await get('/api/v3/depth', { symbol: pair, limit }, depthSchema, options.ttl.orderbook);
      const side = (levels: (readonly unknown[])[]) => levels.map((l) => [l[0], l[1]] as [number, number]);
      return { data: { bids: side(res.data.bids), asks: side(res.data.asks) }, meta: res.meta };
    },

    /** The base assets of every pair trading now (BTC, PEPE, 1000SATS), upper case, sorted. */
    async listedBaseAssets(): Promise<Sourced<string[]>> {
      return ctx.fetch({
        url: `${options.baseUrl}/api/v3/exchangeInfo?${query({ symbolStatus: 'TRADING', showPermissionSets: 'false' })}`,
        schema: exchangeInfoSchema,
        protocol: BINANCE_PROTOCOL,
        ttlS: options.ttl.listings,
      });
    },
  };
}

export type BinanceSpot = ReturnType<typeof createBinanceSpot>;

export const binanceSpotSource = defineSource({
  key: 'binanceSpot',
  name: BINANCE,
  title: 'Binance (spot)',
  docs: 'https://developers.binance.com/docs/binance-spot-api-docs/rest-api',
  notes:
    'No key. Weight limit 6000/min per IP (X-MBX-USED-WEIGHT-1M); 429 then 418 bans. HTTP 451 from the US and other restricted locations. ' +
    'exchangeInfo (weight 20, a few MB) is read once per CACHE_TTL_LISTINGS_S for the crypto listings.',
  env: {
    BINANCE_SPOT_BASE_URL: env.url('https://api.binance.com', 'Binance spot REST API (api.binance.com, or data-api.binance.vision for market data only).'),
    CACHE_TTL_PRICE_S: TTL_ENV.CACHE_TTL_PRICE_S,
    CACHE_TTL_OHLCV_S: TTL_ENV.CACHE_TTL_OHLCV_S,
    CACHE_TTL_ORDERBOOK_S: TTL_ENV.CACHE_TTL_ORDERBOOK_S,
    CACHE_TTL_LISTINGS_S: TTL_ENV.CACHE_TTL_LISTINGS_S,
  },
  settings: (e) => ({
    baseUrl: e.BINANCE_SPOT_BASE_URL,
    ttl: { price: e.CACHE_TTL_PRICE_S, ohlcv: e.CACHE_TTL_OHLCV_S, orderbook: e.CACHE_TTL_ORDERBOOK_S, listings: e.CACHE_TTL_LISTINGS_S },
  }),
  create: createBinanceSpot,
});
