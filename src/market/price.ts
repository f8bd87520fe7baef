// Price and OHLCV: crypto from Binance spot (price falls back to Coinbase Exchange when Binance is
// unreachable, geo-blocked or failing), equities and ETFs from Yahoo Finance's chart API.
import { z } from 'zod';
import { defineRoute, type RouteDef } from '../catalog/route.ts';
import { envelope, type SourceMeta } from '../http/envelope.ts';
import { BadRequestError, UpstreamError } from '../http/errors.ts';
import { BINANCE, type BinanceInterval } from '../sources/binance-spot.ts';
import { COINBASE } from '../sources/coinbase.ts';
import type { YahooInterval } from '../sources/yahoo.ts';
import type { Sources } from '../sources/index.ts';
import type { MarketContext } from './routes.ts';
import { assetClassParam, binancePair, coinbaseProduct, parseSymbol, symbolParam, type CryptoSymbol, type EquitySymbol } from './symbols.ts';

const TAG = 'Exchange data';

export const TIMEFRAMES = ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'] as const;
export type Timeframe = (typeof TIMEFRAMES)[number];

/** Equities: Yahoo has no 4-hour bars, and 4 h buckets of a 6.5 h session would not be real 4 h bars. */
export const EQUITY_TIMEFRAMES = TIMEFRAMES.filter((t) => t !== '4h');

const YAHOO_INTERVAL: Record<Exclude<Timeframe, '4h'>, YahooInterval> = {
  '1m': '1m',
  '5m': '5m',
  '15m': '15m',
  '30m': '30m',
  '1h': '60m',
  '1d': '1d',
  '1w': '1wk',
};

/** Bars in one regular US session (09:30-16:00 ET, 6.5 h). */
const BARS_PER_SESSION: Record<Exclude<YahooInterval, '1wk'>, number> = { '1m': 390, '5m': 78, '15m': 26, '30m': 13, '60m': 7, '1d': 1 };

/** How far back Yahoo serves each interval, calendar days (1m ≤ 7 d, other intraday ≤ 60 d, 1 h ≤ 730 d). */
const YAHOO_MAX_DAYS: Record<YahooInterval, number> = { '1m': 7, '5m': 60, '15m': 60, '30m': 60, '60m': 730, '1d': Infinity, '1wk': Infinity };

/** Yahoo ranges, each with the fewest calendar days it covers. */
const YAHOO_RANGES: [string, number][] = [
  ['5d', 5], ['7d', 7], ['1mo', 28], ['60d', 60], ['3mo', 89], ['6mo', 181], ['1y', 365], ['730d', 730], ['5y', 1826], ['10y', 3652], ['max', Infinity],
];

/**
 * The Yahoo range to ask for so that `limit` bars of `interval` are (usually) covered: sessions needed,
 * spread over calendar days (5 sessions a week) plus 4 days for holidays, capped by Yahoo's limit per
 * interval. Where the cap binds (30m: 60 days ≈ 41 sessions ≈ 530 bars) fewer bars come back.
 */
export function yahooRange(interval: YahooInterval, limit: number): string {
  const days = interval === '1wk' ? limit * 7 + 7 : Math.ceil((Math.ceil(limit / BARS_PER_SESSION[interval]) * 7) / 5) + 4;
  const allowed = YAHOO_RANGES.filter(([, d]) => d <= YAHOO_MAX_DAYS[interval]);
  return (allowed.find(([, d]) => d >= days) ?? allowed.at(-1)!)[0];
}

const TIMEFRAME_LIST = TIMEFRAMES.join(', ');
const EQUITY_TIMEFRAME_LIST = EQUITY_TIMEFRAMES.join(', ');

const priceQuery = z.object({ symbol: symbolParam, asset_class: assetClassParam });

const LIMIT_MESSAGE = 'must be a whole number from 1 to 1000';
const ohlcvQuery = z.object({
  symbol: symbolParam,
  timeframe: z
    .enum(TIMEFRAMES, { error: () => `must be one of ${TIMEFRAME_LIST}` })
    .default('1h')
    .describe(
      `Candle length: ${TIMEFRAME_LIST}. Equities support ${EQUITY_TIMEFRAME_LIST} (Yahoo has no 4h bars; 4h for an equity is a 400). ` +
        'Yahoo serves 1m for the last 7 days, other intraday timeframes for the last 60 days (30m: about 530 bars at most), 1h for 730 days.',
    ),
  limit: z.coerce
    .number({ error: () => LIMIT_MESSAGE })
    .int(LIMIT_MESSAGE)
    .min(1, LIMIT_MESSAGE)
    .max(1000, LIMIT_MESSAGE)
    .default(100)
    .describe('Number of candles, 1-1000 (the most recent ones; the newest may still be open).'),
  asset_class: assetClassParam,
});

const iso = (what: string) => z.string().describe(`${what}, ISO-8601 UTC`);

const priceData = z.object({
  symbol: z.string().describe('What was priced: BASE/QUOTE for crypto (BTC/USDT), the ticker for equities (AAPL)'),
  asset_class: z.enum(['crypto', 'equity']),
  price: z.number().nullable().describe('Last traded price in `currency`; null when the provider gave none'),
  currency: z.string().nullable().describe('Quote currency actually used: USDT on Binance (BTCUSDT), USD on Coinbase (BTC-USD), the listing currency on Yahoo'),
  as_of: iso("The venue's time of this price (Binance: 24 h ticker closeTime; Coinbase: last trade time; Yahoo: regularMarketTime)").nullable(),
});

const candle = z.object({
  time: iso('Candle open time'),
  open: z.number(),
  high: z.number(),
  low: z.number(),
  close: z.number(),
  volume: z.number().nullable().describe('In the base asset (crypto) or shares (equities); null when not given'),
});

