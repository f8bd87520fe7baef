// Candle loading shared by /v1/ohlcv and the analytics endpoints: crypto from Binance spot klines,
// US equities and ETFs from Yahoo Finance chart bars. One shape out, oldest first; the newest
// candle may still be open (the analytics endpoints drop it).
import { BadRequestError } from '../http/errors.ts';
import type { SourceMeta } from '../http/envelope.ts';
import type { BinanceInterval } from '../sources/binance-spot.ts';
import type { YahooInterval } from '../sources/yahoo.ts';
import type { Sources } from '../sources/index.ts';
import { binancePair, type MarketSymbol } from './symbols.ts';

export const TIMEFRAMES = ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'] as const;
export type Timeframe = (typeof TIMEFRAMES)[number];

/** Equities: Yahoo has no 4-hour bars, and 4 h buckets of a 6.5 h session would not be real 4 h bars. */
export const EQUITY_TIMEFRAMES = TIMEFRAMES.filter((t) => t !== '4h');

export interface Candle {
  /** Open time, ISO-8601 UTC. */
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Base asset (crypto) or shares (equities); null when not given. */
  volume: number | null;
}

export interface CandleSeries {
  /** BASE/QUOTE for crypto, the ticker for equities. */
  symbol: string;
  asset_class: 'crypto' | 'equity';
  currency: string | null;
  /** Oldest first. */
  candles: Candle[];
  sources: SourceMeta[];
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

/** The most recent `limit` candles of `timeframe`, oldest first. */
export async function loadCandles(sources: Sources, sym: MarketSymbol, timeframe: Timeframe, limit: number): Promise<CandleSeries> {
  if (sym.assetClass === 'crypto') {
    const k = await sources.binanceSpot.klines(binancePair(sym), timeframe as BinanceInterval, limit);
    return { symbol: `${sym.base}/${sym.quote}`, asset_class: 'crypto', currency: sym.quote, candles: k.data, sources: [k.meta], meta: {} };
  }
  if (timeframe === '4h') {
    throw new BadRequestError(`query parameter 'timeframe' must be one of ${EQUITY_TIMEFRAMES.join(', ')} for equities (Yahoo has no 4h bars)`);
  }
  const interval = YAHOO_INTERVAL[timeframe];
  const chart = await sources.yahoo.bars(sym.ticker, interval, yahooRange(interval, limit));
  return { symbol: sym.display, asset_class: 'equity', currency: chart.data.currency, candles: chart.data.bars.slice(-limit), sources: [chart.meta], meta: {} };
}
