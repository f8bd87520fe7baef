// /v1/earnings-calendar: US earnings reports per day from Nasdaq's calendar, one upstream call per date.
import { z } from 'zod';
import { addDays, newYorkDate } from '../../lib/new-york-time.ts';
import { dateParam } from '../../params/dates.ts';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas } from '../../upstream/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { numberOrNull } from '../../catalog/fields.ts';

const query = z.object({
  date: dateParam("First day (default: today's date in New York)."),
  days: boundedInt(1, 14, 1, 'Days from `date` on, 1-14 (one Nasdaq call each).'),
});


const data = z.object({
  from: z.string().describe('First day, YYYY-MM-DD'),
  to: z.string().describe('Last day, YYYY-MM-DD'),
  count: z.number().int().describe('Reports listed (the days read)'),
  days: z
    .array(
      z.object({
        date: z.string(),
        count: z.number().int().nullable().describe('Reports that day; 0 on a weekend or holiday; null when the day could not be read (see error)'),
        error: z.string().nullable().describe("Why the day is unknown (Nasdaq failed, or answered for another day): its reports are left out, not guessed; null when read"),
      }),
    )
    .describe('Each day asked, in order'),
  earnings: z
    .array(
      z.object({
        date: z.string().describe('Report day, YYYY-MM-DD'),
        symbol: z.string(),
        company: z.string(),
        timing: z.enum(['before_open', 'after_close', 'not_supplied']).describe('Nasdaq time-pre-market / time-after-hours / anything else'),
        eps_estimate: numberOrNull('Consensus EPS forecast, USD ("($0.29)" → −0.29); null when Nasdaq gives none'),
        estimate_count: numberOrNull('Number of estimates behind eps_estimate'),
        market_cap_usd: numberOrNull('Market capitalisation, USD'),
        fiscal_quarter_ending: z.string().nullable().describe('Month the reported quarter ends, YYYY-MM ("May/2024" → 2024-05)'),
        prior_year_eps: numberOrNull("EPS of the same quarter a year earlier, USD"),
        prior_year_report_date: z.string().nullable().describe('When that was reported, YYYY-MM-DD'),
      }),
    )
    .describe('By day, then in Nasdaq\'s order (market cap, largest first)'),
});

export const earningsCalendar = defineRoute({
  path: '/v1/earnings-calendar',
  summary: 'US earnings reports per day (Nasdaq earnings calendar)',
  description:
    "Nasdaq's earnings calendar for `days` days from `date` (default today in New York), one Nasdaq call per date. Nasdaq sends formatted strings: " +
    '"$47,076,153,012" → 47076153012, "($0.29)" → −0.29, "N/A" or "" → null, "6/30/2023" → 2023-06-30, "May/2024" → 2024-05. timing: ' +
    'before_open (pre-market), after_close (after hours) or not_supplied; a cell in no such form (ambiguous, abbreviated) is null, and only that cell. ' +
    'A weekend or holiday is an empty day, not an error. Nasdaq\'s asOf must name the day asked: rows it answered for another day are never ' +
    'served as that day. A day that fails (or was answered for another day) is listed in `days` with count null and its error, and the other ' +
    'days are still served; when no day can be read, the answer is the first day\'s error (502/503). Nasdaq lists reports about two months ahead.',
  tag: 'Calendars',
  access: 'paid',
  maxStale: 'MARKET_CONTEXT_STALE_S',
  query,
  data,
  example: { date: '2024-07-03' },
  handler: async (req, { sources }) => {
    const from = req.query.date ?? newYorkDate(Date.now());
    const dates = Array.from({ length: req.query.days }, (_, i) => addDays(from, i));
    const answers = await eachDay(dates.map((d) => sources.nasdaq.earnings(d)));
    const earnings = answers.flatMap((a, i) => (a.ok ? a.value.data.map((row) => ({ date: dates[i]!, ...row })) : []));
    return envelope(
      {
        from,
        to: dates.at(-1)!,
        count: earnings.length,
        days: answers.map((a, i) => ({ date: dates[i]!, count: a.ok ? a.value.data.length : null, error: a.ok ? null : a.error.message })),
        earnings,
      },
      mergeSourceMetas(answers.flatMap((a) => (a.ok ? [a.value.meta] : []))),
    );
  },
});

type DayAnswer<T> = { ok: true; value: T } | { ok: false; error: AppError };

/**
 * Every day's call settled: a day that failed with a client-safe error is kept as that error (the others are
 * still served); when none succeeded the first day's error is thrown. Anything else is a bug and is thrown.
 */
async function eachDay<T>(calls: Promise<T>[]): Promise<DayAnswer<T>[]> {
  const settled = await Promise.allSettled(calls);
  const answers = settled.map((s): DayAnswer<T> => {
    if (s.status === 'fulfilled') return { ok: true, value: s.value };
    if (s.reason instanceof AppError) return { ok: false, error: s.reason };
    throw s.reason;
  });
  const failures = answers.flatMap((a) => (a.ok ? [] : [a.error]));
  if (failures.length === answers.length) throw failures[0];
  return answers;
}
