// Binance USD-M futures public market data (no key).
//   GET {base}/fapi/v1/premiumIndex?symbol=        mark, index, lastFundingRate, nextFundingTime
//   GET {base}/fapi/v1/fundingInfo                 symbols whose funding interval/cap was adjusted
//   GET {base}/fapi/v1/openInterest?symbol=        open interest in base asset
//   GET {base}/fapi/v1/fundingRate?symbol=&limit=  settled funding, oldest first
//   GET {base}/futures/data/{openInterestHist|globalLongShortAccountRatio|topLongShortAccountRatio|
//                            topLongShortPositionRatio|takerlongshortRatio}?symbol=&period=&limit=
// Quirks: decimals are strings; an unknown symbol is HTTP 400 {"code":-1121,"msg":"Invalid symbol."};
// other 400s carry other codes; US/restricted IPs get HTTP 451 (a 502 here like any other status);
// openInterestHist.timestamp is a number live and a string in the docs; takerlongshortRatio rows
// have no symbol; topLongShortPositionRatio also names its fields longAccount/shortAccount.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { BINANCE_PROTOCOL, query } from './binance-api.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { slowTtl, TTL_ENV } from './ttls.ts';
import { decimal, epochMs, optionalDecimal } from './wire.ts';

export const BINANCE_FUTURES = 'binance-futures';

/** Funding interval of every USD-M perpetual not listed by /fapi/v1/fundingInfo. */
export const BINANCE_DEFAULT_FUNDING_INTERVAL_HOURS = 8;

const premiumIndexSchema = z.object({
  symbol: z.string(),
  markPrice: decimal,
  indexPrice: optionalDecimal,
  estimatedSettlePrice: optionalDecimal,
  lastFundingRate: optionalDecimal,
  interestRate: optionalDecimal,
  nextFundingTime: epochMs.optional(),
  time: epochMs,
});

const fundingInfoSchema = z.array(z.object({ symbol: z.string(), fundingIntervalHours: z.number().int().positive().optional() }).loose());

const openInterestSchema = z.object({ symbol: z.string(), openInterest: decimal, time: epochMs });

const fundingRateSchema = z.array(
  z.object({ symbol: z.string(), fundingTime: epochMs, fundingRate: decimal, markPrice: optionalDecimal }),
);

const openInterestHistSchema = z.array(
  z.object({ symbol: z.string().optional(), sumOpenInterest: decimal, sumOpenInterestValue: optionalDecimal, timestamp: epochMs }),
);

const ratioSchema = z.array(
  z.object({ symbol: z.string().optional(), longShortRatio: decimal, longAccount: decimal, shortAccount: decimal, timestamp: epochMs }),
);

const takerSchema = z.array(z.object({ buySellRatio: decimal, buyVol: decimal, sellVol: decimal, timestamp: epochMs }));

export interface PremiumIndex {
  symbol: string;
  mark_price: number;
  index_price: number | null;
  estimated_settle_price: number | null;
  /** Binance's `lastFundingRate`: the rate of the settlement in progress (settles at next_funding_time). */
  last_funding_rate: number | null;
  interest_rate: number | null;
  /** Epoch ms; null when not sent. */
  next_funding_time: number | null;
  /** Epoch ms of Binance's snapshot. */
  time: number;
  /**
   * Hours between settlements: fundingInfo's value for symbols Binance lists there, else the
   * venue default of 8; null when fundingInfo could not be read.
   */
  funding_interval_hours: number | null;
}

export interface FundingSettlement {
  time: number;
  funding_rate: number;
  mark_price: number | null;
}

export interface OpenInterestPoint {
  time: number;
  /** Base-asset units. */
  sum_open_interest: number;
  /** Quote units (USDT). */
  sum_open_interest_value: number | null;
}

export interface RatioPoint {
  time: number;
  /** Fraction 0-1 as Binance sends it. */
  long_fraction: number;
  short_fraction: number;
  long_short_ratio: number;
}

export interface TakerPoint {
  time: number;
  buy_volume: number;
  sell_volume: number;
  buy_sell_ratio: number;
}

export const RATIO_PERIODS = ['5m', '15m', '30m', '1h', '2h', '4h', '6h', '12h', '1d'] as const;
export type RatioPeriod = (typeof RATIO_PERIODS)[number];
export type RatioKind = 'globalLongShortAccountRatio' | 'topLongShortAccountRatio' | 'topLongShortPositionRatio';

export interface BinanceFuturesSettings {
  baseUrl: string;
  ttlS: number;
  /** CACHE_TTL_PRICE_S: the premium index used as a price next to a spot price is kept no longer than a last price. */
  priceTtlS: number;
}

/** How fresh a premium index must be: a derivatives figure (CACHE_TTL_DERIVATIVES_S) or a price (CACHE_TTL_PRICE_S). */
export type PremiumIndexUse = 'derivatives' | 'price';

