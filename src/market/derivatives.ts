// Derivatives: funding and open interest across Binance USD-M and Bybit linear perpetuals,
// Binance's long/short ratios, and Hyperliquid's perpetual context. The formulas live in
// src/analytics/derivatives.ts; this module fetches, picks fields, and wraps the envelope.
import { z } from 'zod';
import { defineRoute, type RouteDef } from '../catalog/route.ts';
import { envelope, type SourceMeta } from '../http/envelope.ts';
import { AppError, NotFoundError, UpstreamError } from '../http/errors.ts';
import {
  aggregateOiChange24h,
  BIAS_LONG_ABOVE,
  BIAS_SHORT_BELOW,
  changePct,
  clean,
  FUNDING_BASIS_HOURS,
  fundingBias,
  inferIntervalHours,
  per8h,
  pointsFor24h,
  product,
  sumGiven,
  toPct,
  weightedAverage,
  windowAverage,
  type OiPoint,
} from '../analytics/derivatives.ts';
import { BINANCE_FUTURES, RATIO_PERIODS, type RatioPoint, type TakerPoint } from '../sources/binance-futures.ts';
import { BYBIT } from '../sources/bybit.ts';
import { HYPERLIQUID } from '../sources/hyperliquid.ts';
import { isoFromMs } from '../sources/wire.ts';
import type { Sources } from '../sources/index.ts';
import type { MarketContext } from './routes.ts';
import { binancePair, cryptoSymbolParam, parseCryptoSymbol } from './symbols.ts';

const TAG = 'Derivatives';

/** Settlements asked for to cover 7 days: 21 at 8 h, 42 at 4 h, 168 at 1 h (Bybit's maximum is 200). */
const FUNDING_HISTORY_LIMIT = 200;
/** Hourly open-interest points asked for: the newest and the one 24 h before it. */
const OI_HISTORY_POINTS = 25;

const isoOrNull = (ms: number | null) => (ms === null ? null : isoFromMs(ms));
const pctText = (rate: number) => `${rate >= 0 ? '+' : ''}${clean(rate * 100)}%`;

// ---------------------------------------------------------------- parameters

const PERIOD_LIST = RATIO_PERIODS.join(', ');
const LIMIT_MESSAGE = 'must be a whole number from 1 to 500';

const fundingOiQuery = z.object({ symbol: cryptoSymbolParam });

const longShortQuery = z.object({
  symbol: cryptoSymbolParam,
  period: z
    .enum(RATIO_PERIODS, { error: () => `must be one of ${PERIOD_LIST}` })
    .default('1h')
    .describe(`Bucket length of each ratio point: ${PERIOD_LIST}. Binance serves the latest 30 days only.`),
  limit: z.coerce
    .number({ error: () => LIMIT_MESSAGE })
    .int(LIMIT_MESSAGE)
    .min(1, LIMIT_MESSAGE)
    .max(500, LIMIT_MESSAGE)
    .default(30)
    .describe('Points of history per series, 1-500 (Binance\'s maximum), newest included.'),
});

const perpdexQuery = z.object({
  symbol: cryptoSymbolParam.describe(
    'Hyperliquid coin (BTC, ETH, SOL, kPEPE), case-insensitive. A USD/USDT/USDC pair such as BTC-USD or BTCUSDT is read as its base asset.',
  ),
});

// ---------------------------------------------------------------- response schemas (documentation)

const isoField = (what: string) => z.string().describe(`${what}, ISO-8601 UTC`);
const num = (what: string) => z.number().nullable().describe(what);

const venueRow = z.object({
  venue: z.enum([BINANCE_FUTURES, BYBIT]),
  symbol: z.string(),
  funding_rate: num('Current funding rate of the venue, a fraction per funding interval (0.0001 = 0.01 %)'),
  funding_interval_hours: num('Hours between settlements: stated by the venue, else inferred from the two newest settlements'),
  next_funding_time: isoField('Next settlement').nullable(),
  mark_price: num('Mark price, quote currency'),
  open_interest: num('Open interest, base-asset units'),
  open_interest_usd: num('Binance: open_interest × mark_price; Bybit: its openInterestValue. Quote currency (USDT/USDC) taken as USD'),
  funding_rate_avg_7d: num('Mean of the settled funding rates with time in (newest − 7 days, newest], per funding interval'),
  funding_rate_avg_7d_samples: z.number().int().describe('Settlements averaged (21 at an 8 h interval)'),
  open_interest_change_24h_pct: num('Change of open interest in base-asset units between the newest hourly point and the point 24 h before it'),
});

