// Yahoo Finance chart API (unofficial, no key, no crumb for v8/chart).
//   GET {base}/v8/finance/chart/{ticker}?interval=1d&range=5d
// chart.result[0].meta holds the current market state (regularMarketPrice, regularMarketTime in unix s,
// currency, priceHint); timestamp[] (unix s, bar open) is aligned by index with
// indicators.quote[0].{open,high,low,close,volume}[], whose entries can be null.
// Quirks: needs a browser-like User-Agent (else HTTP 429 "Too Many Requests" as plain text); an unknown
// ticker is HTTP 404 {"chart":{"result":null,"error":{"code":"Not Found",...}}} (our 404; the same body with
// HTTP 200 has been reported, so the body decides); prices are float32 noise (129.0399932861328) and are
// rounded to meta.priceHint decimals; a valid empty window can omit timestamp/indicators. Daily and weekly charts
// can end with a separate "live" row for today's session stamped with the current time, beside the period's own
// row (dropped here: see withoutLiveRow).
import { z } from 'zod';
import type { Candle } from '../analytics/candles.ts';
import { newYorkParts } from '../lib/new-york-time.ts';
import { env } from '../lib/env.ts';
import { UpstreamError } from '../lib/errors.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type Fetched, type SourceContext } from './define-source.ts';
import { TTL_ENV } from './ttls.ts';

export const YAHOO = 'yahoo';

/**
 * Yahoo's errors are `{ chart: { result: null, error: { code, description } } }`, with HTTP 404 for an
 * unknown ticker (the same body with HTTP 200 has been reported, so the body decides) and 400/422 for
 * other reasons (a range too long for the interval). A success with no result is a failure too.
 */
export const YAHOO_PROTOCOL: Protocol = {
  classify(body) {
    const chart = isRecord(body) && isRecord(body.chart) ? body.chart : undefined;
    if (!chart) return undefined;
    const error = isRecord(chart.error) ? chart.error : undefined;
    if (error) {
      if (error.code === 'Not Found') return { kind: 'not_found', detail: String(error.description ?? '') };
      return { kind: 'provider_error', detail: `${String(error.code)}${error.description ? ` (${String(error.description)})` : ''}` };
    }
    if (!Array.isArray(chart.result) || chart.result.length === 0) return { kind: 'provider_error', detail: 'no result' };
    return undefined;
  },
};

/** A current desktop browser's User-Agent; Yahoo throttles unknown clients. */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const series = z.array(z.number().nullable());
const resultSchema = z.object({
  meta: z.object({
    currency: z.string().nullish(),
    symbol: z.string().nullish(),
    regularMarketPrice: z.number().nullish(),
    regularMarketTime: z.number().nullish(),
    priceHint: z.number().int().min(0).max(12).nullish(),
  }),
  timestamp: z.array(z.number()).optional(),
  indicators: z
    .object({ quote: z.array(z.object({ open: series, high: series, low: series, close: series, volume: series.optional() })) })
    .optional(),
});
const chartSchema = z.object({ chart: z.object({ result: z.array(resultSchema).min(1) }) });

/** Yahoo chart intervals used by this API. */
export type YahooInterval = '1m' | '5m' | '15m' | '30m' | '60m' | '1d' | '1wk';

/** A Yahoo bar: open time (ISO), prices, and volume (null when Yahoo gave none). */
export type YahooBar = Candle;

/**
 * Yahoo's separate live row, dropped: while a period is in progress (and after the session), daily and weekly
 * charts can end with an extra row holding today's session stamped with the current time, beside the period's
 * own row (yfinance merges it back: utils.fix_Yahoo_returning_live_separate). It is not a candle of its own.
 * Yahoo stamps its bars on a grid: every week at Monday 00:00 New York time (holidays included), every day at
 * the session's open (09:30). So on 1d and 1wk the newest row is dropped when it is off the grid the row before
 * it is on (another New York time of day; for weeks, another weekday too), or when it falls in the same period
 * (New York date; week from Monday) as that row. Only the newest row can be the live one, and only it is
 * checked: a time-zone conversion per bar on every answer would cost milliseconds. Intraday bars are left as
 * they are. Rows are oldest first.
 */
function withoutLiveRow(rows: { t: number; bar: YahooBar }[], interval: YahooInterval): YahooBar[] {
  const bars = rows.map((r) => r.bar);
  if ((interval !== '1d' && interval !== '1wk') || rows.length < 2) return bars;
  const prev = gridSlot(rows.at(-2)!.t, interval);
  const last = gridSlot(rows.at(-1)!.t, interval);
  return last.period === prev.period || last.phase !== prev.phase ? bars.slice(0, -1) : bars;
}

const DAY_MS = 86_400_000;

