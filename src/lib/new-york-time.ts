// Wall-clock time in New York (America/New_York), where US markets and US releases keep their
// hours. Offsets come from the runtime's time-zone database through Intl.DateTimeFormat (Node ships
// full ICU), so daylight-saving changes are never hard-coded. Dates are plain `YYYY-MM-DD` strings.

export const NEW_YORK = 'America/New_York';

const DAY_MS = 86_400_000;

/** Made on first use: building a formatter for a time zone loads ICU's zone data (~20 ms at start-up otherwise). */
let formatter: Intl.DateTimeFormat | undefined;
const newYorkFormatter = () =>
  (formatter ??= new Intl.DateTimeFormat('en-US', {
    timeZone: NEW_YORK,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }));

export interface NewYorkParts {
  /** The New York calendar date, YYYY-MM-DD. */
  date: string;
  hour: number;
  minute: number;
  second: number;
  /** Offset from UTC in minutes: −300 in winter (EST), −240 in summer (EDT). */
  offsetMinutes: number;
}

/** The New York wall-clock reading of an instant (epoch ms). */
export function newYorkParts(ms: number): NewYorkParts {
  const p: Record<string, string> = {};
  for (const part of newYorkFormatter().formatToParts(new Date(ms))) p[part.type] = part.value;
  return {
    date: `${p.year}-${p.month}-${p.day}`,
    hour: Number(p.hour),
    minute: Number(p.minute),
    second: Number(p.second),
    offsetMinutes: parseOffset(p.timeZoneName ?? 'GMT'),
  };
}

/** "GMT-04:00" → −240; "GMT" → 0. */
function parseOffset(name: string): number {
  const m = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(name);
  if (!m) throw new Error(`unreadable time-zone offset ${name}`);
  if (!m[1]) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

/** Today's date in New York at `ms`. */
export const newYorkDate = (ms: number): string => newYorkParts(ms).date;

/**
 * The instant of a New York wall-clock time on a date (`hhmm` = "09:30"). Two passes settle the
 * offset of that very moment; the times used here (08:30 to 16:00) never fall in a DST gap or overlap.
 */
export function newYorkTime(date: string, hhmm: string): number {
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const [h, mi] = hhmm.split(':').map(Number) as [number, number];
  const asUtc = Date.UTC(y, mo - 1, d, h, mi);
  const first = asUtc - newYorkParts(asUtc).offsetMinutes * 60_000;
  const offset = newYorkParts(first).offsetMinutes;
  return asUtc - offset * 60_000;
}

/** ISO-8601 with New York's offset of that moment, to the second: 2025-07-03T13:00:00-04:00. */
export function isoNewYork(ms: number): string {
  const p = newYorkParts(ms);
  const sign = p.offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(p.offsetMinutes);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${p.date}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Calendar arithmetic on YYYY-MM-DD (no time zone involved). */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (both YYYY-MM-DD); negative when `to` is earlier. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/** Day of the week of a date: 0 = Sunday … 6 = Saturday. */
export function weekday(date: string): number {
  return new Date(`${date}T00:00:00Z`).getUTCDay();
}

/** A real calendar date written YYYY-MM-DD (2026-02-30 is not). */
export function isCalendarDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const t = Date.parse(`${s}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === s;
}
