// Classic indicators over a series of closes (oldest first). Each returns one value per input
// index, null where the indicator is not defined yet, so results line up with the candles.

/**
 * Exponential moving average with α = 2 / (period + 1), seeded by the simple mean of the first
 * `period` values (defined from index period − 1): EMA_i = α × x_i + (1 − α) × EMA_{i−1}.
 * Null values in `xs` (an undefined input) are skipped: the EMA starts at the first run of values.
 */
export function ema(xs: readonly (number | null)[], period: number): (number | null)[] {
  const out: (number | null)[] = xs.map(() => null);
  const alpha = 2 / (period + 1);
  let seed: number[] = [];
  let prev: number | null = null;
  xs.forEach((x, i) => {
    if (x === null) return;
    if (prev === null) {
      seed.push(x);
      if (seed.length === period) {
        prev = seed.reduce((a, b) => a + b, 0) / period;
        out[i] = prev;
        seed = [];
      }
      return;
    }
    // The same as α × x + (1 − α) × prev, written so that a constant input stays exactly constant.
    prev = prev + alpha * (x - prev);
    out[i] = prev;
  });
  return out;
}

/**
 * Wilder's RSI: changes d_i = x_i − x_{i−1}; average gain and loss seeded by the simple means of
 * the first `period` gains and losses, then avg = (avg × (period − 1) + current) / period;
 * RSI = 100 − 100 / (1 + avgGain / avgLoss), 100 when avgLoss = 0 (50 when both are 0: no move).
 * Defined from index `period`.
 */
export function rsi(xs: readonly number[], period: number): (number | null)[] {
  const out: (number | null)[] = xs.map(() => null);
  if (xs.length <= period) return out;
  let gain = 0;
  let loss = 0;
  for (let i = 1; i <= period; i++) {
    const d = xs[i]! - xs[i - 1]!;
    if (d > 0) gain += d;
    else loss -= d;
  }
  gain /= period;
  loss /= period;
  out[period] = rsiOf(gain, loss);
  for (let i = period + 1; i < xs.length; i++) {
    const d = xs[i]! - xs[i - 1]!;
    gain = (gain * (period - 1) + Math.max(d, 0)) / period;
    loss = (loss * (period - 1) + Math.max(-d, 0)) / period;
    out[i] = rsiOf(gain, loss);
  }
  return out;
}

function rsiOf(gain: number, loss: number): number {
  if (loss === 0) return gain === 0 ? 50 : 100;
  return 100 - 100 / (1 + gain / loss);
}

export interface MacdPoint {
  line: number;
  signal: number;
  histogram: number;
}

/**
 * MACD(fast, slow, signal): line = EMA_fast − EMA_slow (defined from index slow − 1), signal line =
 * EMA_signal of the line (seeded by the mean of its first `signal` values, so defined from index
 * slow + signal − 2), histogram = line − signal.
 */
export function macd(xs: readonly number[], fast = 12, slow = 26, signalPeriod = 9): (MacdPoint | null)[] {
  const f = ema(xs, fast);
  const s = ema(xs, slow);
  const line = xs.map((_, i) => (f[i] === null || s[i] === null ? null : f[i]! - s[i]!));
  const sig = ema(line, signalPeriod);
  return xs.map((_, i) => (line[i] === null || sig[i] === null ? null : { line: line[i]!, signal: sig[i]!, histogram: line[i]! - sig[i]! }));
}
