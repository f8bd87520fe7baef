// Kalshi Trade API v2, public market data (no key).
//   GET {base}/markets/{ticker}                                   { market }
//   GET {base}/markets?event_ticker=&limit=1000                   { markets[], cursor }
//   GET {base}/events?status=open&with_nested_markets=true&limit=200[&series_ticker=][&cursor=]
//                                                                 { events[ {…, category, markets[]} ], cursor }
//   GET {base}/markets/{ticker}/orderbook?depth=N                 { orderbook_fp: { yes_dollars, no_dollars } }
//   GET {base}/markets/trades?ticker=&limit=N                     { trades[], cursor }
// Quirks: prices are `*_dollars` decimal strings ("0.7900", up to 6 decimals) and sizes `*_fp` strings
// ("24154.29"; fractional contracts exist) — the legacy integer-cent fields are gone. A side with no
// order shows price "0.0000" (bid) or "1.0000" (ask) with size "0.00"; sizes may also be "" (unknown).
// Order books list BIDS only, both sides ascending (best last): the YES ask is 1 − the best NO bid.
// Filtering on status=open returns markets whose status reads "active". Errors: {"error":{"code",
// "message"}} (404 not_found, 429 too_many_requests, without Retry-After). Pages end with cursor "" (or none),
// and only then: a page shorter than the limit is not a sign of the last one.
// /events has no category filter: a category is found by walking the open events.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import type { SourceMeta } from '../upstream/envelope.ts';
import { NotFoundError } from '../lib/errors.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { decimal, optionalDecimal } from './wire.ts';

export const KALSHI = 'kalshi';

/**
 * Kalshi's categories (case as Kalshi writes them), the keys of its GET /search/tags_by_categories
 * as recorded in test/fixtures/upstream/kalshi__search_tags_by_categories.json.
 */
export const KALSHI_CATEGORIES = [
  'Climate and Weather', 'Commodities', 'Companies', 'Crypto', 'Economics', 'Elections', 'Entertainment',
  'Financials', 'Mentions', 'Politics', 'Science and Technology', 'Social', 'Sports', 'Transportation',
] as const;

/** The series of Kalshi's Fed decision markets: one event per FOMC meeting, KXFEDDECISION-{YY}{MON}. */
export const FED_DECISION_SERIES = 'KXFEDDECISION';

/** Events per page of GET /events (Kalshi's maximum). */
export const EVENTS_PAGE_SIZE = 200;

/** Kalshi answers `{ error: { code, message } }`: not_found is an answer, too_many_requests a limit, the rest failures. */
export const KALSHI_PROTOCOL: Protocol = {
  classify(body, status) {
    if (!isRecord(body) || !isRecord(body.error)) return undefined;
    const code = String(body.error.code ?? '');
    const detail = `${code}${body.error.message ? ` (${String(body.error.message)})` : ''}`;
    if (code === 'not_found' || status === 404) return { kind: 'not_found', detail };
    if (code === 'too_many_requests' || status === 429) return { kind: 'rate_limited', detail };
    return { kind: 'provider_error', detail };
  },
};

const marketSchema = z
  .object({
    ticker: z.string(),
    event_ticker: z.string(),
    title: z.string().nullish(),
    subtitle: z.string().nullish(),
    yes_sub_title: z.string().nullish(),
    status: z.string(),
    result: z.string().nullish(),
    close_time: z.string().nullish(),
    yes_bid_dollars: optionalDecimal,
    yes_bid_size_fp: optionalDecimal,
    yes_ask_dollars: optionalDecimal,
    yes_ask_size_fp: optionalDecimal,
    last_price_dollars: optionalDecimal,
    volume_fp: optionalDecimal,
    volume_24h_fp: optionalDecimal,
    open_interest_fp: optionalDecimal,
    custom_strike: z.record(z.string(), z.unknown()).nullish(),
  })
  .transform(
    (m): KalshiMarket => ({
      ticker: m.ticker,
      event_ticker: m.event_ticker,
      title: m.title || null,
      outcome: m.yes_sub_title || m.subtitle || null,
      status: m.status,
      result: m.result || null,
      close_time: m.close_time || null,
      yes_bid: m.yes_bid_dollars,
      yes_bid_size: m.yes_bid_size_fp,
      yes_ask: m.yes_ask_dollars,
      yes_ask_size: m.yes_ask_size_fp,
      last_price: m.last_price_dollars,
      volume: m.volume_fp,
      volume_24h: m.volume_24h_fp,
      open_interest: m.open_interest_fp,
      custom_strike: m.custom_strike ? Object.fromEntries(Object.entries(m.custom_strike).map(([k, v]) => [k, String(v)])) : null,
    }),
  );

