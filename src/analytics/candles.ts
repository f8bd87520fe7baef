// Candle housekeeping shared by the candle loader and the analytics: building a longer timeframe
// from shorter candles (the Coinbase fallback has no 4h, 30m or 1w candles), and keeping closed
// candles only. Pure: the caller passes the clock.
import { clean } from './numbers.ts';

/** One candle: what every source's bars are read into, and what the computations take. */
export interface Candle {
  /** Open time, ISO-8601 UTC. */
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Base asset (crypto) or shares (equities); null when the source gave none. */
  volume: number | null;
}

/** Open time of the bucket holding `ms`: buckets of `bucketMs` starting at `offsetMs` past the epoch. */
export function bucketStart(ms: number, bucketMs: number, offsetMs = 0): number {
  return Math.floor((ms - offsetMs) / bucketMs) * bucketMs + offsetMs;
}

/**
 * Candles of `bucketMs` built from consecutive candles of `baseMs` (oldest first): buckets start at
 * `offsetMs` past the epoch plus whole multiples of `bucketMs` (4 h: 00:00, 04:00, ... UTC with offset 0;
 * weeks on Monday 00:00 UTC with offset 4 days, since 1970-01-01 was a Thursday).
 *
 * A bucket is kept only when every base candle it should hold is there: all bucketMs / baseMs of
 * them, or, for the bucket still forming at `nowMs`, every one from its start up to the base candle
 * forming now. A bucket with a missing base candle is left out, never filled.
 * open = first open, close = last close, high = max high, low = min low, volume = sum (null when any
 * base volume is null).
 */
export function aggregateCandles<B extends Candle>(base: B[], baseMs: number, bucketMs: number, offsetMs: number, nowMs: number): Candle[] {
  const groups = new Map<number, B[]>();
  for (const c of base) {
    const t = Date.parse(c.time);
    const start = bucketStart(t, bucketMs, offsetMs);
    let g = groups.get(start);
    if (!g) groups.set(start, (g = []));
    g.push(c);
  }
  const baseNow = bucketStart(nowMs, baseMs);
  const out: Candle[] = [];
  for (const [start, members] of [...groups.entries()].sort((a, b) => a[0] - b[0])) {
    const expected = Math.min(bucketMs / baseMs, Math.floor((baseNow - start) / baseMs) + 1);
    const times = new Set(members.map((m) => Date.parse(m.time)));
    let complete = times.size === expected;
    for (let k = 0; complete && k < expected; k++) complete = times.has(start + k * baseMs);
    if (!complete) continue;
    const sorted = [...members].sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
    const volumes = sorted.map((m) => m.volume);
    out.push({
      time: new Date(start).toISOString(),
      open: sorted[0]!.open,
      high: Math.max(...sorted.map((m) => m.high)),
      low: Math.min(...sorted.map((m) => m.low)),
      close: sorted.at(-1)!.close,
      volume: volumes.some((v) => v === null) ? null : clean(volumes.reduce<number>((a, v) => a + (v as number), 0)),
    });
  }
  return out;
}

/**
 * The closed candles: those whose open time + timeframe ≤ `asOfMs` (the candle's period was over by
 * then). Pass the time the request to the source was sent, not when it answered nor the time of this
 * request: the answer was made after it was sent, and a cached one holds its candles as they were.
 * Both venues include the candle still forming; it is dropped here, whatever it shows.
 */
export function closedCandles<B extends Candle>(candles: B[], timeframeMs: number, asOfMs: number): B[] {
  return candles.filter((c) => Date.parse(c.time) + timeframeMs <= asOfMs);
}

/** When a candle's period ends: open time + timeframe, ISO-8601 UTC. */
export function closeTime(c: Candle, timeframeMs: number): string {
  return new Date(Date.parse(c.time) + timeframeMs).toISOString();
}
