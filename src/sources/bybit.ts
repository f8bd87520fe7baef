// Bybit v5 public market data, linear (USDT/USDC-margined) contracts (no key).
//   GET {base}/v5/market/tickers?category=linear&symbol=
//   GET {base}/v5/market/funding/history?category=linear&symbol=&limit=   (newest first, max 200)
//   GET {base}/v5/market/open-interest?category=linear&symbol=&intervalTime=&limit=  (newest first, max 200)
// Quirks: envelope {retCode, retMsg, result, retExtInfo, time}; errors are HTTP 200 with retCode != 0
// (an unknown symbol: retCode 10001 "Not supported symbols", or an empty list); every number is a
// string, timestamps included; linear open interest is in base-asset units. US and mainland-China
// IPs get HTTP 403 with a CloudFront HTML page (a 502 here like any other status).
// Open interest sides: Bybit's v5 docs (tickers, open-interest; changed June 2026) define openInterest
// and openInterestValue as the sum of both sides, and singleOpenInterest / singleOpenInterestValue as one
// side (what Binance's openInterest counts). Older answers have no single* fields, and the API then
// documented openInterest as one side: it is read that way only when single* is absent.
import { z } from 'zod';
import { NotFoundError } from '../lib/errors.ts';
import { env } from '../lib/env.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { slowTtl, TTL_ENV } from './ttls.ts';
import { decimal, epochMs, optionalDecimal } from './wire.ts';

export const BYBIT = 'bybit';

/** retCode of a parameter error; with a message about the symbol it means "not listed". */
const PARAMS_ERROR = 10001;
/** retCodes of Bybit's rate limits (too many visits; IP rate limit). */
const RATE_LIMIT_CODES = new Set([10006, 10018]);

/** Bybit answers HTTP 200 with `{ retCode, retMsg }`; retCode 0 is success. */
export const BYBIT_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || typeof body.retCode !== 'number' || body.retCode === 0) return undefined;
    const msg = typeof body.retMsg === 'string' ? body.retMsg : '';
    if (body.retCode === PARAMS_ERROR && /symbol/i.test(msg)) return { kind: 'not_found', detail: msg };
    const detail = `retCode ${body.retCode} (${msg})`;
    return RATE_LIMIT_CODES.has(body.retCode) ? { kind: 'rate_limited', detail } : { kind: 'provider_error', detail };
  },
};

/** Bybit's success envelope around `result`. */
const ok = <S extends z.ZodType>(result: S) => z.object({ retCode: z.literal(0), result });

const tickerSchema = ok(z.object({
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
      singleOpenInterest: optionalDecimal,
      singleOpenInterestValue: optionalDecimal,
      fundingIntervalHour: optionalDecimal,
    }),
  ),
}));

const fundingHistorySchema = ok(z.object({
  list: z.array(z.object({ symbol: z.string(), fundingRate: decimal, fundingRateTimestamp: epochMs })),
}));

const openInterestSchema = ok(z.object({
  list: z.array(z.object({ openInterest: decimal, singleOpenInterest: optionalDecimal, timestamp: epochMs })),
}));

/** The Bybit field an open-interest figure was read from (see the note on sides at the top). */
export type OpenInterestField = 'singleOpenInterest' | 'openInterest';
export type OpenInterestValueField = 'singleOpenInterestValue' | 'openInterestValue';

export interface LinearTicker {
  symbol: string;
  mark_price: number | null;
  index_price: number | null;
  last_price: number | null;
  /** Current funding rate, per funding interval. */
  funding_rate: number | null;
  /** Epoch ms; null when not sent (or "0"). */
  next_funding_time: number | null;
  /** One side, base-asset units: singleOpenInterest, else openInterest of an older answer. */
  open_interest: number | null;
  /** Where open_interest came from; null when neither field was sent. */
  open_interest_field: OpenInterestField | null;
  /** Bybit's own value of one side, quote units (USDT/USDC): singleOpenInterestValue, else an older answer's openInterestValue. */
  open_interest_value: number | null;
  open_interest_value_field: OpenInterestValueField | null;
  /** `fundingIntervalHour` when Bybit sends it (newer responses); null otherwise. */
  funding_interval_hours: number | null;
}

