// /v1/orderbook: the book of a crypto pair on Binance spot, Coinbase Exchange or Kraken, trimmed to
// `depth` levels a side, with top-of-book and depth statistics (src/analytics/orderbook.ts).
import { z } from 'zod';
import { summariseBook, type Level } from '../../analytics/orderbook.ts';
import type { RouteContext } from '../../catalog/route.ts';
import { boundedInt, oneOf } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, type SourceMeta } from '../../upstream/envelope.ts';
import { krakenPair } from '../../sources/kraken.ts';
import { binancePair, coinbaseProduct, cryptoSymbolParam, USD_QUOTES, type CryptoSymbol } from '../../params/symbols.ts';
import { resolveCryptoSymbol } from '../resolve-symbol.ts';

export const EXCHANGES = ['binance', 'coinbase', 'kraken'] as const;
export type Exchange = (typeof EXCHANGES)[number];

const query = z.object({
  symbol: cryptoSymbolParam,
  exchange: oneOf(
    EXCHANGES,
    'binance',
    'Venue, any case: binance (BTC → BTCUSDT), coinbase (BTC → BTC-USD) or kraken (BTC → XBTUSD). ' +
      'A base asset alone is quoted in USDT on Binance and in USD on Coinbase and Kraken; a pair keeps its quote.',
  ),
  depth: boundedInt(1, 500, 20, 'Levels per side, 1-500 (fewer when the venue lists fewer).'),
});

const level = z.tuple([z.number().describe('price'), z.number().describe('size (base asset)')]);
const data = z.object({
  symbol: z.string().describe('BASE/QUOTE of the book'),
  exchange: z.enum(EXCHANGES),
  venue_symbol: z.string().describe("The venue's own name of the market (BTCUSDT, BTC-USD, XXBTZUSD)"),
  currency: z.string().describe('Quote currency of the book: prices and the *_depth_quote values are in it'),
  quote_currency: z.string().describe('Same as currency; the older name, kept for existing clients'),
  bids: z.array(level).describe('Best (highest) first'),
  asks: z.array(level).describe('Best (lowest) first'),
  best_bid: z.number().nullable(),
  best_ask: z.number().nullable(),
  mid: z.number().nullable().describe('(best_bid + best_ask) / 2'),
  spread: z.number().nullable().describe('best_ask − best_bid'),
  spread_bps: z.number().nullable().describe('spread / mid × 10 000'),
  bid_depth_quote: z.number().describe('Σ price × size over the returned bids, in currency'),
  ask_depth_quote: z.number().describe('Σ price × size over the returned asks, in currency'),
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

async function fetchBook({ sources }: RouteContext, exchange: Exchange, sym: CryptoSymbol, depth: number): Promise<VenueBook> {
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

export const orderbook = defineRoute({
  path: '/v1/orderbook',
  summary: 'Order book of a crypto pair with spread, depth and imbalance',
  description:
    "The venue's book trimmed to `depth` levels a side, with best bid/ask, mid, spread (absolute and in basis points), " +
    'the quote-currency value on each side (Σ price × size), and imbalance = (bid − ask) / (bid + ask). ' +
    'Depth values are also given in USD when the quote is USD or a USD stablecoin.',
  tag: 'Exchange data',
  access: 'paid',
  maxStale: 'ORDERBOOK_STALE_S',
  query,
  data,
  example: { symbol: 'BTC', exchange: 'kraken', depth: '10' },
  handler: async (req, ctx) => {
    const { exchange, depth } = req.query;
    const sym = await resolveCryptoSymbol(ctx.cryptoListings, req.query.symbol);
    const book = await fetchBook(ctx, exchange, sym, depth);
    const s = summariseBook(book.bids, book.asks, depth);
    const usd = USD_QUOTES.has(book.quote);
    return envelope(
      {
        symbol: `${sym.base}/${book.quote}`,
        exchange,
        venue_symbol: book.venueSymbol,
        currency: book.quote,
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
