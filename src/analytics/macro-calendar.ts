// Which macro events are upcoming at an instant, how far away they are, and whether the calendar's
// data reaches the end of the horizon asked for. Pure: the dates come from the calendar file.
import type { MacroCalendar, MacroEvent, MacroEventType } from '../data/macro-calendar.ts';
import { knownThrough } from '../data/macro-calendar.ts';
import { addDays, daysBetween, newYorkDate, newYorkTime } from '../lib/new-york-time.ts';

export interface UpcomingEvent extends MacroEvent {
  /** The release moment, ISO-8601 UTC (date and time_et read in New York). */
  datetime_utc: string;
  /** Calendar days from today's New York date to the event's date (0 = today). */
  days_until: number;
}

export interface Coverage {
  type: MacroEventType;
  /** The calendar's last dated event of this type; null when it has none. */
  known_through: string | null;
  /** The horizon ends on or before known_through: nothing of this type can be missing from the answer. */
  complete: boolean;
}

export interface Upcoming {
  /** Today's New York date. */
  from: string;
  /** from + days. */
  to: string;
  events: UpcomingEvent[];
  coverage: Coverage[];
}

/**
 * Events of `types` whose moment is at or after `nowMs` and whose date is at most `days` days after
 * today (New York dates), sorted by moment; with the coverage of each type over that horizon.
 */
export function upcomingEvents(calendar: MacroCalendar, nowMs: number, days: number, types: readonly MacroEventType[]): Upcoming {
  const from = newYorkDate(nowMs);
  const to = addDays(from, days);
  const events = calendar.events
    .filter((e) => types.includes(e.type) && e.date >= from && e.date <= to)
    .map((e) => ({ event: e, at: newYorkTime(e.date, e.time_et) }))
    .filter(({ at }) => at >= nowMs)
    .sort((a, b) => a.at - b.at || a.event.type.localeCompare(b.event.type))
    .map(({ event, at }) => ({ ...event, datetime_utc: new Date(at).toISOString(), days_until: daysBetween(from, event.date) }));
  const known = knownThrough(calendar);
  const coverage = types.map((type) => ({ type, known_through: known[type], complete: known[type] !== null && to <= known[type]! }));
  return { from, to, events, coverage };
}

/** One sentence per type whose dates stop inside the horizon. */
export function coverageWarnings(up: Upcoming): string[] {
  return up.coverage
    .filter((c) => !c.complete)
    .map((c) =>
      c.known_through === null
        ? `The calendar has no ${c.type} dates.`
        : `${c.type} dates are known only through ${c.known_through}; the horizon reaches ${up.to}, so later ${c.type} releases are not listed (not yet published or not yet added to the calendar file).`,
    );
}

/** Days of dates a kind of event must have left before the calendar says it is running out (/v1/status, the start-up warning). */
export const CALENDAR_RUNNING_OUT_DAYS = 60;

export interface RunningOut {
  type: MacroEventType;
  known_through: string | null;
  /** Days from today's New York date to known_through; 0 when it is today or past (nothing left). */
  days_left: number;
}

/** The kinds of event whose last date is fewer than CALENDAR_RUNNING_OUT_DAYS days away (or past), at `nowMs`. */
export function runningOut(calendar: MacroCalendar, nowMs: number): RunningOut[] {
  const today = newYorkDate(nowMs);
  const known = knownThrough(calendar);
  return (Object.keys(known) as MacroEventType[])
    .map((type) => ({ type, known_through: known[type], days_left: known[type] === null ? 0 : Math.max(0, daysBetween(today, known[type]!)) }))
    .filter((r) => r.days_left < CALENDAR_RUNNING_OUT_DAYS);
}

/** The start-up warning when some kind of event is running out; undefined when none is. */
export function runningOutWarning(calendar: MacroCalendar, file: string | null, nowMs: number): string | undefined {
  const short = runningOut(calendar, nowMs);
  if (short.length === 0) return undefined;
  const which = short.map((r) => (r.known_through === null ? `${r.type}: no dates` : `${r.type} through ${r.known_through} (${r.days_left === 0 ? 'none left' : `${r.days_left} days left`})`));
  return (
    `the macro calendar (${file ?? 'built-in'}) has fewer than ${CALENDAR_RUNNING_OUT_DAYS} days of dates left for ${which.join(', ')}: ` +
    '/v1/macro-calendar will list nothing of that kind after them. Add the next dates to a copy of src/data/macro-calendar.json and set MACRO_CALENDAR_FILE to it (docs/operating/macro-calendar.md)'
  );
}
