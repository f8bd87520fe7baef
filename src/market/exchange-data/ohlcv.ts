// /v1/ohlcv: the most recent candles of a crypto pair or a US equity/ETF (src/market/candles.ts).
import { z } from 'zod';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { EQUITY_TIMEFRAMES, loadCandles, TIMEFRAMES } from '../candles.ts';
import { assetClassParam, symbolParam } from '../../params/symbols.ts';
import { resolveSymbol } from '../resolve-symbol.ts';
import { timeframeQuery } from '../timeframe.ts';

const TIMEFRAME_LIST = TIMEFRAMES.join(', ');
const EQUITY_TIMEFRAME_LIST = EQUITY_TIMEFRAMES.join(', ');

const query = z.object({
  symbol: symbolParam,
  timeframe: timeframeQuery(
    TIMEFRAMES,
    `Candle length: ${TIMEFRAME_LIST}. Equities support ${EQUITY_TIMEFRAME_LIST} (Yahoo has no 4h bars; 4h for an equity is a 400). ` +
      'Yahoo serves 1m for the last 7 days, other intraday timeframes for the last 60 days (30m: about 530 bars at most), 1h for 730 days.',
  ),
  limit: boundedInt(1, 1000, 100, 'Number of candles, 1-1000 (the most recent ones; the newest may still be open).'),
  asset_class: assetClassParam,
});

const candle = z.object({
  time: z.string().describe('Candle open time, ISO-8601 UTC'),
  open: z.number(),
  high: z.number(),
  low: z.number(),
  close: z.number(),
  volume: z.number().nullable().describe('In the base asset (crypto) or shares (equities); null when not given'),
});

const data = z.object({
  symbol: z.string().describe('BASE/QUOTE for crypto, the ticker for equities'),
  venue_symbol: z.string().describe('The market as the venue that served spells it: BTCUSDT (Binance), BTC-USD (Coinbase Exchange), BRK-B (Yahoo)'),
  asset_class: z.enum(['crypto', 'equity']),
  timeframe: z.enum(TIMEFRAMES),
  currency: z.string().nullable().describe('Currency of the prices'),
  candles: z.array(candle).describe('Oldest first'),
});

export const ohlcv = defineRoute({
  path: '/v1/ohlcv',
  summary: 'Candles (OHLCV) of a crypto pair or a US equity/ETF',
  description:
    'The most recent `limit` candles, oldest first. Crypto: Binance spot klines (volume in the base asset); when Binance fails (HTTP 451 from the US, ' +
    'errors, its circuit open) or is slower than the hedge delay, Coinbase Exchange candles of BASE-USD (meta.fallback says why; 4h, 30m and 1w are built ' +
    'from 1h, 15m and 1d candles, a bucket missing one is left out; a bucket without trades has no Coinbase candle, so fewer can come back). ' +
    'An explicit USD pair (BTC-USD) is served by Coinbase Exchange directly. ' +
    `Equities/ETFs: Yahoo Finance chart bars (timeframes ${EQUITY_TIMEFRAME_LIST}; bars with a missing open/high/low/close are dropped, never filled; ` +
    "on 1d and 1w, Yahoo's extra live row for today's session, stamped off the bar grid or in the period of the bar before it, is dropped). " +
    'The newest candle may still be open.',
  tag: 'Exchange data',
  access: 'paid',
  maxStale: 'CANDLES_STALE_S',
  query,
  data,
  example: { symbol: 'ETH', timeframe: '1h', limit: '24' },
  handler: async (req, ctx) => {
    const { timeframe, limit } = req.query;
    const sym = await resolveSymbol(ctx.cryptoListings, req.query.symbol, req.query.asset_class);
    const series = await loadCandles(ctx, sym, timeframe, limit);
    return envelope(
      { symbol: series.symbol, venue_symbol: series.venue_symbol, asset_class: series.asset_class, timeframe, currency: series.currency, candles: series.candles },
      series.sources,
      series.meta,
    );
  },
});