const eventSchema = z.object({
  event_ticker: z.string(),
  series_ticker: z.string().nullish(),
  title: z.string().nullish(),
  category: z.string().nullish(),
  mutually_exclusive: z.boolean().nullish(),
  markets: z.array(marketSchema).nullish(),
});

const cursor = z.string().nullish();
const marketOne = z.object({ market: marketSchema });
const marketList = z.object({ markets: z.array(marketSchema), cursor });
const eventList = z.object({ events: z.array(eventSchema), cursor });
const level = z.tuple([decimal, decimal]);
const orderbookSchema = z.object({
  orderbook_fp: z.object({ yes_dollars: z.array(level).nullish(), no_dollars: z.array(level).nullish() }),
});
const tradesSchema = z.object({
  trades: z.array(
    z.object({
      created_time: z.string(),
      taker_side: z.string().nullish(),
      yes_price_dollars: optionalDecimal,
      count_fp: optionalDecimal,
    }),
  ),
  cursor,
});

/** One Kalshi market, prices in dollars (0–1), sizes in contracts; null where Kalshi sent nothing. */
export interface KalshiMarket {
  ticker: string;
  event_ticker: string;
  title: string | null;
  /** What YES means (yes_sub_title, else subtitle). */
  outcome: string | null;
  /** Kalshi's lifecycle status: initialized, active, inactive, closed, determined, disputed, amended, finalized. */
  status: string;
  /** The outcome once determined: "yes", "no", "scalar" or "void"; null before ("" on the wire). */
  result: string | null;
  close_time: string | null;
  yes_bid: number | null;
  yes_bid_size: number | null;
  yes_ask: number | null;
  yes_ask_size: number | null;
  last_price: number | null;
  /** Contracts traded since listing. */
  volume: number | null;
  /** Contracts traded in the last 24 h. */
  volume_24h: number | null;
  /** Contracts outstanding. */
  open_interest: number | null;
  /** Kalshi's custom strike of a bucket market, e.g. { Cut: "25" } or { Hike: "0" }. */
  custom_strike: Record<string, string> | null;
}

export interface KalshiEvent {
  event_ticker: string;
  series_ticker: string | null;
  title: string | null;
  category: string | null;
  mutually_exclusive: boolean | null;
  markets: KalshiMarket[];
}

export interface KalshiTrade {
  time: string;
  /** The taker's side, "yes" or "no". */
  taker_side: string | null;
  /** YES price of the trade, dollars. */
  yes_price: number | null;
  /** Contracts. */
  count: number | null;
}

export interface KalshiBook {
  /** [price (dollars), size (contracts)] bids for YES, as Kalshi sent them (ascending). */
  yes: [number, number][];
  no: [number, number][];
}

export interface CategoryScan {
  events: KalshiEvent[];
  /** Open events read, of every category. */
  eventsScanned: number;
  pages: number;
  /** The walk reached the last page (false: it stopped at the page limit). */
  complete: boolean;
  metas: SourceMeta[];
}

export interface KalshiSettings {
  baseUrl: string;
  ttlS: number;
  scanPages: number;
}

const toEvent = (e: z.output<typeof eventSchema>): KalshiEvent => ({
  event_ticker: e.event_ticker,
  series_ticker: e.series_ticker ?? null,
  title: e.title ?? null,
  category: e.category ?? null,
  mutually_exclusive: e.mutually_exclusive ?? null,
  markets: e.markets ?? [],
});

