// Yahoo Finance chart API (unofficial, no key, no crumb for v8/chart).
//   GET {base}/v8/finance/chart/{ticker}?interval=1d&range=5d
// chart.result[0].meta holds the current market state (regularMarketPrice, regularMarketTime in unix s,
// currency, priceHint); timestamp[] (unix s, bar open) is aligned by index with
// indicators.quote[0].{open,high,low,close,volume}[], whose entries can be null.
// Quirks: needs a browser-like User-Agent (else HTTP 429 "Too Many Requests" as plain text); an unknown
// ticker is HTTP 404 {"chart":{"result":null,"error":{"code":"Not Found",...}}} (our 404; the same body with
// HTTP 200 has been reported, so the body decides); prices are float32 noise (129.0399932861328) and are
// rounded to meta.priceHint decimals; a valid empty window can omit timestamp/indicators.
import { z } from 'zod';
import { NotFoundError, UpstreamError } from '../http/errors.ts';
import { fetchSource, type SourceDeps, type Sourced } from '../http/fetch-source.ts';

export const YAHOO = 'yahoo';

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
const chartSchema = z.object({
  chart: z.object({
    result: z.array(resultSchema).nullable(),
    error: z.object({ code: z.string(), description: z.string().nullish() }).nullable(),
  }),
});

/** Yahoo chart intervals used by this API. */
export type YahooInterval = '1m' | '5m' | '15m' | '30m' | '60m' | '1d' | '1wk';

export interface YahooBar {
  /** Bar open, ISO. */
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number | null;
}

export interface YahooChart {
  currency: string | null;
  regularMarketPrice: number | null;
  /** ISO time of regularMarketPrice; null when not given. */
  regularMarketTime: string | null;
  /** Bars oldest first; rows with any null open/high/low/close are dropped, never filled. */
  bars: YahooBar[];
}

export interface YahooOptions {
  baseUrl: string;
  ttl: { price: number; ohlcv: number };
}

export function createYahoo(deps: SourceDeps, options: YahooOptions) {
  async function chart(ticker: string, interval: YahooInterval, range: string, ttlS: number): Promise<Sourced<YahooChart>> {
    const res = await fetchSource(deps, {
      source: YAHOO,
      url: `${options.baseUrl}/v8/finance/chart/${encodeURIComponent(ticker)}?interval=${interval}&range=${range}`,
      headers: { 'user-agent': BROWSER_USER_AGENT, accept: 'application/json, text/plain, */*' },
      schema: chartSchema,
      // 404 is an unknown ticker; 400/422 carry Yahoo's reason (e.g. a range too long for the interval).
      acceptStatus: [400, 404, 422],
      providerError: ({ chart: c }) =>
        c.error && c.error.code !== 'Not Found'
          ? `${c.error.code}${c.error.description ? ` (${c.error.description})` : ''}`
          : !c.error && !c.result?.length
            ? 'no result'
            : undefined,
      ttlS,
    });
    const { error, result } = res.data.chart;
    if (error) throw new NotFoundError(`yahoo has no data for the ticker ${ticker}`, YAHOO);
    if (result!.length !== 1) throw new UpstreamError(YAHOO, 'schema', `yahoo returned ${result!.length} results for one ticker`);
    const r = result![0]!;
    const hint = r.meta.priceHint ?? null;
    const px = (v: number) => (hint === null ? v : Number(v.toFixed(hint)));
    const q = r.indicators?.quote[0];
    const bars: YahooBar[] = [];
    (r.timestamp ?? []).forEach((t, i) => {
      const [o, h, l, c] = [q?.open[i], q?.high[i], q?.low[i], q?.close[i]];
      if (o == null || h == null || l == null || c == null) return;
      bars.push({ time: new Date(t * 1000).toISOString(), open: px(o), high: px(h), low: px(l), close: px(c), volume: q?.volume?.[i] ?? null });
    });
    return {
      data: {
        currency: r.meta.currency ?? null,
        regularMarketPrice: r.meta.regularMarketPrice == null ? null : px(r.meta.regularMarketPrice),
        regularMarketTime: r.meta.regularMarketTime == null ? null : new Date(r.meta.regularMarketTime * 1000).toISOString(),
        bars,
      },
      meta: res.meta,
    };
  }

  return {
    /** Current quote: meta of a 5-day daily chart. */
    async quote(ticker: string): Promise<Sourced<YahooChart>> {
      return chart(ticker, '1d', '5d', options.ttl.price);
    },
    /** Bars of `interval` over `range` (a Yahoo range such as 5d, 60d, 1y, max). */
    async bars(ticker: string, interval: YahooInterval, range: string): Promise<Sourced<YahooChart>> {
      return chart(ticker, interval, range, options.ttl.ohlcv);
    },
  };
}

export type Yahoo = ReturnType<typeof createYahoo>;