const fundingOiData = z.object({
  symbol: z.string().describe('BASE/QUOTE of the perpetual (BTC/USDT)'),
  venue_symbol: z.string().describe('Contract asked of both venues (Binance/Bybit spelling, e.g. BTCUSDT)'),
  venues: z.array(venueRow),
  venues_unavailable: z.array(z.object({ venue: z.string(), error: z.string() })).describe('Venues that failed or do not list the contract'),
  aggregate: z.object({
    funding_rate: num('Σ(funding per 8 h × open_interest_usd) / Σ open_interest_usd over venues; per 8 h'),
    funding_rate_avg_7d: num('Same weighting of each venue\'s 7-day average, per 8 h'),
    funding_interval_hours: z.literal(FUNDING_BASIS_HOURS).describe('Aggregate funding rates are restated per 8 h'),
    open_interest_usd: num('Σ open_interest_usd'),
    open_interest_change_24h_pct: num('(Σ OI now − Σ OI 24 h ago) / Σ OI 24 h ago × 100, base-asset units, over the venues with both hourly points'),
    open_interest_change_24h_venues: z.array(z.string()).describe('Venues that entered open_interest_change_24h_pct'),
  }),
  bias: z
    .object({ signal: z.enum(['long', 'short', 'neutral']), reason: z.string() })
    .nullable()
    .describe(`From aggregate.funding_rate: > ${pctText(BIAS_LONG_ABOVE)} per 8 h → long (longs crowded), < ${pctText(BIAS_SHORT_BELOW)} → short, else neutral; null when unknown`),
});

const ratioRow = z.object({
  long_pct: z.number().describe('Binance longAccount × 100'),
  short_pct: z.number().describe('Binance shortAccount × 100'),
  ratio: z.number().describe('Binance longShortRatio, as sent'),
  time: isoField('Bucket time'),
});
const takerRow = z.object({
  buy_volume: z.number().describe('Taker buy volume, base-asset units'),
  sell_volume: z.number().describe('Taker sell volume, base-asset units'),
  ratio: z.number().describe('Binance buySellRatio, as sent'),
  time: isoField('Bucket time'),
});
const longShortData = z.object({
  symbol: z.string().describe('BASE/QUOTE of the perpetual (BTC/USDT)'),
  venue_symbol: z.string().describe('Binance contract (BTCUSDT)'),
  venue: z.literal(BINANCE_FUTURES),
  period: z.enum(RATIO_PERIODS),
  global_accounts: ratioRow.nullable().describe('All accounts: share of accounts net long / net short (newest point)'),
  top_trader_accounts: ratioRow.nullable().describe('Top 20 % of traders by margin: share of accounts net long / short'),
  top_trader_positions: ratioRow.nullable().describe('Top 20 % of traders by margin: share of position size long / short'),
  taker: takerRow.nullable().describe('Taker buy vs sell volume over the newest bucket'),
  history: z.object({
    global_accounts: z.array(ratioRow),
    top_trader_accounts: z.array(ratioRow),
    top_trader_positions: z.array(ratioRow),
    taker: z.array(takerRow),
  }).describe('Each series oldest first; the last point is the one shown above'),
});

const perpdexData = z.object({
  symbol: z.string().describe('Hyperliquid coin name as the venue spells it'),
  venue: z.literal(HYPERLIQUID),
  funding_rate_hourly: num('Current hourly funding rate, a fraction'),
  funding_annualized_pct: num('funding_rate_hourly × 24 × 365 × 100 (simple, not compounded)'),
  open_interest: num('Open interest in coins, as Hyperliquid reports it'),
  open_interest_usd: num('open_interest × mark_price'),
  mark_price: num('Mark price, USD'),
  oracle_price: num('Oracle price, USD'),
  mid_price: num('Order-book mid; null when the venue gives none'),
  premium: num('Venue premium (fraction); null when the venue gives none'),
  volume_24h_usd: num('24 h notional volume (dayNtlVlm), USD'),
  prev_day_price: num('Price 24 h ago (prevDayPx)'),
  change_24h_pct: num('(mark_price − prev_day_price) / prev_day_price × 100'),
});

// ---------------------------------------------------------------- helpers

