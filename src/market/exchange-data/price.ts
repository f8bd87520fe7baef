// /v1/price: crypto from Binance spot, hedged with Coinbase Exchange (asked at once when Binance
// fails or its circuit is open, and after HEDGE_DELAY_MS when it is merely slow); US equities and
// ETFs from Yahoo Finance's chart API.
import { z } from 'zod';
import type { RouteContext } from '../../catalog/route.ts';
import { defineRoute } from '../../catalog/route.ts';
import { derived, envelope, type SourceMeta } from '../../upstream/envelope.ts';
import { hedge } from '../../upstream/hedge.ts';
import { BINANCE } from '../../sources/binance-spot.ts';
import { COINBASE } from '../../sources/coinbase.ts';
import { assetClassParam, binancePair, coinbaseProduct, symbolParam, type CryptoSymbol, type EquitySymbol } from '../../params/symbols.ts';
import { resolveSymbol } from '../resolve-symbol.ts';

const query = z.object({ symbol: symbolParam, asset_class: assetClassParam });

const data = z.object({
  symbol: z.string().describe('What was priced: BASE/QUOTE for crypto (BTC/USDT), the ticker for equities (AAPL)'),
  venue_symbol: z.string().describe('The market as the venue that priced it spells it: BTCUSDT (Binance), BTC-USD (Coinbase Exchange), BRK-B (Yahoo)'),
  asset_class: z.enum(['crypto', 'equity']),
  price: z.number().nullable().describe('Last traded price in `currency`; null when the provider gave none'),
  currency: z.string().nullable().describe('Quote currency actually used: USDT on Binance (BTCUSDT), USD on Coinbase (BTC-USD), the listing currency on Yahoo'),
  as_of: z
    .string()
    .nullable()
    .describe("The venue's time of this price, ISO-8601 UTC (Binance: 24 h ticker closeTime; Coinbase: last trade time; Yahoo: regularMarketTime)"),
});

type Price = z.output<typeof data>;

interface Priced {
  data: Price;
  sources: SourceMeta[];
  extra?: Record<string, unknown>;
}

async function binancePrice({ sources }: RouteContext, sym: CryptoSymbol): Promise<Priced> {
  const pair = binancePair(sym);
  const t = await sources.binanceSpot.ticker24h(pair);
  const price = derived(t.data, sym.quote, (): Price => ({
    symbol: `${sym.base}/${sym.quote}`,
    venue_symbol: pair,
    asset_class: 'crypto',
    price: t.data.lastPrice,
    currency: sym.quote,
    as_of: t.data.closeTime,
  }));
  return { data: price, sources: [t.meta] };
}

async function coinbasePrice({ sources }: RouteContext, sym: CryptoSymbol): Promise<Priced> {
  const product = coinbaseProduct(sym);
  const [base, quote] = product.split('-') as [string, string];
  const c = await sources.coinbase.ticker(product);
  return {
    data: { symbol: `${base}/${quote}`, venue_symbol: product, asset_class: 'crypto', price: c.data.price, currency: quote, as_of: c.data.time },
    sources: [c.meta],
  };
}

/** Binance first, hedged with Coinbase Exchange (in USD by default); an unknown symbol is an answer, not a failure. */
async function cryptoPrice(ctx: RouteContext, sym: CryptoSymbol): Promise<Priced> {
  // Binance lists no USD-quoted pairs: an explicit BTC-USD goes to Coinbase Exchange directly.
  if (sym.explicitQuote && sym.quote === 'USD') return coinbasePrice(ctx, sym);
  const got = await hedge(
    { source: BINANCE, run: () => binancePrice(ctx, sym) },
    { source: COINBASE, run: () => coinbasePrice(ctx, sym) },
    ctx.config.upstream.hedgeDelayMs,
    ctx.metrics.upstream,
  );
  return got.fallback ? { ...got.value, extra: { fallback: got.fallback } } : got.value;
}

async function equityPrice({ sources }: RouteContext, sym: EquitySymbol): Promise<Priced> {
  const q = await sources.yahoo.quote(sym.ticker);
  return {
    data: { symbol: sym.display, venue_symbol: sym.ticker, asset_class: 'equity', price: q.data.regularMarketPrice, currency: q.data.currency, as_of: q.data.regularMarketTime },
    sources: [q.meta],
  };
}

export const price = defineRoute({
  path: '/v1/price',
  summary: 'Last price of a crypto pair or a US equity/ETF',
  description:
    'Crypto: last trade on Binance spot (BTC → BTCUSDT). When Binance fails (unreachable, geo-blocked with HTTP 451/403, erring, or paused by its ' +
    'circuit breaker) the last trade on Coinbase Exchange (BTC → BTC-USD) is asked at once; when Binance is only slow, Coinbase is asked after ' +
    'the hedge delay and the first answer wins. meta.fallback says when and why Coinbase served. A symbol Binance does not list is a 404 (no fallback). ' +
    'An explicit USD pair (BTC-USD) is priced on Coinbase Exchange directly, since Binance lists no USD pairs. ' +
    "Equities/ETFs: Yahoo Finance regularMarketPrice. as_of is the venue's own time.",
  tag: 'Exchange data',
  access: 'paid',
  maxStale: 'PRICE_STALE_S',
  query,
  data,
  example: { symbol: 'BTC' },
  handler: async (req, ctx) => {
    const sym = await resolveSymbol(ctx.cryptoListings, req.query.symbol, req.query.asset_class);
    const got = sym.assetClass === 'crypto' ? await cryptoPrice(ctx, sym) : await equityPrice(ctx, sym);
    return envelope(got.data, got.sources, got.extra);
  },
});