function createBinanceFutures(ctx: SourceContext<BinanceFuturesSettings>) {
  const options = ctx.settings;
  const slowTtlS = slowTtl(options.ttlS);
  /** One GET; an "Invalid symbol" body becomes a 404 naming the symbol, other error bodies a 502. */
  const get = <S extends z.ZodType>(path: string, params: Record<string, string>, schema: S, ttlS: number) =>
    ctx.fetch({
      url: `${options.baseUrl}${path}${Object.keys(params).length ? `?${query(params)}` : ''}`,
      schema,
      protocol: BINANCE_PROTOCOL,
      notFound: `${BINANCE_FUTURES} lists no USD-M perpetual '${params.symbol ?? ''}'`,
      ttlS,
    });

  /** Funding interval per adjusted symbol; undefined when the call fails (the interval is then unknown). */
  async function fundingIntervals(): Promise<Map<string, number> | undefined> {
    try {
      const { data } = await get('/fapi/v1/fundingInfo', {}, fundingInfoSchema, slowTtlS);
      return new Map(data.flatMap((r) => (r.fundingIntervalHours ? [[r.symbol, r.fundingIntervalHours] as const] : [])));
    } catch {
      return undefined;
    }
  }

  return {
    /**
     * Mark/index price and funding of one perpetual. `use: 'price'` (the basis endpoint, which sets the mark
     * against a spot price) accepts an answer no older than a last price, so both legs are that close in time.
     */
    async premiumIndex(symbol: string, use: PremiumIndexUse = 'derivatives'): Promise<Sourced<PremiumIndex>> {
      const ttlS = use === 'price' ? Math.min(options.priceTtlS, options.ttlS) : options.ttlS;
      const [res, intervals] = await Promise.all([get('/fapi/v1/premiumIndex', { symbol }, premiumIndexSchema, ttlS), fundingIntervals()]);
      const p = res.data;
      return {
        data: {
          symbol: p.symbol,
          mark_price: p.markPrice,
          index_price: p.indexPrice,
          estimated_settle_price: p.estimatedSettlePrice,
          last_funding_rate: p.lastFundingRate,
          interest_rate: p.interestRate,
          next_funding_time: p.nextFundingTime ? p.nextFundingTime : null,
          time: p.time,
          funding_interval_hours: intervals ? (intervals.get(p.symbol) ?? BINANCE_DEFAULT_FUNDING_INTERVAL_HOURS) : null,
        },
        meta: res.meta,
      };
    },

    /** Current open interest, base-asset units. */
    async openInterest(symbol: string): Promise<Sourced<{ symbol: string; open_interest: number; time: number }>> {
      const res = await get('/fapi/v1/openInterest', { symbol }, openInterestSchema, options.ttlS);
      return { data: { symbol: res.data.symbol, open_interest: res.data.openInterest, time: res.data.time }, meta: res.meta };
    },

    /** The newest `limit` settlements (max 1000), oldest first. */
    async fundingRateHistory(symbol: string, limit: number): Promise<Sourced<FundingSettlement[]>> {
      const res = await get('/fapi/v1/fundingRate', { symbol, limit: String(limit) }, fundingRateSchema, slowTtlS);
      const rows = res.data
        .filter((r) => r.symbol === symbol)
        .map((r) => ({ time: r.fundingTime, funding_rate: r.fundingRate, mark_price: r.markPrice }))
        .sort((a, b) => a.time - b.time);
      return { data: rows, meta: res.meta };
    },

    /** Open interest per period (only the latest 30 days are served), oldest first. */
    async openInterestHist(symbol: string, period: RatioPeriod, limit: number): Promise<Sourced<OpenInterestPoint[]>> {
      const res = await get('/futures/data/openInterestHist', { symbol, period, limit: String(limit) }, openInterestHistSchema, options.ttlS);
      const rows = res.data
        .map((r) => ({ time: r.timestamp, sum_open_interest: r.sumOpenInterest, sum_open_interest_value: r.sumOpenInterestValue }))
        .sort((a, b) => a.time - b.time);
      return { data: rows, meta: res.meta };
    },

    /** One of the three long/short ratio series, oldest first. */
    async longShortRatio(kind: RatioKind, symbol: string, period: RatioPeriod, limit: number): Promise<Sourced<RatioPoint[]>> {
      const res = await get(`/futures/data/${kind}`, { symbol, period, limit: String(limit) }, ratioSchema, options.ttlS);
      const rows = res.data
        .map((r) => ({ time: r.timestamp, long_fraction: r.longAccount, short_fraction: r.shortAccount, long_short_ratio: r.longShortRatio }))
        .sort((a, b) => a.time - b.time);
      return { data: rows, meta: res.meta };
    },

    /** Taker buy/sell volume (base-asset units) per period, oldest first. */
    async takerLongShortRatio(symbol: string, period: RatioPeriod, limit: number): Promise<Sourced<TakerPoint[]>> {
      const res = await get('/futures/data/takerlongshortRatio', { symbol, period, limit: String(limit) }, takerSchema, options.ttlS);
      const rows = res.data
        .map((r) => ({ time: r.timestamp, buy_volume: r.buyVol, sell_volume: r.sellVol, buy_sell_ratio: r.buySellRatio }))
        .sort((a, b) => a.time - b.time);
      return { data: rows, meta: res.meta };
    },
  };
}

export type BinanceFutures = ReturnType<typeof createBinanceFutures>;

export const binanceFuturesSource = defineSource({
  key: 'binanceFutures',
  name: BINANCE_FUTURES,
  title: 'Binance USD-M futures',
  docs: 'https://developers.binance.com/docs/derivatives/usds-margined-futures/general-info',
  notes: 'No key. Weight limit 2400/min per IP; fundingRate and fundingInfo share 500 calls/5 min per IP; /futures/data/* serves the last 30 days. HTTP 451 from restricted locations.',
  env: {
    BINANCE_FUTURES_BASE_URL: env.url('https://fapi.binance.com', 'Binance USD-M futures REST API.'),
    CACHE_TTL_DERIVATIVES_S: TTL_ENV.CACHE_TTL_DERIVATIVES_S,
    CACHE_TTL_PRICE_S: TTL_ENV.CACHE_TTL_PRICE_S,
  },
  settings: (e) => ({ baseUrl: e.BINANCE_FUTURES_BASE_URL, ttlS: e.CACHE_TTL_DERIVATIVES_S, priceTtlS: e.CACHE_TTL_PRICE_S }),
  create: createBinanceFutures,
});
