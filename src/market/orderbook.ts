// Order book of a crypto pair on Binance spot, Coinbase Exchange or Kraken, trimmed to `depth` levels
// a side, with top-of-book and depth statistics computed by one pure function (summariseBook).
import { z } from 'zod';
import { defineRoute, type RouteDef } from '../catalog/route.ts';
import { envelope, type SourceMeta } from '../http/envelope.ts';
import { krakenPair } from '../sources/kraken.ts';
import type { Sources } from '../sources/index.ts';
import type { MarketContext } from './routes.ts';
import { binancePair, coinbaseProduct, cryptoSymbolParam, parseCryptoSymbol, type CryptoSymbol } from './symbols.ts';

export const EXCHANGES = ['binance', 'coinbase', 'kraken'] as const;
export type Exchange = (typeof EXCHANGES)[number];

/** Quote currencies whose amounts are reported as USD (stablecoins taken at face value). */
export const USD_QUOTES = new Set(['USD', 'USDT', 'USDC', 'FDUSD', 'BUSD', 'TUSD']);

export type Level = [price: number, size: number];

export interface BookSummary {
  bids: Level[];
  asks: Level[];
  best_bid: number | null;
  best_ask: number | null;
  mid: number | null;
  spread: number | null;
  spread_bps: number | null;
  bid_depth_quote: number;
  ask_depth_quote: number;
  imbalance: number | null;
}

/**
 * Sorts each side best first (bids high→low, asks low→high), keeps `depth` levels, and computes:
 *   mid = (best_bid + best_ask) / 2          spread = best_ask − best_bid
 *   spread_bps = spread / mid × 10 000       side depth = Σ price × size over the returned levels (quote currency)
 *   imbalance = (bid_depth − ask_depth) / (bid_depth + ask_depth), from −1 (all asks) to 1 (all bids)
 * An empty side makes best/mid/spread null (its depth is 0); an empty book makes imbalance null.
 * Float noise is removed by rounding to the inputs' own decimals (spread: the prices' decimals, mid: one
 * more, depth: price decimals + size decimals); spread_bps is rounded to 4 decimals, imbalance to 6.
 */
export function summariseBook(bids: Level[], asks: Level[], depth: number): BookSummary {
  const b = [...bids].sort((x, y) => y[0] - x[0]).slice(0, depth);
  const a = [...asks].sort((x, y) => x[0] - y[0]).slice(0, depth);
  const bestBid = b[0]?.[0] ?? null;
  const bestAsk = a[0]?.[0] ?? null;
  let mid: number | null = null;
  let spread: number | null = null;
  let spreadBps: number | null = null;
  if (bestBid !== null && bestAsk !== null) {
    const dp = Math.max(decimals(bestBid), decimals(bestAsk));
    mid = round((bestBid + bestAsk) / 2, dp + 1);
    spread = round(bestAsk - bestBid, dp);
    spreadBps = mid === 0 ? null : round((spread / mid) * 1e4, 4);
  }
  const bidDepth = sideDepth(b);
  const askDepth = sideDepth(a);
  const total = bidDepth + askDepth;
  return {
    bids: b,
    asks: a,
    best_bid: bestBid,
    best_ask: bestAsk,
    mid,
    spread,
    spread_bps: spreadBps,
    bid_depth_quote: bidDepth,
    ask_depth_quote: askDepth,
    imbalance: total === 0 ? null : round((bidDepth - askDepth) / total, 6),
  };
}

function sideDepth(levels: Level[]): number {
  if (levels.length === 0) return 0;
  const dp = Math.max(...levels.map(([p]) => decimals(p))) + Math.max(...levels.map(([, s]) => decimals(s)));
  return round(levels.reduce((sum, [p, s]) => sum + p * s, 0), dp);
}

/** Decimal places of a finite number as JavaScript prints it (1e-7 → 7, 0.125 → 3). */
function decimals(n: number): number {
  const [mantissa = '', exp] = String(n).split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exp ?? 0));
}

const round = (n: number, dp: number) => Number(n.toFixed(Math.min(dp, 20)));

const DEPTH_MESSAGE = 'must be a whole number from 1 to 500';
const orderbookQuery = z.object({
  symbol: cryptoSymbolParam,
  exchange: z
    .enum(EXCHANGES, { error: () => `must be one of ${EXCHANGES.join(', ')}` })
    .default('binance')
    .describe(
      'Venue: binance (BTC → BTCUSDT), coinbase (BTC → BTC-USD) or kraken (BTC → XBTUSD). ' +
        'A base asset alone is quoted in USDT on Binance and in USD on Coinbase and Kraken; a pair keeps its quote.',
    ),
  depth: z.coerce
    .number({ error: () => DEPTH_MESSAGE })
    .int(DEPTH_MESSAGE)
    .min(1, DEPTH_MESSAGE)
    .max(500, DEPTH_MESSAGE)
    .default(20)
    .describe('Levels per side, 1-500 (fewer when the venue lists fewer).'),
});

