// Dates and date-times in query parameters: one rule for every route that takes one. A date is a real
// day of the calendar (2026-02-30 is refused, never rolled over to March 2), within a range of years the
// route can answer for; a date-time also has a real time of day and an explicit UTC offset. The 400
// names the parameter (the error handler prefixes it), the form accepted and why the value failed.
import { z } from 'zod';

/** Inclusive bounds, YYYY-MM-DD. */
export interface DateRange {
  from: string;
  to: string;
}

/** What a route accepts unless it needs narrower bounds: this century, no year 0000 or 9999. */
export const DEFAULT_DATE_RANGE: DateRange = { from: '2000-01-01', to: '2099-12-31' };

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// RFC 3339 date-time (ISO-8601 with an offset): seconds and fractions optional; T and Z in either case.
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** Why `s` is not a day of the calendar written YYYY-MM-DD; undefined when it is one. */
export function calendarDateProblem(s: string): string | undefined {
  const m = DATE.exec(s);
  if (!m) return 'not written YYYY-MM-DD';
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12) return `not a day of the calendar: there is no month ${m[2]}`;
  const days = daysInMonth(year, month);
  if (day < 1 || day > days) return `not a day of the calendar: ${MONTHS[month - 1]} ${year} has ${days} days`;
  return undefined;
}

/** Why `s` (a calendar date) is outside `range`; undefined inside it. YYYY-MM-DD strings compare as dates. */
const rangeProblem = (s: string, range: DateRange) => (s < range.from || s > range.to ? `outside ${range.from} to ${range.to}` : undefined);

/**
 * A date parameter: YYYY-MM-DD, a real calendar day within `range` (DEFAULT_DATE_RANGE unless the route
 * narrows it). Optional: the route's description says what its absence means.
 */
export function dateParam(description: string, range: DateRange = DEFAULT_DATE_RANGE) {
  const accepted = `a date YYYY-MM-DD, a real calendar day from ${range.from} to ${range.to} (${exampleDate(range)})`;
  return z
    .string({ error: () => `must be ${accepted}` })
    .superRefine((v, ctx) => {
      const problem = calendarDateProblem(v) ?? rangeProblem(v, range);
      if (problem) ctx.addIssue({ code: 'custom', message: `must be ${accepted}; '${v}' is ${problem}` });
    })
    .optional()
    .describe(`${description} ${sentence(accepted)}`);
}

/** Why `s` is not an RFC 3339 date-time with a real date, a real time of day and a sane offset; undefined when it is one. */
export function dateTimeProblem(s: string): string | undefined {
  const m = DATE_TIME.exec(s);
  if (!m) return 'not written YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset ±HH:MM';
  const dateProblem = calendarDateProblem(m[1]!);
  if (dateProblem) return dateProblem;
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 59) return `not a time of day: ${m[2]}:${m[3]}${m[4] ? `:${m[4]}` : ''}`;
  if (m[6]) {
    const minutes = Number(m[7]) * 60 + Number(m[8]);
    if (Number(m[8]) > 59 || minutes > 14 * 60) return `not a UTC offset in use: ${m[6]}${m[7]}:${m[8]} (offsets run from −12:00 to +14:00)`;
  }
  return undefined;
}

/**
 * A date-time parameter: RFC 3339 / ISO-8601 with Z or a UTC offset, a real date and time of day, the
 * instant within `range` (from its first day's 00:00 UTC to its last day's end). Upper-cased for the
 * handler (RFC 3339 allows t and z), so `Date.parse` reads it as written.
 */
export function dateTimeParam(description: string, example: string, range: DateRange = DEFAULT_DATE_RANGE) {
  const accepted = `an ISO-8601 date-time with Z or a UTC offset, from ${range.from} to ${range.to} (${example})`;
  const first = Date.parse(`${range.from}T00:00:00Z`);
  const end = Date.parse(`${range.to}T00:00:00Z`) + 86_400_000;
  return z
    .string({ error: () => `must be ${accepted}` })
    .superRefine((v, ctx) => {
      let problem = dateTimeProblem(v);
      if (!problem) {
        const at = Date.parse(v.toUpperCase());
        if (!(at >= first && at < end)) problem = `outside ${range.from} to ${range.to}`;
      }
      if (problem) ctx.addIssue({ code: 'custom', message: `must be ${accepted}; '${v}' is ${problem}` });
    })
    .transform((v) => v.toUpperCase())
    .optional()
    .describe(`${description} ${sentence(accepted)}`);
}

/** An example for the messages: a date inside the range. */
function exampleDate(range: DateRange): string {
  return range.from <= '2026-11-24' && '2026-11-24' <= range.to ? '2026-11-24' : range.from;
}

const sentence = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}.`;
