// The input of every candle analytics endpoint: the most recent closed candles of a symbol. The
// candle still forming is dropped, and too few closed candles for the computation is the caller's
// 400, saying how many are needed. A candle is closed when its open time + timeframe ≤ the time the
// request to the source was sent (not when it answered, nor the time of this request): the source made
// its answer at some moment after the request was sent, so only a candle that had ended by then is
// final in it; a cached answer keeps that time, so a candle forming then stays out even after its
// period has ended.
import { z } from 'zod';
import { closedCandles, closeTime } from '../analytics/candles.ts';
import { BadRequestError } from '../lib/errors.ts';
import { loadCandles, TIMEFRAME_MS, type Candle, type CandleContext, type CandleSeries, type Timeframe } from './candles.ts';
import type { MarketSymbol } from '../params/symbols.ts';

/** When a candle counts as closed, as every candle analytics endpoint says it. */
export const CLOSED_CANDLE_RULE = 'a candle is closed when its open time + timeframe ≤ the time the request to the source was sent; the forming one is dropped';

/** The first words of a candle analytics endpoint over /v1/ohlcv's candles: which candles, from where. */
export const CLOSED_CANDLES_TEXT =
  `Closed candles only (${CLOSED_CANDLE_RULE}), from the candle sources of /v1/ohlcv (Binance with the Coinbase Exchange fallback; Yahoo for equities). `;

/** The `as_of` of every candle analytics answer. */
export const asOfField = () => z.string().describe("End of the last closed candle's period (open time + timeframe), ISO-8601 UTC");

/** The most candles one load asks for: Binance klines serve at most 1000 per call (as /v1/ohlcv's limit). */
export const MAX_LOAD = 1000;

export interface ClosedSeries {
  series: CandleSeries;
  /** The last `wanted` closed candles (or all of them when fewer), oldest first. */
  closed: Candle[];
  /** When the last closed candle's period ended (open time + timeframe), ISO-8601 UTC. */
  as_of: string;
}

/**
 * Loads `wanted` + 1 candles (the newest may be forming; at most MAX_LOAD, so wanted = 1000 gives 999
 * closed candles while one is forming), keeps the closed ones (at most `wanted`), and answers 400 when
 * fewer than `needed` are closed; `why` says what needs them.
 */
export async function loadClosedCandles(
  ctx: CandleContext,
  sym: MarketSymbol,
  timeframe: Timeframe,
  wanted: number,
  needed: number,
  why: string,
  now = Date.now(),
): Promise<ClosedSeries> {
  const series = await loadCandles(ctx, sym, timeframe, Math.min(wanted + 1, MAX_LOAD), now);
  const closed = closedCandles(series.candles, TIMEFRAME_MS[timeframe], series.sentAt).slice(-wanted);
  if (closed.length < needed || closed.length === 0) {
    const provider = series.sources.map((s) => s.provider).join(', ');
    throw new BadRequestError(
      `${why} needs at least ${needed} closed ${timeframe} candles; ${provider} has ${closed.length} for ${series.symbol}`,
    );
  }
  return { series, closed, as_of: closeTime(closed.at(-1)!, TIMEFRAME_MS[timeframe]) };
}