function createKalshi(ctx: SourceContext<KalshiSettings>) {
  const { baseUrl, ttlS, scanPages } = ctx.settings;
  const get = <S extends z.ZodType>(path: string, schema: S, notFound?: string) =>
    ctx.fetch({ url: `${baseUrl}${path}`, schema, protocol: KALSHI_PROTOCOL, notFound, ttlS });
  const enc = encodeURIComponent;

  return {
    /** One market; 404 when Kalshi does not know the ticker. */
    async market(ticker: string): Promise<Sourced<KalshiMarket>> {
      const res = await get(`/markets/${enc(ticker)}`, marketOne, `kalshi has no market ${ticker}`);
      return { data: res.data.market, meta: res.meta };
    },

    /** Every market of an event (any status); 404 when Kalshi lists none. */
    async eventMarkets(eventTicker: string): Promise<Sourced<KalshiMarket[]>> {
      const notFound = `kalshi has no event ${eventTicker}`;
      const res = await get(`/markets?event_ticker=${enc(eventTicker)}&limit=1000`, marketList, notFound);
      if (res.data.markets.length === 0) throw new NotFoundError(notFound, KALSHI);
      return { data: res.data.markets, meta: res.meta };
    },

    /**
     * The open events of a category (case-insensitive), with their markets, from a walk over GET /events
     * of at most `scanPages` pages of 200 (KALSHI_CATEGORY_SCAN_PAGES); `complete` says whether it got to the end.
     */
    async openEventsOfCategory(category: string): Promise<CategoryScan> {
      const wanted = category.toLowerCase();
      const out: CategoryScan = { events: [], eventsScanned: 0, pages: 0, complete: false, metas: [] };
      const seen = new Set<string>();
      let next = '';
      while (out.pages < scanPages) {
        const page = await get(`/events?status=open&with_nested_markets=true&limit=${EVENTS_PAGE_SIZE}${next ? `&cursor=${enc(next)}` : ''}`, eventList);
        out.pages++;
        out.metas.push(page.meta);
        out.eventsScanned += page.data.events.length;
        for (const e of page.data.events) {
          // Pages are answered (and cached) at different moments, so an event may show up on two of them: keep the first.
          if (e.category?.toLowerCase() === wanted && !seen.has(e.event_ticker)) out.events.push(toEvent(e));
          seen.add(e.event_ticker);
        }
        // Only an empty cursor ends Kalshi's pagination: a page may hold fewer than `limit` events and still have more after it.
        next = page.data.cursor ?? '';
        if (!next) {
          out.complete = true;
          break;
        }
      }
      return out;
    },

    /** The open events of the Fed decision series (one per upcoming FOMC meeting), with their markets; one page covers them. */
    async fedDecisionEvents(): Promise<Sourced<KalshiEvent[]>> {
      const res = await get(`/events?series_ticker=${FED_DECISION_SERIES}&status=open&with_nested_markets=true&limit=${EVENTS_PAGE_SIZE}`, eventList);
      return { data: res.data.events.map(toEvent), meta: res.meta };
    },

    /** The bids of both sides to `depth` levels (1–100). Kalshi answers an empty book for an unknown ticker. */
    async orderbook(ticker: string, depth: number): Promise<Sourced<KalshiBook>> {
      const res = await get(`/markets/${enc(ticker)}/orderbook?depth=${depth}`, orderbookSchema, `kalshi has no market ${ticker}`);
      const book = res.data.orderbook_fp;
      return { data: { yes: book.yes_dollars ?? [], no: book.no_dollars ?? [] }, meta: res.meta };
    },

    /** The newest `limit` (1–1000) trades of a market, newest first. */
    async trades(ticker: string, limit: number): Promise<Sourced<KalshiTrade[]>> {
      const res = await get(`/markets/trades?ticker=${enc(ticker)}&limit=${limit}`, tradesSchema, `kalshi has no market ${ticker}`);
      const trades = res.data.trades.map((t) => ({ time: t.created_time, taker_side: t.taker_side ?? null, yes_price: t.yes_price_dollars, count: t.count_fp }));
      return { data: trades, meta: res.meta };
    },
  };
}

export type Kalshi = ReturnType<typeof createKalshi>;

export const kalshiSource = defineSource({
  key: 'kalshi',
  name: KALSHI,
  title: 'Kalshi Trade API v2',
  docs: 'https://docs.kalshi.com/api-reference/market/get-markets',
  notes:
    'No key for market data. Anonymous limit undocumented (about 20 requests/s, bursts of 60, observed); 429 without Retry-After. ' +
    'Prices are *_dollars strings, sizes *_fp strings; order books are bids only. /events has no category filter, so a category ' +
    'is found by walking open events (at most KALSHI_CATEGORY_SCAN_PAGES pages of 200).',
  env: {
    KALSHI_BASE_URL: env.url('https://api.elections.kalshi.com/trade-api/v2', 'Kalshi Trade API v2 (public market data; https://external-api.kalshi.com/trade-api/v2 serves it too).'),
    CACHE_TTL_PREDMKT_S: env.ttl(15, 'Kalshi markets, events, order books and trades'),
    KALSHI_CATEGORY_SCAN_PAGES: env.int(1, 50, 10, 'Most pages of 200 open events walked to rank a Kalshi category (each page is one call).'),
  },
  settings: (e) => ({ baseUrl: e.KALSHI_BASE_URL, ttlS: e.CACHE_TTL_PREDMKT_S, scanPages: e.KALSHI_CATEGORY_SCAN_PAGES }),
  create: createKalshi,
});

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

/** Kalshi's event ticker of the Fed decision on an FOMC decision date: 2026-10-28 → KXFEDDECISION-26OCT. */
export function fedDecisionEventTicker(decisionDate: string): string {
  return `${FED_DECISION_SERIES}-${decisionDate.slice(2, 4)}${MONTHS[Number(decisionDate.slice(5, 7)) - 1]}`;
}