/** Awaits every promise; rethrows the first failure in argument order (deterministic). */
async function settledInOrder<T extends readonly unknown[]>(promises: readonly [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T> {
  const settled = await Promise.allSettled(promises);
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** One entry per provider: the oldest answer used (largest age), cached only if every answer was. */
export function mergeSourceMetas(metas: SourceMeta[]): SourceMeta[] {
  const byProvider = new Map<string, SourceMeta>();
  for (const m of metas) {
    const seen = byProvider.get(m.provider);
    if (!seen) {
      byProvider.set(m.provider, { ...m });
      continue;
    }
    const older = m.fetched_at < seen.fetched_at ? m : seen;
    byProvider.set(m.provider, { ...older, cached: seen.cached && m.cached });
  }
  return [...byProvider.values()];
}

// ---------------------------------------------------------------- funding-oi venues

type VenueRow = z.output<typeof venueRow>;

interface VenueResult {
  row: VenueRow;
  oiSeries: OiPoint[];
  metas: SourceMeta[];
}

function venueFundingStats(history: { time: number; funding_rate: number }[]) {
  const avg = windowAverage(history.map((h) => ({ time: h.time, rate: h.funding_rate })));
  return { average: avg?.average ?? null, count: avg?.count ?? 0, inferredInterval: inferIntervalHours(history.map((h) => h.time)) };
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
      funding_rate_avg_7d: stats.average,
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
  return {
    row: {
      venue: BYBIT,
      symbol: t.symbol,
      funding_rate: t.funding_rate,
      funding_interval_hours: t.funding_interval_hours ?? stats.inferredInterval,
      next_funding_time: isoOrNull(t.next_funding_time),
      mark_price: t.mark_price,
      open_interest: t.open_interest,
      open_interest_usd: t.open_interest_value ?? product(t.open_interest, t.mark_price),
      funding_rate_avg_7d: stats.average,
      funding_rate_avg_7d_samples: stats.count,
      open_interest_change_24h_pct: oiChange(oiSeries),
    },
    oiSeries,
    metas: [ticker.meta, funding.meta, oiHist.meta],
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
  const weighted = (pick: (r: VenueRow) => number | null) =>
    weightedAverage(rows.map(({ row }) => ({ value: per8h(pick(row), row.funding_interval_hours), weight: row.open_interest_usd })));
  const change = aggregateOiChange24h(rows.map((r) => ({ venue: r.row.venue, series: r.oiSeries })));
  return {
    funding_rate: weighted((r) => r.funding_rate),
    funding_rate_avg_7d: weighted((r) => r.funding_rate_avg_7d),
    funding_interval_hours: FUNDING_BASIS_HOURS,
    open_interest_usd: sumGiven(rows.map((r) => r.row.open_interest_usd)),
    open_interest_change_24h_pct: change.pct,
    open_interest_change_24h_venues: change.venues,
  };
}

// ---------------------------------------------------------------- long/short ratio

const toRatioRow = (p: RatioPoint) => ({ long_pct: toPct(p.long_fraction), short_pct: toPct(p.short_fraction), ratio: p.long_short_ratio, time: isoFromMs(p.time) });
const toTakerRow = (p: TakerPoint) => ({ buy_volume: p.buy_volume, sell_volume: p.sell_volume, ratio: p.buy_sell_ratio, time: isoFromMs(p.time) });

// ---------------------------------------------------------------- routes

const USD_QUOTES = new Set(['USD', 'USDT', 'USDC']);

export function derivativesRoutes(ctx: MarketContext): RouteDef[] {
  const { sources } = ctx;

  const fundingOi = defineRoute({
    path: '/v1/funding-oi',
    summary: 'Funding rates and open interest across Binance and Bybit perpetuals',
    description:
      'Per venue (Binance USD-M, Bybit linear): current funding rate and interval, next settlement, mark price, open interest in coins and USD, ' +
      'the mean of the settlements of the last 7 days and the 24 h open-interest change. Aggregate: funding restated per 8 h and weighted by ' +
      'open_interest_usd, summed open interest, and the 24 h change of summed open interest in coins (hourly points, newest vs 24 h before). ' +
      `Bias from the aggregate funding per 8 h: above ${pctText(BIAS_LONG_ABOVE)} → "long" (longs crowded, paying three times the +0.01 % baseline), ` +
      `below ${pctText(BIAS_SHORT_BELOW)} → "short" (shorts pay longs), otherwise "neutral"; the reason states the numbers. ` +
      'A venue that fails or does not list the contract is named in venues_unavailable; 404 when neither lists it, 502 when neither answers.',
    tag: TAG,
    query: fundingOiQuery,
    data: fundingOiData,
    example: { symbol: 'BTC' },
    handler: async (req) => {
      const sym = parseCryptoSymbol(req.query.symbol);
      const pair = binancePair(sym);
      const { ok, unavailable } = await loadVenues(sources, pair);
      const agg = aggregate(ok);
      return envelope(
        {
          symbol: `${sym.base}/${sym.quote}`,
          venue_symbol: pair,
          venues: ok.map((v) => v.row),
          venues_unavailable: unavailable,
          aggregate: agg,
          bias: fundingBias(agg.funding_rate, agg.funding_rate_avg_7d, agg.open_interest_change_24h_pct),
        },
        mergeSourceMetas(ok.flatMap((v) => v.metas)),
      );
    },
  });

  const longShortRatio = defineRoute({
    path: '/v1/long-short-ratio',
    summary: 'Long/short ratios and taker volume of a Binance USD-M perpetual',
    description:
      'From Binance futures data: all accounts (globalLongShortAccountRatio), top traders by accounts (topLongShortAccountRatio) and by positions ' +
      '(topLongShortPositionRatio), each as long_pct/short_pct (Binance sends fractions such as 0.7069; here × 100 = 70.69) and Binance\'s ratio as sent; ' +
      'taker buy/sell volume (takerlongshortRatio, base-asset units). The newest point of each series, plus `history` oldest first. ' +
      'Binance serves the latest 30 days only.',
    tag: TAG,
    query: longShortQuery,
    data: longShortData,
    example: { symbol: 'BTCUSDT', period: '1h', limit: '30' },
    handler: async (req) => {
      const { period, limit } = req.query;
      const sym = parseCryptoSymbol(req.query.symbol);
      const pair = binancePair(sym);
      const bf = sources.binanceFutures;
      const [global, topAccounts, topPositions, taker] = await settledInOrder([
        bf.longShortRatio('globalLongShortAccountRatio', pair, period, limit),
        bf.longShortRatio('topLongShortAccountRatio', pair, period, limit),
        bf.longShortRatio('topLongShortPositionRatio', pair, period, limit),
        bf.takerLongShortRatio(pair, period, limit),
      ]);
      if ([global, topAccounts, topPositions, taker].every((s) => s.data.length === 0)) {
        throw new NotFoundError(`${BINANCE_FUTURES} has no long/short data for '${pair}' at period ${period}`, BINANCE_FUTURES);
      }
      const history = {
        global_accounts: global.data.map(toRatioRow),
        top_trader_accounts: topAccounts.data.map(toRatioRow),
        top_trader_positions: topPositions.data.map(toRatioRow),
        taker: taker.data.map(toTakerRow),
      };
      return envelope(
        {
          symbol: `${sym.base}/${sym.quote}`,
          venue_symbol: pair,
          venue: BINANCE_FUTURES,
          period,
          global_accounts: history.global_accounts.at(-1) ?? null,
          top_trader_accounts: history.top_trader_accounts.at(-1) ?? null,
          top_trader_positions: history.top_trader_positions.at(-1) ?? null,
          taker: history.taker.at(-1) ?? null,
          history,
        },
        mergeSourceMetas([global.meta, topAccounts.meta, topPositions.meta, taker.meta]),
      );
    },
  });

  const perpdex = defineRoute({
    path: '/v1/perpdex',
    summary: 'Hyperliquid perpetual: funding, open interest, prices, volume',
    description:
      'One Hyperliquid perpetual from metaAndAssetCtxs: hourly funding and funding_annualized_pct = funding × 24 × 365 × 100, open interest in coins ' +
      'and open_interest_usd = open interest × mark price, mark/oracle/mid prices, premium, 24 h notional volume, the price 24 h ago and ' +
      'change_24h_pct = (mark − prevDayPx) / prevDayPx × 100. mid_price and premium are null when the venue gives none. ' +
      'Unknown or delisted coins answer 404.',
    tag: TAG,
    query: perpdexQuery,
    data: perpdexData,
    example: { symbol: 'BTC' },
    handler: async (req) => {
      const sym = parseCryptoSymbol(req.query.symbol);
      if (sym.explicitQuote && !USD_QUOTES.has(sym.quote)) {
        throw new NotFoundError(`${HYPERLIQUID} perpetuals are quoted in USD; there is no ${sym.base}/${sym.quote} perpetual`, HYPERLIQUID);
      }
      const { data: assets, meta } = await sources.hyperliquid.perpAssets();
      const asset = assets.find((a) => a.name === sym.base) ?? assets.find((a) => a.name.toUpperCase() === sym.base);
      if (!asset) throw new NotFoundError(`${HYPERLIQUID} lists no perpetual '${sym.base}'`, HYPERLIQUID);
      if (asset.isDelisted) throw new NotFoundError(`${HYPERLIQUID} perpetual '${asset.name}' is delisted`, HYPERLIQUID);
      const c = asset.ctx;
      return envelope(
        {
          symbol: asset.name,
          venue: HYPERLIQUID,
          funding_rate_hourly: c.funding,
          funding_annualized_pct: c.funding === null ? null : clean(c.funding * 24 * 365 * 100),
          open_interest: c.openInterest,
          open_interest_usd: product(c.openInterest, c.markPx),
          mark_price: c.markPx,
          oracle_price: c.oraclePx,
          mid_price: c.midPx,
          premium: c.premium,
          volume_24h_usd: c.dayNtlVlm,
          prev_day_price: c.prevDayPx,
          change_24h_pct: changePct(c.prevDayPx, c.markPx),
        },
        [meta],
      );
    },
  });

  return [fundingOi, longShortRatio, perpdex] as RouteDef[];
}
