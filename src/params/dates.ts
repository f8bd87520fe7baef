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
    .describe(`${description} ${sentence(accepted)}`)
    .meta({ pattern: datePattern(range) });
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
    .describe(`${description} ${sentence(accepted)}`)
    .meta({ pattern: dateTimePattern(range) });
}

// ---- the patterns OpenAPI declares ---------------------------------------------------------------
// A pattern cannot know which years are leap years, nor where an offset moves an instant across the range's
// ends: it lists the forms that are always accepted (every day but 29 February; for a date-time, the years
// strictly inside the range), and the description states the whole rule. A fuzzer drawing from the pattern
// so never sends a value the server refuses.

/** Month and day of every day of the calendar but 29 February. */
const MONTH_DAY = '(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)';

/** The years from `from` to `to` (four digits, within one century) as a regular expression. */
export function yearsPattern(from: number, to: number): string {
  const century = Math.floor(from / 100);
  if (Math.floor(to / 100) !== century || to < from) throw new Error(`years ${from} to ${to}: one century, in order`);
  const [a, b] = [from % 100, to % 100];
  const [ta, tb] = [Math.floor(a / 10), Math.floor(b / 10)];
  const digits = (lo: number, hi: number) => (lo === hi ? `${lo}` : `[${lo}-${hi}]`);
  const parts =
    ta === tb
      ? [`${ta}${digits(a % 10, b % 10)}`]
      : [`${ta}${digits(a % 10, 9)}`, ...(tb - ta > 1 ? [`${digits(ta + 1, tb - 1)}[0-9]`] : []), `${tb}${digits(0, b % 10)}`];
  return `${century}(?:${parts.join('|')})`;
}

/** Whole years of a range: its first and last, when it starts on 1 January and ends on 31 December. */
function wholeYears(range: DateRange): [number, number] {
  const [from, to] = [Number(range.from.slice(0, 4)), Number(range.to.slice(0, 4))];
  return [range.from.endsWith('-01-01') ? from : from + 1, range.to.endsWith('-12-31') ? to : to - 1];
}

/** OpenAPI's pattern of a date parameter over `range`. */
export function datePattern(range: DateRange): string {
  const [from, to] = wholeYears(range);
  return `^${yearsPattern(from, to)}-${MONTH_DAY}$`;
}

/** OpenAPI's pattern of a date-time parameter over `range`: the years strictly inside it, so no offset moves an instant out. */
export function dateTimePattern(range: DateRange): string {
  const [from, to] = wholeYears(range);
  const time = '(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?';
  const offset = '(?:Z|[+-](?:0[0-9]|1[0-3]):[0-5][0-9]|[+-]14:00)';
  return `^${yearsPattern(from + 1, to - 1)}-${MONTH_DAY}T${time}${offset}$`;
}

/** An example for the messages: a date inside the range. */
function exampleDate(range: DateRange): string {
  return range.from <= '2026-11-24' && '2026-11-24' <= range.to ? '2026-11-24' : range.from;
}

const sentence = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}.`;
