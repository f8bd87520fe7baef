// /v1/funding-oi: funding and open interest across Binance USD-M and Bybit linear perpetuals, with an
// OI-weighted aggregate and a positioning bias. The formulas live in src/analytics/derivatives.ts;
// this file fetches, picks fields, and wraps the envelope.
import { z } from 'zod';
import {
  aggregateOiChange24h,
  BIAS_LONG_ABOVE,
  BIAS_SHORT_BELOW,
  changePct,
  FUNDING_BASIS_HOURS,
  fundingBias,
  fundingPaidPer8h,
  inferIntervalHours,
  per8h,
  pointsFor24h,
  product,
  sumGiven,
  weightedAverage,
  type OiPoint,
} from '../../analytics/derivatives.ts';
import { signedPct } from '../../analytics/numbers.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas, type SourceMeta } from '../../upstream/envelope.ts';
import { AppError, NotFoundError, UpstreamError } from '../../lib/errors.ts';
import { settledInOrder } from '../../lib/settled-in-order.ts';
import { BINANCE_FUTURES } from '../../sources/binance-futures.ts';
import { BYBIT } from '../../sources/bybit.ts';
import type { Sources } from '../../sources/index.ts';
import { isoFromMs } from '../../sources/wire.ts';
import { binancePair, cryptoSymbolParam } from '../../params/symbols.ts';
import { resolveCryptoSymbol } from '../resolve-symbol.ts';
import { isoField, numberOrNull } from '../../catalog/fields.ts';

/** Settlements asked for to cover 7 days: 21 at 8 h, 42 at 4 h, 168 at 1 h (Bybit's maximum is 200). */
const FUNDING_HISTORY_LIMIT = 200;
/** Hourly open-interest points asked for: the newest and the one 24 h before it. */
const OI_HISTORY_POINTS = 25;

const isoOrNull = (ms: number | null) => (ms === null ? null : isoFromMs(ms));

const query = z.object({ symbol: cryptoSymbolParam });

const venueRow = z.object({
  venue: z.enum([BINANCE_FUTURES, BYBIT]),
  symbol: z.string(),
  funding_rate: numberOrNull('Current funding rate of the venue, a fraction per funding interval (0.0001 = 0.01 %)'),
  funding_interval_hours: numberOrNull(
    'Hours between settlements: stated by the venue (Binance fundingInfo, else its default 8; Bybit fundingIntervalHour), else the typical spacing of the newest settlements rounded to the hour',
  ),
  next_funding_time: isoField('Next settlement').nullable(),
  mark_price: numberOrNull('Mark price, quote currency'),
  open_interest: numberOrNull('Open interest, one side (longs = shorts), base-asset units. Bybit: singleOpenInterest, else an older answer\'s openInterest (meta.bybit_open_interest_fields)'),
  open_interest_usd: numberOrNull(
    'One side, quote currency (USDT/USDC) taken as USD. Binance: open_interest × mark_price; Bybit: singleOpenInterestValue (else an older answer\'s openInterestValue, else open_interest × mark_price)',
  ),
  funding_rate_avg_7d: numberOrNull(
    'Funding paid over the 7 days ending at the newest settlement, per 8 h: Σ settled rates with time in (newest − 7 days, newest] × 8 / 168; null when the history does not reach back 7 days',
  ),
  funding_rate_avg_7d_samples: z.number().int().describe('Settlements summed (21 at an 8 h interval, 168 at 1 h)'),
  open_interest_change_24h_pct: numberOrNull('Change of open interest in base-asset units between the newest hourly point and the point 24 h before it'),
});

const data = z.object({
  symbol: z.string().describe('BASE/QUOTE of the perpetual (BTC/USDT)'),
  venue_symbol: z.string().describe('Contract asked of both venues (Binance/Bybit spelling, e.g. BTCUSDT)'),
  currency: z.string().describe('Quote (margin) currency of the contract: mark prices are in it; *_usd values take it as USD'),
  venues: z.array(venueRow),
  venues_unavailable: z.array(z.object({ venue: z.string(), error: z.string() })).describe('Venues that failed or do not list the contract'),
  aggregate: z.object({
    funding_rate: numberOrNull('Σ(funding per 8 h × open_interest_usd) / Σ open_interest_usd over venues; per 8 h'),
    funding_rate_avg_7d: numberOrNull('Same weighting of each venue\'s funding_rate_avg_7d (already per 8 h)'),
    funding_interval_hours: z.literal(FUNDING_BASIS_HOURS).describe('Aggregate funding rates are restated per 8 h'),
    open_interest_usd: numberOrNull('Σ open_interest_usd'),
    open_interest_change_24h_pct: numberOrNull('(Σ OI now − Σ OI 24 h ago) / Σ OI 24 h ago × 100, base-asset units, over the venues with both hourly points'),
    open_interest_change_24h_venues: z.array(z.string()).describe('Venues that entered open_interest_change_24h_pct'),
  }),
  bias: z
    .object({ signal: z.enum(['long', 'short', 'neutral']), reason: z.string() })
    .nullable()
    .describe(`From aggregate.funding_rate: > ${signedPct(BIAS_LONG_ABOVE)} per 8 h → long (longs crowded), < ${signedPct(BIAS_SHORT_BELOW)} → short, else neutral; null when unknown`),
});

