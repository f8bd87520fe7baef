// /v1/rates: the newest US Treasury par yield curve, its 10y−2y and 10y−3m spreads, and the day before.
import { z } from 'zod';
import { newYorkDate } from '../../lib/new-york-time.ts';
import { curveSignals, TENORS, type CurveDay } from '../../analytics/yield-curve.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas, type SourceMeta } from '../../upstream/envelope.ts';
import { AppError, UpstreamError } from '../../lib/errors.ts';
import { TREASURY } from '../../sources/treasury.ts';

const yieldPct = z.number().nullable().describe('Par yield, percent (4.22 = 4.22 %); null where Treasury left the cell blank');
const curveSchema = z.object(Object.fromEntries(TENORS.map((t) => [t, yieldPct])) as Record<(typeof TENORS)[number], typeof yieldPct>);

const data = z.object({
  date: z.string().describe('Business day of the newest curve, YYYY-MM-DD'),
  curve: curveSchema.describe('Par yields by tenor (1M … 30Y), percent'),
  spreads: z
    .object({
      '10y_2y': z.number().nullable().describe('10Y − 2Y, percentage points'),
      '10y_3m': z.number().nullable().describe('10Y − 3M, percentage points'),
    })
    .describe('null when either yield is missing'),
  inverted: z
    .object({ '10y_2y': z.boolean().nullable(), '10y_3m': z.boolean().nullable() })
    .describe('The spread is below 0 (the long yield under the short one)'),
  previous: z
    .object({ date: z.string(), curve: curveSchema })
    .nullable()
    .describe("The business day before `date`; null when it is in the previous year's file and that file failed (meta.previous_error says why)"),
});

export const rates = defineRoute({
  path: '/v1/rates',
  summary: 'US Treasury par yield curve, 10y−2y and 10y−3m spreads, and the previous day',
  description:
    "From the US Treasury's daily par yield curve CSV of the current year (New York date): the newest row, its spreads 10Y − 2Y and " +
    '10Y − 3M in percentage points, whether each is inverted (below 0), and the row before it. Yields are percent as Treasury publishes them ' +
    '(2 decimals); a blank cell is null. Early in January the current year has no rows yet: the previous year\'s file is read ' +
    '(meta.fallback says so), and it also supplies `previous` when the current year has a single row; should that file fail then, the newest ' +
    'curve is still served, with previous null and the reason in meta.previous_error.',
  tag: 'Rates',
  access: 'paid',
  maxStale: 'MARKET_CONTEXT_STALE_S',
  data,
  handler: async (_req, { sources }) => {
    const year = Number(newYorkDate(Date.now()).slice(0, 4));
    const current = await sources.treasury.yieldCurve(year);
    const days: CurveDay[] = [...current.data];
    const metas: SourceMeta[] = [current.meta];
    const extra: Record<string, unknown> = {};
    if (current.data.length === 0) {
      // No row this year yet: the newest curve is in last year's file, so its failure fails the answer.
      const before = await sources.treasury.yieldCurve(year - 1);
      days.push(...before.data);
      metas.push(before.meta);
      extra.fallback = { from: String(year), to: String(year - 1), reason: `the ${year} file has no rows yet` };
    } else if (current.data.length === 1) {
      // The year's first business day: the newest curve is known; only `previous` needs last year's file.
      try {
        const before = await sources.treasury.yieldCurve(year - 1);
        days.push(...before.data);
        metas.push(before.meta);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        extra.previous_error = { error: `the ${year - 1} file, which holds the day before: ${err.message}`, source: TREASURY };
      }
    }
    const [latest, previous] = days;
    if (!latest) throw new UpstreamError(TREASURY, 'provider', `${TREASURY} returned no yield-curve rows for ${year} or ${year - 1}`);
    return envelope(
      { date: latest.date, curve: latest.curve, ...curveSignals(latest.curve), previous: previous ?? null },
      mergeSourceMetas(metas),
      extra,
    );
  },
});
