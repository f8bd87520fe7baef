// Bybit v5 public market data, linear (USDT/USDC-margined) contracts (no key).
//   GET {base}/v5/market/tickers?category=linear&symbol=
//   GET {base}/v5/market/funding/history?category=linear&symbol=&limit=   (newest first, max 200)
//   GET {base}/v5/market/open-interest?category=linear&symbol=&intervalTime=&limit=  (newest first, max 200)
// Quirks: envelope {retCode, retMsg, result, retExtInfo, time}; errors are HTTP 200 with retCode != 0
// (an unknown symbol: retCode 10001 "Not supported symbols", or an empty list); every number is a
// string, timestamps included; linear open interest is in base-asset units. US and mainland-China
// IPs get HTTP 403 with a CloudFront HTML page (a 502 here like any other status).
import { z } from 'zod';
import { NotFoundError } from '../http/errors.ts';
import { fetchSource, type SourceDeps, type Sourced } from '../http/fetch-source.ts';
import { decimal, optionalDecimal } from './wire.ts';

export const BYBIT = 'bybit';

/** retCode of a parameter error; with a message about the symbol it means "not listed". */
const PARAMS_ERROR = 10001;

const epochMs = z.union([z.number(), z.string().regex(/^\d+$/)]).transform(Number);

interface Envelope<T> {
  retCode: number;
  retMsg: string;
  /** Validated only when retCode is 0; null otherwise. */
  result: T | null;
}

/** Bybit's envelope; `result` must match `inner` only on success (error bodies carry `{}` or null). */
function envelope<S extends z.ZodType>(inner: S) {
  return z
    .object({ retCode: z.number(), retMsg: z.string(), result: z.unknown() })
    .transform((b, ctx): Envelope<z.output<S>> => {
      if (b.retCode !== 0) return { retCode: b.retCode, retMsg: b.retMsg, result: null };
      const parsed = inner.safeParse(b.result);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: ['result', ...issue.path] });
        return z.NEVER;
      }
      return { retCode: 0, retMsg: b.retMsg, result: parsed.data };
    });
}

const isUnknownSymbol = (b: { retCode: number; retMsg: string }) => b.retCode === PARAMS_ERROR && /symbol/i.test(b.retMsg);

const tickerSchema = z.object({
  list: z.array(
    z.object({
      symbol: z.string(),
      markPrice: optionalDecimal,
      indexPrice: optionalDecimal,
      lastPrice: optionalDecimal,
      fundingRate: optionalDecimal,
      nextFundingTime: z.union([z.string(), z.number()]).optional(),
      openInterest: optionalDecimal,
      openInterestValue: optionalDecimal,
      fundingIntervalHour: optionalDecimal,
    }),
  ),
});

const fundingHistorySchema = z.object({
  list: z.array(z.object({ symbol: z.string(), fundingRate: decimal, fundingRateTimestamp: epochMs })),
});

const openInterestSchema = z.object({
  list: z.array(z.object({ openInterest: decimal, timestamp: epochMs })),
});

export interface LinearTicker {
  symbol: string;
  mark_price: number | null;
  index_price: number | null;
  last_price: number | null;
  /** Current funding rate, per funding interval. */
  funding_rate: number | null;
  /** Epoch ms; null when not sent (or "0"). */
  next_funding_time: number | null;
  /** Base-asset units. */
  open_interest: number | null;
  /** Bybit's own value of open interest, quote units (USDT/USDC). */
  open_interest_value: number | null;
  /** `fundingIntervalHour` when Bybit sends it (newer responses); null otherwise. */
  funding_interval_hours: number | null;
}

export type OpenInterestInterval = '5min' | '15min' | '30min' | '1h' | '4h' | '1d';

export interface BybitOptions {
  baseUrl: string;
  ttlS: number;
  /**
   * For data that changes once per funding interval (funding history); default: ttlS, but at
   * least 300 s (0 still disables caching). Binance's fundingRate/fundingInfo share 500 calls/5 min/IP.
   */
  slowTtlS?: number;
}

export function createBybit(deps: SourceDeps, options: BybitOptions) {
  const slowTtlS = options.slowTtlS ?? (options.ttlS === 0 ? 0 : Math.max(options.ttlS, 300));
  async function get<S extends z.ZodType>(path: string, query: Record<string, string>, inner: S, ttlS: number): Promise<Sourced<z.output<S>>> {
    const res = await fetchSource(deps, {
      source: BYBIT,
      url: `${options.baseUrl}${path}?${new URLSearchParams(query)}`,
      schema: envelope(inner),
      providerError: (b) => (b.retCode === 0 || isUnknownSymbol(b) ? undefined : `retCode ${b.retCode} (${b.retMsg})`),
      ttlS,
    });
    const body = res.data as Envelope<z.output<S>>;
    if (body.result === null) throw notListed(query.symbol ?? '');
    return { data: body.result, meta: res.meta };
  }

  return {
    /** Ticker of one linear perpetual; 404 when Bybit does not list it. */
    async linearTicker(symbol: string): Promise<Sourced<LinearTicker>> {
      const res = await get('/v5/market/tickers', { category: 'linear', symbol }, tickerSchema, options.ttlS);
      const t = res.data.list.find((r) => r.symbol === symbol);
      if (!t) throw notListed(symbol);
      const next = t.nextFundingTime === undefined || t.nextFundingTime === '' ? 0 : Number(t.nextFundingTime);
      return {
        data: {
          symbol: t.symbol,
          mark_price: t.markPrice,
          index_price: t.indexPrice,
          last_price: t.lastPrice,
          funding_rate: t.fundingRate,
          next_funding_time: Number.isFinite(next) && next > 0 ? next : null,
          open_interest: t.openInterest,
          open_interest_value: t.openInterestValue,
          funding_interval_hours: t.fundingIntervalHour !== null && t.fundingIntervalHour > 0 ? t.fundingIntervalHour : null,
        },
        meta: res.meta,
      };
    },

    /** The newest `limit` settlements (max 200), oldest first. */
    async fundingHistory(symbol: string, limit: number): Promise<Sourced<{ time: number; funding_rate: number }[]>> {
      const res = await get('/v5/market/funding/history', { category: 'linear', symbol, limit: String(limit) }, fundingHistorySchema, slowTtlS);
      const rows = res.data.list
        .filter((r) => r.symbol === symbol)
        .map((r) => ({ time: r.fundingRateTimestamp, funding_rate: r.fundingRate }))
        .sort((a, b) => a.time - b.time);
      return { data: rows, meta: res.meta };
    },

    /** Open interest per interval (base-asset units), oldest first. */
    async openInterestHistory(symbol: string, intervalTime: OpenInterestInterval, limit: number): Promise<Sourced<{ time: number; open_interest: number }[]>> {
      const res = await get('/v5/market/open-interest', { category: 'linear', symbol, intervalTime, limit: String(limit) }, openInterestSchema, options.ttlS);
      const rows = res.data.list.map((r) => ({ time: r.timestamp, open_interest: r.openInterest })).sort((a, b) => a.time - b.time);
      return { data: rows, meta: res.meta };
    },
  };
}

function notListed(symbol: string): NotFoundError {
  return new NotFoundError(`${BYBIT} lists no linear perpetual '${symbol}'`, BYBIT);
}

export type Bybit = ReturnType<typeof createBybit>;