/** Where a bar sits on Yahoo's grid: its period (the New York date; for 1wk the Monday of its week) and its phase (New York time of day; for 1wk with the weekday). */
function gridSlot(ms: number, interval: '1d' | '1wk'): { period: string; phase: string } {
  const p = newYorkParts(ms);
  const time = `${p.hour}:${p.minute}:${p.second}.${ms % 1000}`;
  if (interval === '1d') return { period: p.date, phase: time };
  const day = Date.parse(`${p.date}T00:00:00Z`);
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0 ... Sunday 6
  return { period: new Date(day - weekday * DAY_MS).toISOString().slice(0, 10), phase: `${weekday} ${time}` };
}

export interface YahooChart {
  currency: string | null;
  regularMarketPrice: number | null;
  /** ISO time of regularMarketPrice; null when not given. */
  regularMarketTime: string | null;
  /** Bars oldest first; rows with any null open/high/low/close are dropped, never filled, and so is Yahoo's separate live row (withoutLiveRow). */
  bars: YahooBar[];
}

export interface YahooSettings {
  baseUrl: string;
  ttl: { price: number; ohlcv: number };
}

function createYahoo(ctx: SourceContext<YahooSettings>) {
  const options = ctx.settings;
  async function chart(ticker: string, interval: YahooInterval, range: string, ttlS: number): Promise<Fetched<YahooChart>> {
    const res = await ctx.fetch({
      url: `${options.baseUrl}/v8/finance/chart/${encodeURIComponent(ticker)}?interval=${interval}&range=${range}`,
      headers: { 'user-agent': BROWSER_USER_AGENT, accept: 'application/json, text/plain, */*' },
      schema: chartSchema,
      protocol: YAHOO_PROTOCOL,
      notFound: `yahoo has no data for the ticker ${ticker}`,
      ttlS,
    });
    const result = res.data.chart.result;
    if (result.length !== 1) throw new UpstreamError(YAHOO, 'schema', `yahoo returned ${result.length} results for one ticker`);
    const r = result[0]!;
    const hint = r.meta.priceHint ?? null;
    const px = (v: number) => (hint === null ? v : Number(v.toFixed(hint)));
    const q = r.indicators?.quote[0];
    const rows: { t: number; bar: YahooBar }[] = [];
    (r.timestamp ?? []).forEach((s, i) => {
      const [o, h, l, c] = [q?.open[i], q?.high[i], q?.low[i], q?.close[i]];
      if (o == null || h == null || l == null || c == null) return;
      const t = s * 1000;
      rows.push({ t, bar: { time: new Date(t).toISOString(), open: px(o), high: px(h), low: px(l), close: px(c), volume: q?.volume?.[i] ?? null } });
    });
    const bars = withoutLiveRow(rows, interval);
    return {
      data: {
        currency: r.meta.currency ?? null,
        regularMarketPrice: r.meta.regularMarketPrice == null ? null : px(r.meta.regularMarketPrice),
        regularMarketTime: r.meta.regularMarketTime == null ? null : new Date(r.meta.regularMarketTime * 1000).toISOString(),
        bars,
      },
      meta: res.meta,
      sentAt: res.sentAt,
    };
  }

  return {
    /** Current quote: meta of a 5-day daily chart. */
    async quote(ticker: string): Promise<Fetched<YahooChart>> {
      return chart(ticker, '1d', '5d', options.ttl.price);
    },
    /** Bars of `interval` over `range` (a Yahoo range such as 5d, 60d, 1y, max). */
    async bars(ticker: string, interval: YahooInterval, range: string): Promise<Fetched<YahooChart>> {
      return chart(ticker, interval, range, options.ttl.ohlcv);
    },
  };
}

export type Yahoo = ReturnType<typeof createYahoo>;

export const yahooSource = defineSource({
  key: 'yahoo',
  name: YAHOO,
  title: 'Yahoo Finance (chart API)',
  docs: 'https://query1.finance.yahoo.com/v8/finance/chart/AAPL (unofficial, undocumented)',
  notes: 'Unofficial, no key. Needs a browser-like User-Agent (else HTTP 429); 1m bars for 7 days, other intraday for 60 days, 1h for 730 days.',
  env: {
    YAHOO_BASE_URL: env.url('https://query1.finance.yahoo.com', 'Yahoo Finance chart API.'),
    CACHE_TTL_PRICE_S: TTL_ENV.CACHE_TTL_PRICE_S,
    CACHE_TTL_OHLCV_S: TTL_ENV.CACHE_TTL_OHLCV_S,
  },
  settings: (e) => ({ baseUrl: e.YAHOO_BASE_URL, ttl: { price: e.CACHE_TTL_PRICE_S, ohlcv: e.CACHE_TTL_OHLCV_S } }),
  create: createYahoo,
});
