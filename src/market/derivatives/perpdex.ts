// /v1/perpdex: one Hyperliquid perpetual: funding, open interest, prices and volume.
import { z } from 'zod';
import { changePct, product } from '../../analytics/derivatives.ts';
import { clean } from '../../analytics/numbers.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { HYPERLIQUID } from '../../sources/hyperliquid.ts';
import { cryptoSymbolParam, USD_QUOTES, type CryptoSymbol } from '../../params/symbols.ts';
import { resolveCryptoSymbol } from '../resolve-symbol.ts';
import { numberOrNull } from '../../catalog/fields.ts';


const query = z.object({
  symbol: cryptoSymbolParam.describe(
    'Hyperliquid coin (BTC, ETH, SOL, kPEPE), case-insensitive; any well-formed name is asked of Hyperliquid (one it does not list is a 404). ' +
      'A USD/USDT/USDC pair such as BTC-USD or BTCUSDT is read as its base asset.',
  ),
});


const data = z.object({
  symbol: z.string().describe('Hyperliquid coin name as the venue spells it (kept as it was; see venue_symbol)'),
  venue_symbol: z.string().describe('The perpetual as Hyperliquid spells it (BTC, kPEPE)'),
  venue: z.literal(HYPERLIQUID),
  currency: z.literal('USD').describe('Currency of the prices: Hyperliquid perpetuals are quoted in USD (margined in USDC)'),
  funding_rate_hourly: numberOrNull('Current hourly funding rate, a fraction'),
  funding_annualized_pct: numberOrNull('funding_rate_hourly × 24 × 365 × 100 (simple, not compounded)'),
  open_interest: numberOrNull('Open interest in coins, as Hyperliquid reports it'),
  open_interest_usd: numberOrNull('open_interest × mark_price'),
  mark_price: numberOrNull('Mark price, USD'),
  oracle_price: numberOrNull('Oracle price, USD'),
  mid_price: numberOrNull('Order-book mid; null when the venue gives none'),
  premium: numberOrNull('Venue premium (fraction); null when the venue gives none'),
  volume_24h_usd: numberOrNull('24 h notional volume (dayNtlVlm), USD'),
  prev_day_price: numberOrNull('Price 24 h ago (prevDayPx)'),
  change_24h_pct: numberOrNull('(mark_price − prev_day_price) / prev_day_price × 100'),
});

/** The coin asked for: a base asset, or a USD-quoted pair read as its base. Another quote is a 404: no such perpetual. */
function coinOf(sym: CryptoSymbol): string {
  if (sym.explicitQuote && !USD_QUOTES.has(sym.quote)) {
    throw new NotFoundError(`${HYPERLIQUID} perpetuals are quoted in USD; there is no ${sym.base}/${sym.quote} perpetual`, HYPERLIQUID);
  }
  return sym.base;
}

export const perpdex = defineRoute({
  path: '/v1/perpdex',
  summary: 'Hyperliquid perpetual: funding, open interest, prices, volume',
  description:
    'One Hyperliquid perpetual from metaAndAssetCtxs: hourly funding and funding_annualized_pct = funding × 24 × 365 × 100, open interest in coins ' +
    'and open_interest_usd = open interest × mark price, mark/oracle/mid prices, premium, 24 h notional volume, the price 24 h ago and ' +
    'change_24h_pct = (mark − prevDayPx) / prevDayPx × 100. mid_price and premium are null when the venue gives none. ' +
    'Unknown or delisted coins answer 404.',
  tag: 'Derivatives',
  access: 'paid',
  maxStale: 'DERIVATIVES_STALE_S',
  query,
  data,
  example: { symbol: 'BTC' },
  handler: async (req, { sources, cryptoListings }) => {
    const coin = coinOf(await resolveCryptoSymbol(cryptoListings, req.query.symbol));
    const { data: assets, meta } = await sources.hyperliquid.perpAssets();
    const asset = assets.find((a) => a.name === coin) ?? assets.find((a) => a.name.toUpperCase() === coin.toUpperCase());
    if (!asset) throw new NotFoundError(`${HYPERLIQUID} lists no perpetual '${coin}'`, HYPERLIQUID);
    if (asset.isDelisted) throw new NotFoundError(`${HYPERLIQUID} perpetual '${asset.name}' is delisted`, HYPERLIQUID);
    const c = asset.ctx;
    return envelope(
      {
        symbol: asset.name,
        venue_symbol: asset.name,
        venue: HYPERLIQUID,
        currency: 'USD',
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