type VenueRow = z.output<typeof venueRow>;

/** The Bybit fields the open-interest figures were read from (its API moved from one side to both sides). */
interface BybitOpenInterestFields {
  open_interest: string | null;
  open_interest_usd: string | null;
  /** Fields of the hourly points (one, unless Bybit changed format within the series). */
  history: string[];
}

interface VenueResult {
  row: VenueRow;
  oiSeries: OiPoint[];
  metas: SourceMeta[];
  /** Bybit only. */
  oiFields?: BybitOpenInterestFields;
}

function venueFundingStats(history: { time: number; funding_rate: number }[]) {
  const paid = fundingPaidPer8h(history.map((h) => ({ time: h.time, rate: h.funding_rate })));
  return { rate8h: paid?.rate8h ?? null, count: paid?.count ?? 0, inferredInterval: inferIntervalHours(history.map((h) => h.time)) };
}

function oiChange(series: OiPoint[]): number | null {
  const pts = pointsFor24h(series);
  return pts ? changePct(pts.dayAgo.openInterest, pts.now.openInterest) : null;
}

async function binanceVenue(sources: Sources, pair: string): Promise<VenueResult> {
  const bf = sources.binanceFutures;
  const [premium, oi, funding, oiHist] = await settledInOrder([
    bf.premiumIndex(pair),
    bf.openInterest(pair),
    bf.fundingRateHistory(pair, FUNDING_HISTORY_LIMIT),
    bf.openInterestHist(pair, '1h', OI_HISTORY_POINTS),
  ]);
  const stats = venueFundingStats(funding.data);
  const oiSeries = oiHist.data.map((p) => ({ time: p.time, openInterest: p.sum_open_interest }));
  return {
    row: {
      venue: BINANCE_FUTURES,
      symbol: premium.data.symbol,
      funding_rate: premium.data.last_funding_rate,
      funding_interval_hours: premium.data.funding_interval_hours ?? stats.inferredInterval,
      next_funding_time: isoOrNull(premium.data.next_funding_time),
      mark_price: premium.data.mark_price,
      open_interest: oi.data.open_interest,
      open_interest_usd: product(oi.data.open_interest, premium.data.mark_price),
      funding_rate_avg_7d: stats.rate8h,
      funding_rate_avg_7d_samples: stats.count,
      open_interest_change_24h_pct: oiChange(oiSeries),
    },
    oiSeries,
    metas: [premium.meta, oi.meta, funding.meta, oiHist.meta],
  };
}

async function bybitVenue(sources: Sources, pair: string): Promise<VenueResult> {
  const [ticker, funding, oiHist] = await settledInOrder([
    sources.bybit.linearTicker(pair),
    sources.bybit.fundingHistory(pair, FUNDING_HISTORY_LIMIT),
    sources.bybit.openInterestHistory(pair, '1h', OI_HISTORY_POINTS),
  ]);
  const t = ticker.data;
  const stats = venueFundingStats(funding.data);
  const oiSeries = oiHist.data.map((p) => ({ time: p.time, openInterest: p.open_interest }));
  const usd = t.open_interest_value ?? product(t.open_interest, t.mark_price);
  return {
    row: {
      venue: BYBIT,
      symbol: t.symbol,
      funding_rate: t.funding_rate,
      funding_interval_hours: t.funding_interval_hours ?? stats.inferredInterval,
      next_funding_time: isoOrNull(t.next_funding_time),
      mark_price: t.mark_price,
      open_interest: t.open_interest,
      open_interest_usd: usd,
      funding_rate_avg_7d: stats.rate8h,
      funding_rate_avg_7d_samples: stats.count,
      open_interest_change_24h_pct: oiChange(oiSeries),
    },
    oiSeries,
    metas: [ticker.meta, funding.meta, oiHist.meta],
    oiFields: {
      open_interest: t.open_interest_field,
      open_interest_usd: t.open_interest_value_field ?? (usd !== null ? `${t.open_interest_field} × markPrice` : null),
      history: [...new Set(oiHist.data.map((p) => p.field))],
    },
  };
}

