// Candle loading shared by /v1/ohlcv and the analytics endpoints: crypto from Binance spot klines,
// hedged with Coinbase Exchange candles (Binance answers HTTP 451 from US addresses), US equities and
// ETFs from Yahoo Finance chart bars. One shape out, oldest first; the newest candle may still be
// open (the analytics endpoints drop it).
import { aggregateCandles, bucketStart, type Candle } from '../analytics/candles.ts';
import type { RouteContext } from '../catalog/route.ts';
import { BadRequestError } from '../lib/errors.ts';
import type { SourceMeta } from '../upstream/envelope.ts';
import { hedge } from '../upstream/hedge.ts';
import { BINANCE, type BinanceInterval } from '../sources/binance-spot.ts';
import { COINBASE, type CoinbaseCandle, type CoinbaseGranularity } from '../sources/coinbase.ts';
import type { YahooInterval } from '../sources/yahoo.ts';
import { binancePair, coinbaseProduct, type CryptoSymbol, type MarketSymbol } from '../params/symbols.ts';

export const TIMEFRAMES = ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'] as const;
export type Timeframe = (typeof TIMEFRAMES)[number];

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Length of each timeframe (a week is 7 days; Binance's weeks open on Monday 00:00 UTC). */
export const TIMEFRAME_MS: Record<Timeframe, number> = {
  '1m': MINUTE_MS,
  '5m': 5 * MINUTE_MS,
  '15m': 15 * MINUTE_MS,
  '30m': 30 * MINUTE_MS,
  '1h': HOUR_MS,
  '4h': 4 * HOUR_MS,
  '1d': DAY_MS,
  '1w': 7 * DAY_MS,
};

/**
 * How the Coinbase fallback serves each timeframe: a granularity of its own, or buckets built from a
 * shorter one (30m from 2 × 15m, 4h from 4 × 1h aligned to 00:00/04:00/... UTC, 1w from 7 × 1d
 * starting Monday 00:00 UTC as Binance's weeks do; 1970-01-01 was a Thursday, hence 4 days of offset).
 */
const COINBASE_PLAN: Record<Timeframe, { granularity: CoinbaseGranularity; offsetMs: number }> = {
  '1m': { granularity: 60, offsetMs: 0 },
  '5m': { granularity: 300, offsetMs: 0 },
  '15m': { granularity: 900, offsetMs: 0 },
  '30m': { granularity: 900, offsetMs: 0 },
  '1h': { granularity: 3600, offsetMs: 0 },
  '4h': { granularity: 3600, offsetMs: 0 },
  '1d': { granularity: 86400, offsetMs: 0 },
  '1w': { granularity: 86400, offsetMs: 4 * DAY_MS },
};

/** What loading candles needs from the route context: the sources, and the hedge delay. */
export type CandleContext = Pick<RouteContext, 'sources' | 'config' | 'metrics'>;

/** Equities: Yahoo has no 4-hour bars, and 4 h buckets of a 6.5 h session would not be real 4 h bars. */
export const EQUITY_TIMEFRAMES = TIMEFRAMES.filter((t) => t !== '4h');

export type { Candle };

export interface CandleSeries {
  /** BASE/QUOTE for crypto, the ticker for equities. */
  symbol: string;
  /** The market as the venue that served spells it: BTCUSDT (Binance), BTC-USD (Coinbase), BRK-B (Yahoo). */
  venue_symbol: string;
  asset_class: 'crypto' | 'equity';
  currency: string | null;
  /** Oldest first. */
  candles: Candle[];
  sources: SourceMeta[];
  /** When the request for the candles was sent (the earliest, with several), epoch ms: a candle is final in them only if it had closed by then. */
  sentAt: number;
  /** Extra `meta` fields (e.g. a fallback and its reason). */
  meta: Record<string, unknown>;
}

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

/**
 * The most recent `limit` candles of `timeframe`, oldest first (the newest may still be open).
 * Crypto: Binance, hedged with Coinbase Exchange as /v1/price is (asked at once when Binance fails or
 * its circuit is open, after HEDGE_DELAY_MS when it is slow; `meta.fallback` says why it served). An
 * explicit USD pair goes to Coinbase directly: Binance lists no USD pairs.
 */
export async function loadCandles(ctx: CandleContext, sym: MarketSymbol, timeframe: Timeframe, limit: number, now = Date.now()): Promise<CandleSeries> {
  if (sym.assetClass === 'crypto') {
    if (sym.explicitQuote && sym.quote === 'USD') return coinbaseCandles(ctx, sym, timeframe, limit, now);
    const got = await hedge(
      { source: BINANCE, run: () => binanceCandles(ctx, sym, timeframe, limit) },
      { source: COINBASE, run: () => coinbaseCandles(ctx, sym, timeframe, limit, now) },
      ctx.config.upstream.hedgeDelayMs,
      ctx.metrics.upstream,
    );
    return got.fallback ? { ...got.value, meta: { fallback: got.fallback } } : got.value;
  }
  const { sources } = ctx;
  if (timeframe === '4h') {
    throw new BadRequestError(`query parameter 'timeframe' must be one of ${EQUITY_TIMEFRAMES.join(', ')} for equities (Yahoo has no 4h bars)`);
  }
  const interval = YAHOO_INTERVAL[timeframe];
  const chart = await sources.yahoo.bars(sym.ticker, interval, yahooRange(interval, limit));
  return {
    symbol: sym.display,
    venue_symbol: sym.ticker,
    asset_class: 'equity',
    currency: chart.data.currency,
    candles: chart.data.bars.slice(-limit),
    sources: [chart.meta],
    sentAt: chart.sentAt,
    meta: {},
  };
}

async function binanceCandles({ sources }: CandleContext, sym: CryptoSymbol, timeframe: Timeframe, limit: number): Promise<CandleSeries> {
  const pair = binancePair(sym);
  const k = await sources.binanceSpot.klines(pair, timeframe as BinanceInterval, limit);
  return { symbol: `${sym.base}/${sym.quote}`, venue_symbol: pair, asset_class: 'crypto', currency: sym.quote, candles: k.data, sources: [k.meta], sentAt: k.sentAt, meta: {} };
}

/**
 * Coinbase Exchange candles of the product (BTC → BTC-USD): the most recent `limit` buckets up to
 * the one forming now. A timeframe Coinbase lacks is built from shorter candles, asking for the base
 * candles from the start of the oldest wanted bucket; a bucket missing a base candle is left out.
 * A bucket without trades has no candle on Coinbase, so fewer than `limit` candles can come back.
 */
async function coinbaseCandles({ sources }: CandleContext, sym: CryptoSymbol, timeframe: Timeframe, limit: number, now: number): Promise<CandleSeries> {
  const product = coinbaseProduct(sym);
  const [base, quote] = product.split('-') as [string, string];
  const { granularity, offsetMs } = COINBASE_PLAN[timeframe];
  const baseMs = granularity * 1000;
  const frameMs = TIMEFRAME_MS[timeframe];
  let candles: Candle[];
  let meta: SourceMeta;
  let sentAt: number;
  if (baseMs === frameMs) {
    const got = await sources.coinbase.candles(product, granularity, limit, now);
    candles = got.data.map(toCandle);
    meta = got.meta;
    sentAt = got.sentAt;
  } else {
    const from = bucketStart(now, frameMs, offsetMs) - (limit - 1) * frameMs;
    const count = (bucketStart(now, baseMs) - from) / baseMs + 1;
    const got = await sources.coinbase.candles(product, granularity, count, now);
    candles = aggregateCandles(got.data.map(toCandle), baseMs, frameMs, offsetMs, now).slice(-limit);
    meta = got.meta;
    sentAt = got.sentAt;
  }
  return { symbol: `${base}/${quote}`, venue_symbol: product, asset_class: 'crypto', currency: quote, candles, sources: [meta], sentAt, meta: {} };
}

const toCandle = (c: CoinbaseCandle): Candle => ({ time: new Date(c.time).toISOString(), open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume });
