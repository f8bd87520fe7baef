// /v1/volatility: Deribit's 30-day implied volatility index (DVOL) with its change over exactly 24 h, Deribit's
// latest realized (historical) volatility, and the spread between the two.
import { z } from 'zod';
import { change24h, completedValues, newest, spread } from '../../analytics/volatility.ts';
import { enumParam, pickAlias, X_DEFAULT } from '../../params/query.ts';
import { parseCryptoSymbol, symbolParam, USD_QUOTES } from '../../params/symbols.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { BadRequestError, UpstreamError } from '../../lib/errors.ts';
import { settledInOrder } from '../../lib/settled-in-order.ts';
import { DERIBIT, VOLATILITY_CURRENCIES, type VolatilityCurrency } from '../../sources/deribit.ts';
import { isoFromMs } from '../../sources/wire.ts';
import { numberOrNull } from '../../catalog/fields.ts';

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/**
 * One-minute DVOL candles over the hour before the request, and over the same hour a day earlier: the value
 * shown is the close of the newest completed minute, compared with the close of the minute that ended exactly
 * 24 h before it. (Hourly candles would compare a forming candle's close, the value at some moment of the hour,
 * with a close 23 to 24 h older.) The window ends on a whole minute, so identical requests within a minute
 * share one cached answer, and only candles ended by then are read.
 */
const DVOL_RESOLUTION_S = 60;
const DVOL_WINDOW_MS = 60 * MINUTE_MS;

const UNDERLYINGS = VOLATILITY_CURRENCIES.join(' or ');
const ACCEPTED_UNDERLYING = `${UNDERLYINGS} (the currencies Deribit publishes DVOL for), alone or as a USD pair (BTCUSDT, ETH-USD)`;
const DEFAULT_UNDERLYING: VolatilityCurrency = 'BTC';

// `symbol` names the asset asked about on every route; `currency`, this route's older name for it,
// stays as an alias (elsewhere `currency` is the quote currency of prices).
const query = z.object({
  symbol: symbolParam
    .optional()
    .describe(`Underlying: ${ACCEPTED_UNDERLYING}, case-insensitive. Default ${DEFAULT_UNDERLYING}.`)
    // OpenAPI lists the two assets; their USD pairs and other cases are accepted too, as the description says.
    .meta({ [X_DEFAULT]: DEFAULT_UNDERLYING, enum: [...VOLATILITY_CURRENCIES], pattern: undefined, minLength: undefined, maxLength: undefined } as never),
  currency: enumParam(VOLATILITY_CURRENCIES).optional().describe('The older name of `symbol` (BTC or ETH, any case), still accepted; give one of the two.'),
});

/** BTC or ETH from `symbol`: the asset alone, or a pair quoted in USD or a USD stablecoin (DVOL is a USD index). */
function underlyingOf(symbol: string | undefined): VolatilityCurrency | undefined {
  if (symbol === undefined) return undefined;
  const refuse = () => new BadRequestError(`query parameter 'symbol' must be ${ACCEPTED_UNDERLYING}; got '${symbol}'`);
  let sym;
  try {
    sym = parseCryptoSymbol(symbol);
  } catch {
    throw refuse();
  }
  const base = VOLATILITY_CURRENCIES.find((c) => c === sym.base);
  if (!base || (sym.explicitQuote && !USD_QUOTES.has(sym.quote))) throw refuse();
  return base;
}


const data = z.object({
  symbol: z.enum(VOLATILITY_CURRENCIES).describe('The underlying'),
  currency: z.enum(VOLATILITY_CURRENCIES).describe('Same as symbol; the older name, kept for existing clients'),
  implied_volatility_30d: z
    .number()
    .describe("Deribit's DVOL: 30-day implied volatility from its options, annualized percent (47.5 = 47.5 %), at as_of (the close of the newest completed one-minute candle)"),
  implied_volatility_change_24h: numberOrNull(
    'implied_volatility_30d − DVOL exactly 24 h before as_of (the close of the one-minute candle that ended then), in volatility points (not percent of itself); null when Deribit gave no such candle',
  ),
  realized_volatility: numberOrNull("Deribit's latest historical (realized) volatility, annualized percent; null when Deribit gave no point"),
  iv_rv_spread: numberOrNull('implied_volatility_30d − realized_volatility, volatility points; positive = options price more movement than realized'),
  as_of: z.string().describe('Time of implied_volatility_30d: the end of the newest completed one-minute DVOL candle, ISO-8601 UTC'),
  realized_volatility_as_of: z.string().nullable().describe('Time of the realized-volatility point, ISO-8601 UTC'),
});

export const volatility = defineRoute({
  path: '/v1/volatility',
  summary: 'Implied (DVOL) vs realized volatility of BTC or ETH, from Deribit',
  description:
    "implied_volatility_30d is Deribit's DVOL index (30-day implied volatility, annualized percent) at as_of: the close of the newest completed " +
    'one-minute candle of public/get_volatility_index_data in the hour before the request; implied_volatility_change_24h = that value − the close ' +
    'of the one-minute candle that ended exactly 24 h earlier (volatility points; null when absent). realized_volatility is the newest point of public/get_historical_volatility ' +
    "(Deribit's hourly historical volatility, annualized percent). iv_rv_spread = implied − realized. Underlyings: BTC, ETH (symbol, or its older name currency); anything else is a 400.",
  tag: 'Market context',
  access: 'paid',
  maxStale: 'DERIVATIVES_STALE_S',
  query,
  data,
  example: { symbol: 'BTC' },
  handler: async (req, { sources }) => {
    const currency = pickAlias({ name: 'symbol', value: underlyingOf(req.query.symbol) }, { name: 'currency', value: req.query.currency }, DEFAULT_UNDERLYING);
    const end = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
    const [recent, dayAgo, hv] = await settledInOrder([
      sources.deribit.volatilityIndex(currency, end - DVOL_WINDOW_MS, end, DVOL_RESOLUTION_S),
      sources.deribit.volatilityIndex(currency, end - DAY_MS - DVOL_WINDOW_MS, end - DAY_MS, DVOL_RESOLUTION_S),
      sources.deribit.historicalVolatility(currency),
    ]);
    const widthMs = DVOL_RESOLUTION_S * 1000;
    const latest = newest(completedValues(recent.data, widthMs, end));
    // Deribit publishes DVOL continuously: no completed candle in an hour is a broken answer, not a fact about the market.
    if (!latest) throw new UpstreamError(DERIBIT, 'schema', `${DERIBIT} returned no DVOL candle for ${currency} in the last hour`);
    const realized = newest(hv.data);
    return envelope(
      {
        symbol: currency,
        currency,
        implied_volatility_30d: latest.value,
        implied_volatility_change_24h: change24h(latest, completedValues(dayAgo.data, widthMs, end)),
        realized_volatility: realized?.volatility ?? null,
        iv_rv_spread: spread(latest.value, realized?.volatility ?? null),
        as_of: isoFromMs(latest.time),
        realized_volatility_as_of: realized ? isoFromMs(realized.time) : null,
      },
      mergeSourceMetas([recent.meta, dayAgo.meta, hv.meta]),
    );
  },
});
