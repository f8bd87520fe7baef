// The `timeframe` parameter of every candle route (/v1/ohlcv, /v1/atr, /v1/fvg, /v1/liquidity-levels,
// /v1/momentum-score): one name, one default, any case (4H is 4h; 1M is refused as months). Every
// answer states the timeframe it used.
import { timeframeOneOf } from '../params/query.ts';
import { EQUITY_TIMEFRAMES, TIMEFRAMES, type Timeframe } from './candles.ts';

/**
 * One default for every candle route: an hour is the shortest length every source serves for every
 * asset with a deep history (Yahoo keeps 730 days of 1h bars), and the same default means /v1/atr,
 * /v1/fvg and /v1/liquidity-levels asked without a timeframe describe the same candles.
 */
export const DEFAULT_TIMEFRAME = '1h' satisfies Timeframe;

/** `timeframe` over `values` (every timeframe unless a route serves fewer), defaulting to DEFAULT_TIMEFRAME. */
export function timeframeQuery<const V extends readonly [Timeframe, ...Timeframe[]]>(values: V, description: string) {
  return timeframeOneOf(values, DEFAULT_TIMEFRAME as V[number], `${description} Default ${DEFAULT_TIMEFRAME} (the same on every candle route); any case.`);
}

/** The description most candle routes share. */
export const CANDLE_TIMEFRAMES_TEXT = `Candle length: ${TIMEFRAMES.join(', ')}; equities ${EQUITY_TIMEFRAMES.join(', ')}.`;
