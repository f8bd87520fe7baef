// Candle fakes: Binance klines re-stamped onto any interval from the constructed series, and a
// Coinbase Exchange candles endpoint in its documented format ([time, low, high, open, close, volume],
// newest first, at most 300 per request, fixed granularities), both relative to the current time.
import { bucketStart } from '../../src/analytics/candles.ts';
import { TIMEFRAME_MS, type Timeframe } from '../../src/market/candles.ts';
import { recorded } from '../fixtures.ts';
import type { FakeHandler, SeenRequest } from './fake-upstream.ts';

export type KlineRow = [number, string, string, string, string, string, number, ...unknown[]];

/** The constructed 600-row series (see its .source.txt). */
export const constructedKlines = (): KlineRow[] => recorded<KlineRow[]>('constructed__binance_klines_600.json');

/** Binance weeks open on Monday 00:00 UTC (1970-01-01 was a Thursday). */
const offsetOf = (tf: Timeframe) => (tf === '1w' ? 4 * 86_400_000 : 0);

/**
 * The last `count` rows re-stamped onto `timeframe` so that the newest is the candle forming at `now`
 * (open times and close times change, prices do not).
 */
export function retimed(rows: KlineRow[], timeframe: Timeframe, count: number, now = Date.now()): KlineRow[] {
  const ms = TIMEFRAME_MS[timeframe];
  const last = bucketStart(now, ms, offsetOf(timeframe));
  const picked = rows.slice(-count);
  return picked.map((r, k) => {
    const open = last - (picked.length - 1 - k) * ms;
    return [open, r[1], r[2], r[3], r[4], r[5], open + ms - 1, ...r.slice(7)] as KlineRow;
  });
}

/** GET /api/v3/klines answering `limit` rows of `rows` re-stamped onto the requested interval. */
export function klinesHandler(rows: KlineRow[] = constructedKlines()): FakeHandler {
  return (req: SeenRequest) => {
    const tf = req.query.get('interval') as Timeframe;
    const limit = Number(req.query.get('limit') ?? 500);
    return { body: retimed(rows, tf, limit) };
  };
}

/** One Coinbase row: [time (unix s), low, high, open, close, volume]. */
export type CoinbaseRow = [number, number, number, number, number, number];

const GRANULARITIES = new Set([60, 300, 900, 3600, 21600, 86400]);

/**
 * GET /products/{id}/candles as Coinbase Exchange documents it: granularity must be one of its six
 * values and start..end may span at most 300 buckets (else HTTP 400 with its message); the rows of the
 * buckets from start to end (both included) that `candleAt` gives and that have begun by now, newest first.
 */
export function coinbaseCandlesHandler(candleAt: (openMs: number, granularityS: number) => CoinbaseRow | null, now = () => Date.now()): FakeHandler {
  return (req) => {
    const g = Number(req.query.get('granularity'));
    if (!GRANULARITIES.has(g)) return { status: 400, body: { message: 'Unsupported granularity' } };
    const ms = g * 1000;
    const start = bucketStart(Date.parse(req.query.get('start') ?? ''), ms);
    const end = Date.parse(req.query.get('end') ?? '');
    if ((end - start) / ms + 1 > 300) {
      return { status: 400, body: { message: 'granularity too small for the requested time range. Count of aggregations requested exceeds 300' } };
    }
    const rows: CoinbaseRow[] = [];
    for (let t = start; t <= Math.min(end, now()); t += ms) {
      const row = candleAt(t, g);
      if (row) rows.push(row);
    }
    return { body: rows.reverse() };
  };
}

let constructedCache: KlineRow[] | undefined;

/**
 * A Coinbase row for any bucket from the constructed series (cycled), so that every granularity has
 * data: the bucket's index picks a row. Column order as documented: time, low, high, open, close, volume.
 */
export function constructedCoinbaseRow(openMs: number, granularityS: number): CoinbaseRow {
  const rows = (constructedCache ??= constructedKlines());
  const i = Math.floor(openMs / (granularityS * 1000)) % rows.length;
  const r = rows[i]!;
  return [openMs / 1000, Number(r[3]), Number(r[2]), Number(r[1]), Number(r[4]), Number(r[5])];
}