const FUNDING_VENUES = [
  { venue: BINANCE_FUTURES, load: binanceVenue },
  { venue: BYBIT, load: bybitVenue },
] as const;

/** Venues that answered; throws 404 when every venue says the contract is unknown, else 502 when none answered. */
async function loadVenues(sources: Sources, pair: string) {
  const settled = await Promise.allSettled(FUNDING_VENUES.map((v) => v.load(sources, pair)));
  const ok: VenueResult[] = [];
  const unavailable: { venue: string; error: string }[] = [];
  const failures: AppError[] = [];
  settled.forEach((s, i) => {
    const venue = FUNDING_VENUES[i]!.venue;
    if (s.status === 'fulfilled') return void ok.push(s.value);
    if (!(s.reason instanceof AppError)) throw s.reason;
    unavailable.push({ venue, error: s.reason.message });
    if (!(s.reason instanceof NotFoundError)) failures.push(s.reason);
  });
  if (ok.length > 0) return { ok, unavailable };
  const all = unavailable.map((u) => u.error).join('; ');
  if (failures.length === 0) throw new NotFoundError(`no venue lists a perpetual '${pair}': ${all}`, BINANCE_FUTURES);
  const first = failures[0]!;
  if (first instanceof UpstreamError) throw new UpstreamError(first.source!, first.failure, all, { status: first.upstreamStatus });
  throw first;
}

function aggregate(rows: VenueResult[]) {
  const weighted = (value8h: (r: VenueRow) => number | null) => weightedAverage(rows.map(({ row }) => ({ value: value8h(row), weight: row.open_interest_usd })));
  const change = aggregateOiChange24h(rows.map((r) => ({ venue: r.row.venue, series: r.oiSeries })));
  return {
    funding_rate: weighted((r) => per8h(r.funding_rate, r.funding_interval_hours)),
    funding_rate_avg_7d: weighted((r) => r.funding_rate_avg_7d),
    funding_interval_hours: FUNDING_BASIS_HOURS as typeof FUNDING_BASIS_HOURS,
    open_interest_usd: sumGiven(rows.map((r) => r.row.open_interest_usd)),
    open_interest_change_24h_pct: change.pct,
    open_interest_change_24h_venues: change.venues,
  };
}

export const fundingOi = defineRoute({
  path: '/v1/funding-oi',
  summary: 'Funding rates and open interest across Binance and Bybit perpetuals',
  description:
    'Per venue (Binance USD-M, Bybit linear): current funding rate and interval, next settlement, mark price, open interest (one side) in coins and USD, ' +
    'the funding paid over the last 7 days per 8 h (Σ settled rates × 8 / 168) and the 24 h open-interest change. Aggregate: funding restated per 8 h and weighted by ' +
    'open_interest_usd, summed open interest, and the 24 h change of summed open interest in coins (hourly points, newest vs 24 h before). ' +
    'Bybit open interest is its single-side field (singleOpenInterest) when sent; meta.bybit_open_interest_fields names the fields read. ' +
    `Bias from the aggregate funding per 8 h: above ${signedPct(BIAS_LONG_ABOVE)} → "long" (longs crowded, paying three times the +0.01 % baseline), ` +
    `below ${signedPct(BIAS_SHORT_BELOW)} → "short" (shorts pay longs), otherwise "neutral"; the reason states the numbers. ` +
    'A venue that fails or does not list the contract is named in venues_unavailable; 404 when neither lists it, 502 when neither answers.',
  tag: 'Derivatives',
  access: 'paid',
  maxStale: 'DERIVATIVES_STALE_S',
  query,
  data,
  example: { symbol: 'BTC' },
  handler: async (req, { sources, cryptoListings }) => {
    const sym = await resolveCryptoSymbol(cryptoListings, req.query.symbol);
    const pair = binancePair(sym);
    const { ok, unavailable } = await loadVenues(sources, pair);
    const agg = aggregate(ok);
    const bybitFields = ok.find((v) => v.oiFields)?.oiFields;
    return envelope(
      {
        symbol: `${sym.base}/${sym.quote}`,
        venue_symbol: pair,
        currency: sym.quote,
        venues: ok.map((v) => v.row),
        venues_unavailable: unavailable,
        aggregate: agg,
        bias: fundingBias(agg.funding_rate, agg.funding_rate_avg_7d, agg.open_interest_change_24h_pct),
      },
      mergeSourceMetas(ok.flatMap((v) => v.metas)),
      bybitFields ? { bybit_open_interest_fields: bybitFields } : {},
    );
  },
});