const ohlcvData = z.object({
  symbol: z.string().describe('BASE/QUOTE for crypto, the ticker for equities'),
  asset_class: z.enum(['crypto', 'equity']),
  timeframe: z.enum(TIMEFRAMES),
  currency: z.string().nullable().describe('Currency of the prices'),
  candles: z.array(candle).describe('Oldest first'),
});

interface Priced {
  data: z.output<typeof priceData>;
  sources: SourceMeta[];
  extra?: Record<string, unknown>;
}

/** Binance first; on any provider failure (not on "unknown symbol") Coinbase Exchange, in USD by default. */
async function cryptoPrice(sources: Sources, sym: CryptoSymbol): Promise<Priced> {
  // Binance lists no USD-quoted pairs: an explicit BTC-USD goes to Coinbase Exchange directly.
  if (sym.explicitQuote && sym.quote === 'USD') return coinbasePrice(sources, sym);
  const pair = binancePair(sym);
  try {
    const t = await sources.binanceSpot.ticker24h(pair);
    return {
      data: { symbol: `${sym.base}/${sym.quote}`, asset_class: 'crypto', price: t.data.lastPrice, currency: sym.quote, as_of: t.data.closeTime },
      sources: [t.meta],
    };
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err; // a 404 is an answer: no fallback
    try {
      return { ...(await coinbasePrice(sources, sym)), extra: { fallback: { from: BINANCE, to: COINBASE, reason: err.message } } };
    } catch (fallbackErr) {
      if (!(fallbackErr instanceof UpstreamError)) throw fallbackErr;
      throw new UpstreamError(BINANCE, err.failure, `${err.message}; fallback ${fallbackErr.message}`, { cause: fallbackErr });
    }
  }
}

async function coinbasePrice(sources: Sources, sym: CryptoSymbol): Promise<Priced> {
  const product = coinbaseProduct(sym);
  const [base, quote] = product.split('-') as [string, string];
  const c = await sources.coinbase.ticker(product);
  return {
    data: { symbol: `${base}/${quote}`, asset_class: 'crypto', price: c.data.price, currency: quote, as_of: c.data.time },
    sources: [c.meta],
  };
}

async function equityPrice(sources: Sources, sym: EquitySymbol): Promise<Priced> {
  const q = await sources.yahoo.quote(sym.ticker);
  return {
    data: { symbol: sym.display, asset_class: 'equity', price: q.data.regularMarketPrice, currency: q.data.currency, as_of: q.data.regularMarketTime },
    sources: [q.meta],
  };
}

export function priceRoutes(ctx: MarketContext): RouteDef[] {
  const price = defineRoute({
    path: '/v1/price',
    summary: 'Last price of a crypto pair or a US equity/ETF',
    description:
      'Crypto: last trade on Binance spot (BTC → BTCUSDT); when Binance is unreachable, geo-blocked (HTTP 451/403) or failing, ' +
      'the last trade on Coinbase Exchange (BTC → BTC-USD) with meta.fallback saying why. A symbol Binance does not list is a 404 (no fallback). ' +
      'An explicit USD pair (BTC-USD) is priced on Coinbase Exchange directly, since Binance lists no USD pairs. ' +
      'Equities/ETFs: Yahoo Finance regularMarketPrice. as_of is the venue\'s own time.',
    tag: TAG,
    query: priceQuery,
    data: priceData,
    example: { symbol: 'BTC' },
    handler: async (req) => {
      const sym = parseSymbol(req.query.symbol, req.query.asset_class);
      const got = sym.assetClass === 'crypto' ? await cryptoPrice(ctx.sources, sym) : await equityPrice(ctx.sources, sym);
      return envelope(got.data, got.sources, got.extra);
    },
  });

  const ohlcv = defineRoute({
    path: '/v1/ohlcv',
    summary: 'Candles (OHLCV) of a crypto pair or a US equity/ETF',
    description:
      'The most recent `limit` candles, oldest first. Crypto: Binance spot klines (volume in the base asset). ' +
      `Equities/ETFs: Yahoo Finance chart bars (timeframes ${EQUITY_TIMEFRAME_LIST}; bars with a missing open/high/low/close are dropped, never filled). ` +
      'The newest candle may still be open.',
    tag: TAG,
    query: ohlcvQuery,
    data: ohlcvData,
    example: { symbol: 'ETH', timeframe: '1h', limit: '24' },
    handler: async (req) => {
      const { timeframe, limit } = req.query;
      const sym = parseSymbol(req.query.symbol, req.query.asset_class);

      if (sym.assetClass === 'crypto') {
        const k = await ctx.sources.binanceSpot.klines(binancePair(sym), timeframe as BinanceInterval, limit);
        const candles = k.data.map((c) => ({ time: c.openTime, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume }));
        return envelope({ symbol: `${sym.base}/${sym.quote}`, asset_class: 'crypto' as const, timeframe, currency: sym.quote, candles }, [k.meta]);
      }

      if (timeframe === '4h') {
        throw new BadRequestError(`query parameter 'timeframe' must be one of ${EQUITY_TIMEFRAME_LIST} for equities (Yahoo has no 4h bars)`);
      }
      const interval = YAHOO_INTERVAL[timeframe];
      const chart = await ctx.sources.yahoo.bars(sym.ticker, interval, yahooRange(interval, limit));
      const candles = chart.data.bars.slice(-limit);
      return envelope({ symbol: sym.display, asset_class: 'equity' as const, timeframe, currency: chart.data.currency, candles }, [chart.meta]);
    },
  });

  return [price, ohlcv] as RouteDef[];
}
