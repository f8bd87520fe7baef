// NYSE trading days from the exchange's own rules (NYSE Rule 7.2 and its holiday releases), so the
// calendar needs no upstream and no yearly table:
//   - ten holidays: New Year's Day, Martin Luther King Jr. Day (3rd Monday of January), Washington's
//     Birthday (3rd Monday of February), Good Friday (Easter Sunday − 2), Memorial Day (last Monday of
//     May), Juneteenth (June 19, from 2022), Independence Day (July 4), Labor Day (1st Monday of
//     September), Thanksgiving (4th Thursday of November), Christmas Day (December 25);
//   - a holiday on a Saturday closes the Friday before, on a Sunday the Monday after — except New
//     Year's Day on a Saturday, which is not observed at all (December 31 ends the accounting year;
//     NYSE releases for 2022 and 2028 say so);
//   - 13:00 early closes: July 3 when it is a Monday to Thursday, the day after Thanksgiving, and
//     Christmas Eve when it is a Monday to Thursday;
//   - closures outside the rules (national days of mourning) are listed in AD_HOC_CLOSURES.
// The regular session is 09:30–16:00 New York time. docs/using/macro-and-calendars.md has the sources.
import { addDays, weekday } from '../lib/new-york-time.ts';

export const REGULAR_OPEN = '09:30';
export const REGULAR_CLOSE = '16:00';
export const EARLY_CLOSE = '13:00';

export interface DatedName {
  date: string;
  name: string;
}

/** Full-day closures announced separately from the rules. */
export const AD_HOC_CLOSURES: readonly DatedName[] = [
  // NYSE closed for the national day of mourning for President Jimmy Carter (NYSE statement, Jan 2025).
  { date: '2025-01-09', name: 'National Day of Mourning for President Jimmy Carter' },
];

export type NyseDay =
  | { kind: 'weekend' }
  | { kind: 'holiday'; name: string }
  | { kind: 'trading'; open: string; close: string; early_close: string | null };

const iso = (y: number, m: number, d: number) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;

/** The n-th (1-based) `dow` of a month; n = −1 is the last one. */
function nthWeekday(year: number, month: number, dow: number, n: number): string {
  if (n > 0) {
    const first = weekday(iso(year, month, 1));
    return iso(year, month, 1 + ((dow - first + 7) % 7) + (n - 1) * 7);
  }
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const last = weekday(iso(year, month, lastDay));
  return iso(year, month, lastDay - ((last - dow + 7) % 7));
}

/** Easter Sunday of the Gregorian calendar (the anonymous Gregorian algorithm, "Meeus/Jones/Butcher"). */
export function easterSunday(year: number): string {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return iso(year, month, day);
}

/** A fixed-date holiday moved off the weekend: Saturday → Friday, Sunday → Monday. */
function observed(date: string, name: string): DatedName {
  const dow = weekday(date);
  if (dow === 6) return { date: addDays(date, -1), name: `${name} (observed)` };
  if (dow === 0) return { date: addDays(date, 1), name: `${name} (observed)` };
  return { date, name };
}

/** Full-day closures of a calendar year, by the rules plus the ad hoc list, in date order. */
export function nyseHolidays(year: number): DatedName[] {
  const days: DatedName[] = [];
  // New Year's Day: Sunday → Monday; Saturday → not observed (no Friday December 31 closure).
  const newYear = iso(year, 1, 1);
  if (weekday(newYear) !== 6) days.push(observed(newYear, "New Year's Day"));
  days.push({ date: nthWeekday(year, 1, 1, 3), name: 'Martin Luther King, Jr. Day' });
  days.push({ date: nthWeekday(year, 2, 1, 3), name: "Washington's Birthday" });
  days.push({ date: addDays(easterSunday(year), -2), name: 'Good Friday' });
  days.push({ date: nthWeekday(year, 5, 1, -1), name: 'Memorial Day' });
  if (year >= 2022) days.push(observed(iso(year, 6, 19), 'Juneteenth National Independence Day'));
  days.push(observed(iso(year, 7, 4), 'Independence Day'));
  days.push({ date: nthWeekday(year, 9, 1, 1), name: 'Labor Day' });
  days.push({ date: nthWeekday(year, 11, 4, 4), name: 'Thanksgiving Day' });
  days.push(observed(iso(year, 12, 25), 'Christmas Day'));
  days.push(...AD_HOC_CLOSURES.filter((c) => c.date.startsWith(`${year}-`)));
  return days.sort((a, b) => a.date.localeCompare(b.date));
}

/** 13:00 early closes of a calendar year, in date order. */
export function nyseEarlyCloses(year: number): DatedName[] {
  const days: DatedName[] = [];
  const july3 = iso(year, 7, 3);
  if (isMonToThu(july3)) days.push({ date: july3, name: 'Day before Independence Day' });
  days.push({ date: addDays(nthWeekday(year, 11, 4, 4), 1), name: 'Day after Thanksgiving' });
  const christmasEve = iso(year, 12, 24);
  if (isMonToThu(christmasEve)) days.push({ date: christmasEve, name: 'Christmas Eve' });
  return days;
}

function isMonToThu(date: string): boolean {
  const dow = weekday(date);
  return dow >= 1 && dow <= 4;
}

interface YearTable {
  holidays: Map<string, string>;
  early: Map<string, string>;
}

const years = new Map<number, YearTable>();

function yearTable(year: number): YearTable {
  let t = years.get(year);
  if (!t) {
    t = {
      holidays: new Map(nyseHolidays(year).map((h) => [h.date, h.name])),
      early: new Map(nyseEarlyCloses(year).map((h) => [h.date, h.name])),
    };
    years.set(year, t);
  }
  return t;
}

/** What kind of day a date is on the NYSE, with its session hours (New York time) when it trades. */
export function nyseDay(date: string): NyseDay {
  const dow = weekday(date);
  if (dow === 0 || dow === 6) return { kind: 'weekend' };
  const t = yearTable(Number(date.slice(0, 4)));
  const holiday = t.holidays.get(date);
  if (holiday) return { kind: 'holiday', name: holiday };
  const early = t.early.get(date) ?? null;
  return { kind: 'trading', open: REGULAR_OPEN, close: early ? EARLY_CLOSE : REGULAR_CLOSE, early_close: early };
}