export type OpenInterestInterval = '5min' | '15min' | '30min' | '1h' | '4h' | '1d';

export interface BybitSettings {
  baseUrl: string;
  ttlS: number;
}

function createBybit(ctx: SourceContext<BybitSettings>) {
  const options = ctx.settings;
  const slowTtlS = slowTtl(options.ttlS);
  async function get<S extends z.ZodType<{ result: unknown }>>(path: string, query: Record<string, string>, schema: S, ttlS: number): Promise<Sourced<z.output<S>['result']>> {
    const res = await ctx.fetch({
      url: `${options.baseUrl}${path}?${new URLSearchParams(query)}`,
      schema,
      protocol: BYBIT_PROTOCOL,
      notFound: notListedMessage(query.symbol ?? ''),
      ttlS,
    });
    return { data: res.data.result, meta: res.meta };
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
          // The single-side field when the answer has it; an older answer's openInterest is one side.
          ...(t.singleOpenInterest !== null
            ? { open_interest: t.singleOpenInterest, open_interest_field: 'singleOpenInterest' as const }
            : { open_interest: t.openInterest, open_interest_field: t.openInterest !== null ? ('openInterest' as const) : null }),
          ...(t.singleOpenInterestValue !== null
            ? { open_interest_value: t.singleOpenInterestValue, open_interest_value_field: 'singleOpenInterestValue' as const }
            : t.singleOpenInterest !== null
              ? // A new answer without the single value: its openInterestValue is both sides, not this figure.
                { open_interest_value: null, open_interest_value_field: null }
              : { open_interest_value: t.openInterestValue, open_interest_value_field: t.openInterestValue !== null ? ('openInterestValue' as const) : null }),
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

    /** Open interest per interval (one side, base-asset units, with the field each row was read from), oldest first. */
    async openInterestHistory(
      symbol: string,
      intervalTime: OpenInterestInterval,
      limit: number,
    ): Promise<Sourced<{ time: number; open_interest: number; field: OpenInterestField }[]>> {
      const res = await get('/v5/market/open-interest', { category: 'linear', symbol, intervalTime, limit: String(limit) }, openInterestSchema, options.ttlS);
      const rows = res.data.list
        .map((r) =>
          r.singleOpenInterest !== null
            ? { time: r.timestamp, open_interest: r.singleOpenInterest, field: 'singleOpenInterest' as const }
            : { time: r.timestamp, open_interest: r.openInterest, field: 'openInterest' as const },
        )
        .sort((a, b) => a.time - b.time);
      return { data: rows, meta: res.meta };
    },
  };
}

const notListedMessage = (symbol: string) => `${BYBIT} lists no linear perpetual '${symbol}'`;

function notListed(symbol: string): NotFoundError {
  return new NotFoundError(notListedMessage(symbol), BYBIT);
}

export type Bybit = ReturnType<typeof createBybit>;

export const bybitSource = defineSource({
  key: 'bybit',
  name: BYBIT,
  title: 'Bybit (v5, linear)',
  docs: 'https://bybit-exchange.github.io/docs/v5/intro',
  notes: 'No key. 600 requests per 5 s per IP; errors arrive as HTTP 200 with retCode != 0. HTTP 403 (CloudFront) from the US and mainland China.',
  env: {
    BYBIT_BASE_URL: env.url('https://api.bybit.com', 'Bybit v5 REST API.'),
    CACHE_TTL_DERIVATIVES_S: TTL_ENV.CACHE_TTL_DERIVATIVES_S,
  },
  settings: (e) => ({ baseUrl: e.BYBIT_BASE_URL, ttlS: e.CACHE_TTL_DERIVATIVES_S }),
  create: createBybit,
});
