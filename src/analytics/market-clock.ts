// The NYSE's state at an instant: open or closed and why, the next open and close, the next trading
// sessions and the holidays ahead. A pure function of the instant and the calendar rules
// (nyse-calendar.ts); times are written with New York's offset of that moment.
import { addDays, isoNewYork, NEW_YORK, newYorkParts, newYorkTime } from '../lib/new-york-time.ts';
import { nyseDay, nyseHolidays, type DatedName } from './nyse-calendar.ts';

export interface Session {
  date: string;
  /** Epoch ms. */
  open: number;
  close: number;
  /** Why the session closes at 13:00, or null for a full session. */
  earlyClose: string | null;
}

export interface MarketClock {
  now: string;
  is_open: boolean;
  session: 'open' | 'closed';
  reason: string;
  next_open: string;
  next_close: string;
  timezone: typeof NEW_YORK;
  upcoming_sessions: { date: string; open: string; close: string; early_close: boolean }[];
  holidays_ahead: DatedName[];
}

/** Sessions listed in upcoming_sessions. */
export const UPCOMING_SESSIONS = 5;
/** How far ahead holidays_ahead looks, in days. */
export const HOLIDAYS_AHEAD_DAYS = 365;
/** No run of closed days is longer than this (a long weekend next to a holiday is 4). */
const MAX_SEARCH_DAYS = 14;

const sessions = new Map<string, Session | null>();
/** Dates whose session is kept; a bound, since `at` can ask about any date. */
const SESSION_MEMO_SIZE = 4096;

/** The session of a date, or null when the exchange is closed all day. Memoised: it never changes. */
export function sessionOn(date: string): Session | null {
  const known = sessions.get(date);
  if (known !== undefined) return known;
  const day = nyseDay(date);
  const session = day.kind === 'trading' ? { date, open: newYorkTime(date, day.open), close: newYorkTime(date, day.close), earlyClose: day.early_close } : null;
  if (sessions.size >= SESSION_MEMO_SIZE) sessions.clear();
  sessions.set(date, session);
  return session;
}

/** The first sessions whose close is after `ms`, in order. */
export function sessionsAfter(ms: number, count: number): Session[] {
  const out: Session[] = [];
  let date = newYorkParts(ms).date;
  for (let i = 0; out.length < count && i < count * MAX_SEARCH_DAYS; i++, date = addDays(date, 1)) {
    const s = sessionOn(date);
    if (s && s.close > ms) out.push(s);
  }
  return out;
}

/** Why the exchange is closed at `ms` on `today`, given today's session (null on a closed day). */
function closedReason(today: string, session: Session | null, ms: number): string {
  const day = nyseDay(today);
  if (day.kind === 'weekend') return 'weekend';
  if (day.kind === 'holiday') return day.name;
  if (session && ms < session.open) return 'pre-market';
  return session?.earlyClose ? `early close (${session.earlyClose})` : 'after hours';
}

/**
 * The clock at `ms`. Open means `open <= ms < close` of today's session (09:30:00 is open, 16:00:00 is
 * closed). next_open is the next session's open strictly after `ms`; next_close is the close of the
 * session in progress, or else of the next session.
 */
export function marketClock(ms: number): MarketClock {
  const today = newYorkParts(ms).date;
  const session = sessionOn(today);
  const isOpen = session !== null && ms >= session.open && ms < session.close;
  const ahead = sessionsAfter(ms, UPCOMING_SESSIONS + 1);
  const nextOpen = ahead.find((s) => s.open > ms)!;
  const nextClose = isOpen ? session.close : nextOpen.close;
  const reason = isOpen
    ? session.earlyClose
      ? `early close day: closes at 13:00 (${session.earlyClose})`
      : 'regular session'
    : closedReason(today, session, ms);
  return {
    now: isoNewYork(ms),
    is_open: isOpen,
    session: isOpen ? 'open' : 'closed',
    reason,
    next_open: isoNewYork(nextOpen.open),
    next_close: isoNewYork(nextClose),
    timezone: NEW_YORK,
    upcoming_sessions: ahead.slice(0, UPCOMING_SESSIONS).map((s) => ({
      date: s.date,
      open: isoNewYork(s.open),
      close: isoNewYork(s.close),
      early_close: s.earlyClose !== null,
    })),
    holidays_ahead: holidaysAhead(today, HOLIDAYS_AHEAD_DAYS),
  };
}

/** Full-day closures (weekends aside) from `from` through `days` days later. */
export function holidaysAhead(from: string, days: number): DatedName[] {
  const to = addDays(from, days);
  const years = [Number(from.slice(0, 4)), Number(to.slice(0, 4))];
  const all = years[0] === years[1] ? nyseHolidays(years[0]!) : [...nyseHolidays(years[0]!), ...nyseHolidays(years[1]!)];
  return all.filter((h) => h.date >= from && h.date <= to);
}
