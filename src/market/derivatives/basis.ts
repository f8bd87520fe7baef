// /v1/basis: Binance spot vs the Binance USD-M perpetual of the same pair, with the funding carry.
// The two legs are compared, so both are fetched with the last-price TTL (CACHE_TTL_PRICE_S): they are at
// most that far apart in time (meta.legs shows each leg's time), never a fresh spot against a 30 s mark.
import { z } from 'zod';
import { inferIntervalHours } from '../../analytics/derivatives.ts';
import { clean } from '../../analytics/numbers.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, type SourceMeta } from '../../upstream/envelope.ts';
import { settledInOrder } from '../../lib/settled-in-order.ts';
import type { Sources } from '../../sources/index.ts';
import { isoFromMs } from '../../sources/wire.ts';
import { binancePair, cryptoSymbolParam } from '../../params/symbols.ts';
import { resolveCryptoSymbol } from '../resolve-symbol.ts';

const HOURS_PER_YEAR = 24 * 365;
/** Settlements read to infer the interval when fundingInfo cannot be read. */
const INTERVAL_SETTLEMENTS = 10;

/**
 * Hours between settlements when fundingInfo could not be read: the typical spacing of the newest
 * settlements (rounded to the hour, they carry ms jitter); null when those cannot be read either.
 */
async function inferredInterval(sources: Sources, pair: string): Promise<number | null> {
  try {
    const { data } = await sources.binanceFutures.fundingRateHistory(pair, INTERVAL_SETTLEMENTS);
    return inferIntervalHours(data.map((s) => s.time));
  } catch {
    return null; // the carry is then unknown; the basis itself does not need it
  }
}

/** Each leg's time: when this server received it and the venue's own time of the figure. */
function legs(spot: SourceMeta, spotAsOf: string, perp: SourceMeta, perpAsOf: string) {
  return {
    spot: { provider: spot.provider, fetched_at: spot.fetched_at, as_of: spotAsOf },
    perp: { provider: perp.provider, fetched_at: perp.fetched_at, as_of: perpAsOf },
    fetched_apart_s: Math.abs(Date.parse(spot.fetched_at) - Date.parse(perp.fetched_at)) / 1000,
  };
}

const basisData = z.object({
  symbol: z.string().describe('BASE/QUOTE (BTC/USDT)'),
  venue_symbol: z.string().describe('Binance spot pair and USD-M contract (BTCUSDT)'),
  currency: z.string().describe('Quote currency of the prices and the basis (USDT)'),
  spot_price: z.number().describe('Binance spot last price (24 h ticker lastPrice)'),
  perp_mark_price: z.number().describe('Binance USD-M mark price (premiumIndex markPrice)'),
  index_price: z.number().nullable().describe('Binance USD-M index price (premiumIndex indexPrice)'),
  basis: z.number().describe('perp_mark_price − spot_price, quote currency'),
  basis_pct: z.number().describe('basis / spot_price × 100'),
  funding_rate: z.number().nullable().describe('Current funding rate per interval, a fraction (premiumIndex lastFundingRate)'),
  funding_interval_hours: z
    .number()
    .nullable()
    .describe('Hours between settlements (fundingInfo; default 8); when fundingInfo cannot be read, the typical spacing of the newest settlements; null when unknown'),
  annualized_carry_pct: z
    .number()
    .nullable()
    .describe('funding_rate × (24 × 365 / funding_interval_hours) × 100: what holding the perp short against spot earns per year at this rate'),
  spot_as_of: z.string().describe('Binance spot ticker closeTime, ISO-8601'),
  perp_as_of: z.string().describe('Binance premiumIndex time, ISO-8601'),
});

const basisQuery = z.object({ symbol: cryptoSymbolParam });

export const basis = defineRoute({
  path: '/v1/basis',
  summary: 'Spot–perpetual basis and annualized funding carry (Binance)',
  description:
    'Binance spot last price against the Binance USD-M perpetual mark price of the same pair: basis = mark − spot, basis_pct = basis / spot × 100, ' +
    'and annualized_carry_pct = funding rate per interval × intervals per year (24 × 365 / interval hours) × 100. ' +
    'Both legs are at most CACHE_TTL_PRICE_S (default 5 s) apart; meta.legs gives each leg\'s time. ' +
    'A pair either market does not list is a 404; either venue failing is a 502 naming it.',
  tag: 'Derivatives',
  access: 'paid',
  query: basisQuery,
  data: basisData,
  example: { symbol: 'BTC' },
  handler: async (req, ctx) => {
    const sym = await resolveCryptoSymbol(ctx.cryptoListings, req.query.symbol);
    const pair = binancePair(sym);
    const [spot, perp] = await settledInOrder([ctx.sources.binanceSpot.ticker24h(pair), ctx.sources.binanceFutures.premiumIndex(pair, 'price')]);
    const spotPrice = spot.data.lastPrice;
    const p = perp.data;
    const basisValue = p.mark_price - spotPrice;
    const interval = p.funding_interval_hours ?? (await inferredInterval(ctx.sources, pair));
    const carry = p.last_funding_rate !== null && interval !== null ? clean(p.last_funding_rate * (HOURS_PER_YEAR / interval) * 100) : null;
    const perpAsOf = isoFromMs(p.time);
    return envelope(
      {
        symbol: `${sym.base}/${sym.quote}`,
        venue_symbol: pair,
        currency: sym.quote,
        spot_price: spotPrice,
        perp_mark_price: p.mark_price,
        index_price: p.index_price,
        basis: clean(basisValue),
        basis_pct: clean((basisValue / spotPrice) * 100),
        funding_rate: p.last_funding_rate,
        funding_interval_hours: interval,
        annualized_carry_pct: carry,
        spot_as_of: spot.data.closeTime,
        perp_as_of: perpAsOf,
      },
      [spot.meta, perp.meta],
      { legs: legs(spot.meta, spot.data.closeTime, perp.meta, perpAsOf) },
    );
  },
});