const level = z.tuple([z.number().describe('price'), z.number().describe('size (base asset)')]);
const orderbookData = z.object({
  symbol: z.string().describe('BASE/QUOTE of the book'),
  exchange: z.enum(EXCHANGES),
  venue_symbol: z.string().describe("The venue's own name of the market (BTCUSDT, BTC-USD, XXBTZUSD)"),
  quote_currency: z.string(),
  bids: z.array(level).describe('Best (highest) first'),
  asks: z.array(level).describe('Best (lowest) first'),
  best_bid: z.number().nullable(),
  best_ask: z.number().nullable(),
  mid: z.number().nullable().describe('(best_bid + best_ask) / 2'),
  spread: z.number().nullable().describe('best_ask − best_bid'),
  spread_bps: z.number().nullable().describe('spread / mid × 10 000'),
  bid_depth_quote: z.number().describe('Σ price × size over the returned bids, in quote_currency'),
  ask_depth_quote: z.number().describe('Σ price × size over the returned asks, in quote_currency'),
  bid_depth_usd: z.number().nullable().describe('bid_depth_quote when the quote is USD or a USD stablecoin (at face value); otherwise null'),
  ask_depth_usd: z.number().nullable().describe('ask_depth_quote when the quote is USD or a USD stablecoin (at face value); otherwise null'),
  imbalance: z.number().nullable().describe('(bid_depth − ask_depth) / (bid_depth + ask_depth), −1 to 1'),
  as_of: z
    .string()
    .nullable()
    .describe("The venue's time of the book, ISO-8601 UTC: Coinbase `time`, Kraken's latest level timestamp; null for Binance (its depth has no time)"),
});

interface VenueBook {
  venueSymbol: string;
  quote: string;
  bids: Level[];
  asks: Level[];
  asOf: string | null;
  meta: SourceMeta;
}

async function fetchBook(sources: Sources, exchange: Exchange, sym: CryptoSymbol, depth: number): Promise<VenueBook> {
  switch (exchange) {
    case 'binance': {
      const pair = binancePair(sym);
      const r = await sources.binanceSpot.depth(pair, depth);
      return { venueSymbol: pair, quote: sym.quote, bids: r.data.bids, asks: r.data.asks, asOf: null, meta: r.meta };
    }
    case 'coinbase': {
      const product = coinbaseProduct(sym);
      const r = await sources.coinbase.book(product);
      return { venueSymbol: product, quote: product.split('-')[1]!, bids: r.data.bids, asks: r.data.asks, asOf: r.data.time, meta: r.meta };
    }
    case 'kraken': {
      const r = await sources.kraken.depth(krakenPair(sym), depth);
      const quote = !sym.explicitQuote && sym.quote === 'USDT' ? 'USD' : sym.quote;
      return { venueSymbol: r.data.pairName, quote, bids: r.data.bids, asks: r.data.asks, asOf: r.data.time, meta: r.meta };
    }
  }
}

export function orderbookRoutes(ctx: MarketContext): RouteDef[] {
  const orderbook = defineRoute({
    path: '/v1/orderbook',
    summary: 'Order book of a crypto pair with spread, depth and imbalance',
    description:
      'The venue\'s book trimmed to `depth` levels a side, with best bid/ask, mid, spread (absolute and in basis points), ' +
      'the quote-currency value on each side (Σ price × size), and imbalance = (bid − ask) / (bid + ask). ' +
      'Depth values are also given in USD when the quote is USD or a USD stablecoin.',
    tag: 'Exchange data',
    query: orderbookQuery,
    data: orderbookData,
    example: { symbol: 'BTC', exchange: 'kraken', depth: '10' },
    handler: async (req) => {
      const { exchange, depth } = req.query;
      const sym = parseCryptoSymbol(req.query.symbol);
      const book = await fetchBook(ctx.sources, exchange, sym, depth);
      const s = summariseBook(book.bids, book.asks, depth);
      const usd = USD_QUOTES.has(book.quote);
      return envelope(
        {
          symbol: `${sym.base}/${book.quote}`,
          exchange,
          venue_symbol: book.venueSymbol,
          quote_currency: book.quote,
          ...s,
          bid_depth_usd: usd ? s.bid_depth_quote : null,
          ask_depth_usd: usd ? s.ask_depth_quote : null,
          as_of: book.asOf,
        },
        [book.meta],
      );
    },
  });
  return [orderbook] as RouteDef[];
}
