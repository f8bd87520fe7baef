// The NYSE clock (src/analytics/market-clock.ts, nyse-calendar.ts) against the exchange's published
// holiday tables for every day of 2025–2028 (test/fixtures/calendars/nyse-2025-2028.json, copied from
// the NYSE releases — not generated from the rules under test), at the session edges, and across
// daylight-saving changes. New York offsets here come from the US DST rule written out below, not
// from the module's Intl-based conversion.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holidaysAhead, marketClock } from '../../src/analytics/market-clock.ts';
import { easterSunday, nyseDay, nyseHolidays } from '../../src/analytics/nyse-calendar.ts';
import { makeApp, TEST_KEY, TEST_KEY_ENV, type TestApp } from '../helpers.ts';

interface Table {
  years: Record<string, { full_day_closures: { date: string; name: string }[]; early_closes_1300_et: { date: string; name: string }[] }>;
}
const TABLE = JSON.parse(readFileSync(new URL('../fixtures/calendars/nyse-2025-2028.json', import.meta.url), 'utf8')) as Table;
const CLOSED = new Map(Object.values(TABLE.years).flatMap((y) => y.full_day_closures.map((c) => [c.date, c.name] as const)));
const EARLY = new Map(Object.values(TABLE.years).flatMap((y) => y.early_closes_1300_et.map((c) => [c.date, c.name] as const)));

const DAY = 86_400_000;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dow = (date: string) => new Date(`${date}T12:00:00Z`).getUTCDay();

/** US DST (since 2007): from the second Sunday of March to the first Sunday of November. */
function isDst(date: string): boolean {
  const year = Number(date.slice(0, 4));
  const nthSunday = (month: number, n: number) => {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return dateOf(Date.UTC(year, month - 1, 1 + ((7 - first) % 7) + (n - 1) * 7));
  };
  return date >= nthSunday(3, 2) && date < nthSunday(11, 1);
}
const offset = (date: string) => (isDst(date) ? '-04:00' : '-05:00');
/** The instant of New York wall time `hh:mm:ss` on `date`. */
const at = (date: string, time: string) => Date.parse(`${date}T${time}${offset(date)}`);

function everyDay(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY) out.push(dateOf(t));
  return out;
}
const DAYS = everyDay('2025-01-01', '2028-12-31');

describe('NYSE days 2025–2028 match the exchange\'s published tables', () => {
  it('the table has every published closure and early close (40 and 8)', () => {
    expect(CLOSED.size).toBe(40);
    expect(EARLY.size).toBe(8);
    expect(DAYS).toHaveLength(1461);
  });

  it('every day has the kind, name and hours of the table', () => {
    const mismatches: string[] = [];
    for (const date of DAYS) {
      const got = nyseDay(date);
      const weekend = dow(date) === 0 || dow(date) === 6;
      const closed = CLOSED.get(date);
      const early = EARLY.get(date);
      let want: unknown;
      if (weekend) want = { kind: 'weekend' };
      else if (closed) want = { kind: 'holiday', name: closed.startsWith('National Day of Mourning') ? 'National Day of Mourning for President Jimmy Carter' : closed };
      else want = { kind: 'trading', open: '09:30', close: early ? '13:00' : '16:00', early_close: early ?? null };
      if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push(`${date}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('every day, the clock is open exactly from 09:30:00 to before the close, in the right offset', () => {
    const wrong: string[] = [];
    for (const date of DAYS) {
      const closed = dow(date) === 0 || dow(date) === 6 || CLOSED.has(date);
      const close = EARLY.has(date) ? '13:00' : '16:00';
      const probes: [string, boolean][] = [
        ['09:29:59', false],
        ['09:30:00', !closed],
        ['12:59:59', !closed],
        ['13:00:00', !closed && close === '16:00'],
        ['15:59:59', !closed && close === '16:00'],
        ['16:00:00', false],
      ];
      for (const [time, open] of probes) {
        const c = marketClock(at(date, time));
        if (c.is_open !== open || c.session !== (open ? 'open' : 'closed')) wrong.push(`${date} ${time}: is_open ${c.is_open}`);
        if (!c.now.startsWith(`${date}T${time}${offset(date)}`)) wrong.push(`${date} ${time}: now ${c.now}`);
      }
      const before = marketClock(at(date, '09:29:00'));
      if (!closed && before.next_open !== `${date}T09:30:00${offset(date)}`) wrong.push(`${date}: next_open ${before.next_open}`);
      if (!closed && before.next_close !== `${date}T${close}:00${offset(date)}`) wrong.push(`${date}: next_close ${before.next_close}`);
      if (!closed && before.reason !== 'pre-market') wrong.push(`${date}: reason ${before.reason}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('the reasons and the next open/close', () => {
  it('a Friday after the close, the weekend DST starts: next open Monday 09:30 EDT', () => {
    const c = marketClock(Date.parse('2025-03-07T16:30:00-05:00'));
    expect(c).toMatchObject({
      now: '2025-03-07T16:30:00-05:00',
      is_open: false,
      session: 'closed',
      reason: 'after hours',
      next_open: '2025-03-10T09:30:00-04:00',
      next_close: '2025-03-10T16:00:00-04:00',
      timezone: 'America/New_York',
    });
  });

  it('just after the spring-forward jump (03:00 EDT Sunday) it is a weekend; the next session is Monday in EDT', () => {
    const c = marketClock(Date.parse('2025-03-09T07:00:00Z'));
    expect(c).toMatchObject({ now: '2025-03-09T03:00:00-04:00', reason: 'weekend', next_open: '2025-03-10T09:30:00-04:00' });
  });

  it('across the fall-back weekend: Friday closes 16:00 EDT, Monday opens 09:30 EST', () => {
    const friday = marketClock(Date.parse('2025-10-31T15:59:59-04:00'));
    expect(friday).toMatchObject({ is_open: true, reason: 'regular session', next_close: '2025-10-31T16:00:00-04:00', next_open: '2025-11-03T09:30:00-05:00' });
    // 2025-11-02T06:30Z is 01:30 EST, after the 02:00 EDT → 01:00 EST change.
    const sunday = marketClock(Date.parse('2025-11-02T06:30:00Z'));
    expect(sunday).toMatchObject({ now: '2025-11-02T01:30:00-05:00', reason: 'weekend', next_open: '2025-11-03T09:30:00-05:00', next_close: '2025-11-03T16:00:00-05:00' });
    expect(sunday.upcoming_sessions[0]).toEqual({ date: '2025-11-03', open: '2025-11-03T09:30:00-05:00', close: '2025-11-03T16:00:00-05:00', early_close: false });
  });

  it('an early-close day: open at 12:59:59, closed at 13:00 with the reason; July 4 and the weekend skipped', () => {
    const open = marketClock(Date.parse('2025-07-03T12:59:59-04:00'));
    expect(open).toMatchObject({ is_open: true, reason: 'early close day: closes at 13:00 (Day before Independence Day)', next_close: '2025-07-03T13:00:00-04:00', next_open: '2025-07-07T09:30:00-04:00' });
    const closed = marketClock(Date.parse('2025-07-03T13:00:00-04:00'));
    expect(closed).toMatchObject({ is_open: false, reason: 'early close (Day before Independence Day)', next_open: '2025-07-07T09:30:00-04:00', next_close: '2025-07-07T16:00:00-04:00' });
  });

  it('a holiday names itself; the ad hoc 2025-01-09 closure is skipped by next_open', () => {
    expect(marketClock(Date.parse('2025-11-27T11:00:00-05:00'))).toMatchObject({ is_open: false, reason: 'Thanksgiving Day', next_open: '2025-11-28T09:30:00-05:00', next_close: '2025-11-28T13:00:00-05:00' });
    expect(marketClock(Date.parse('2025-01-08T16:00:00-05:00'))).toMatchObject({ reason: 'after hours', next_open: '2025-01-10T09:30:00-05:00' });
    expect(marketClock(Date.parse('2025-01-09T10:00:00-05:00'))).toMatchObject({ is_open: false, reason: 'National Day of Mourning for President Jimmy Carter' });
  });

  it('upcoming_sessions lists the next 5 sessions (today\'s when it has not closed) with early closes marked', () => {
    // Monday 2026-11-23, 10:00 EST: today, Tue, Wed, (Thanksgiving), Fri early close, Mon.
    const c = marketClock(Date.parse('2026-11-23T10:00:00-05:00'));
    expect(c.upcoming_sessions).toEqual([
      { date: '2026-11-23', open: '2026-11-23T09:30:00-05:00', close: '2026-11-23T16:00:00-05:00', early_close: false },
      { date: '2026-11-24', open: '2026-11-24T09:30:00-05:00', close: '2026-11-24T16:00:00-05:00', early_close: false },
      { date: '2026-11-25', open: '2026-11-25T09:30:00-05:00', close: '2026-11-25T16:00:00-05:00', early_close: false },
      { date: '2026-11-27', open: '2026-11-27T09:30:00-05:00', close: '2026-11-27T13:00:00-05:00', early_close: true },
      { date: '2026-11-30', open: '2026-11-30T09:30:00-05:00', close: '2026-11-30T16:00:00-05:00', early_close: false },
    ]);
    expect(c.holidays_ahead.slice(0, 3)).toEqual([
      { date: '2026-11-26', name: 'Thanksgiving Day' },
      { date: '2026-12-25', name: 'Christmas Day' },
      { date: '2027-01-01', name: "New Year's Day" },
    ]);
    // 365 days ahead reach 2027-11-23: the ten 2027 closures up to Labor Day plus Thanksgiving 2026 and Christmas 2026.
    expect(c.holidays_ahead.map((h) => h.date).at(-1)).toBe('2027-09-06');
  });

  it('New Year 2028 falls on a Saturday: Friday 2027-12-31 is a full session', () => {
    const c = marketClock(Date.parse('2027-12-31T10:00:00-05:00'));
    expect(c).toMatchObject({ is_open: true, reason: 'regular session', next_close: '2027-12-31T16:00:00-05:00', next_open: '2028-01-03T09:30:00-05:00' });
  });
});

describe('the rules', () => {
  it('Easter Sunday by the Gregorian computus (known dates)', () => {
    expect(['2024', '2025', '2026', '2027', '2028', '2038'].map((y) => easterSunday(Number(y)))).toEqual([
      '2024-03-31', '2025-04-20', '2026-04-05', '2027-03-28', '2028-04-16', '2038-04-25',
    ]);
  });

  it('a Sunday New Year is observed Monday (2034-01-02); a Saturday one is not moved to Friday (2033-01-01)', () => {
    expect(nyseHolidays(2034)[0]).toEqual({ date: '2034-01-02', name: "New Year's Day (observed)" });
    expect(nyseHolidays(2033).map((h) => h.date)).not.toContain('2032-12-31');
    expect(nyseHolidays(2033)[0]!.name).toBe('Martin Luther King, Jr. Day');
  });

  it('holidaysAhead spans a year boundary', () => {
    expect(holidaysAhead('2027-12-20', 30)).toEqual([{ date: '2027-12-24', name: 'Christmas Day (observed)' }, { date: '2028-01-17', name: 'Martin Luther King, Jr. Day' }]);
  });
});

describe('GET /v1/market-clock', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeApp(TEST_KEY_ENV);
  });
  afterAll(async () => t.app.close());
  const get = (qs: string, headers: Record<string, string> = TEST_KEY) => t.app.inject({ url: `/v1/market-clock${qs}`, headers });

  it('answers about `at` in any offset, written back in New York time, with no upstream source', async () => {
    // 2026-11-27T17:59:00Z = 12:59 EST on the day after Thanksgiving (13:00 early close).
    const res = await get('?at=2026-11-27T17:59:00Z');
    expect(res.statusCode, res.body).toBe(200);
    const { data, meta } = res.json();
    expect(data).toMatchObject({
      now: '2026-11-27T12:59:00-05:00',
      is_open: true,
      session: 'open',
      reason: 'early close day: closes at 13:00 (Day after Thanksgiving)',
      next_close: '2026-11-27T13:00:00-05:00',
      next_open: '2026-11-30T09:30:00-05:00',
      timezone: 'America/New_York',
    });
    expect(meta.sources).toEqual([]);
    expect(meta.note).toBeUndefined();
  });

  it('says when the dates shown go past the calendars the NYSE has published (2028)', async () => {
    const { meta } = (await get('?at=2028-06-01T12:00:00-04:00')).json();
    expect(meta.note).toBe("The NYSE has published its holidays through 2028; later dates here follow the exchange's rules.");
  });

  const ACCEPTED_AT = 'an ISO-8601 date-time with Z or a UTC offset, from 2025-01-01 to 2099-12-31 (2026-07-02T15:59:00-04:00)';
  it.each([
    ['2026-07-02', 'not written YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset ±HH:MM'],
    ['2026-07-02T15:59:00', 'not written YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset ±HH:MM'],
    ['yesterday', 'not written YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset ±HH:MM'],
    ['2024-12-31T23:59:00Z', 'outside 2025-01-01 to 2099-12-31'],
    ['2100-01-01T00:00:00Z', 'outside 2025-01-01 to 2099-12-31'],
    // Date.parse rolls these over (February 30 → March 2, 24:00 → the next day); they are refused instead.
    ['2026-02-30T10:00:00Z', 'not a day of the calendar: February 2026 has 28 days'],
    ['2026-13-01T10:00:00Z', 'not a day of the calendar: there is no month 13'],
    ['2026-07-02T24:00:00Z', 'not a time of day: 24:00:00'],
    ['2026-07-02T15:60:00Z', 'not a time of day: 15:60:00'],
    ['2026-07-02T15:59:00+15:00', 'not a UTC offset in use: +15:00 (offsets run from −12:00 to +14:00)'],
  ])('answers 400 for at=%s, naming the parameter, the form and why', async (at, why) => {
    const res = await get(`?at=${encodeURIComponent(at)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe(`query parameter 'at' must be ${ACCEPTED_AT}; '${at}' is ${why}`);
  });

  it('reads a lower-case t and z as RFC 3339 allows', async () => {
    const res = await get('?at=2026-11-27t12:59:00z');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.now).toBe('2026-11-27T07:59:00-05:00');
  });

  it('is a paid route', async () => {
    expect((await get('', {})).statusCode).toBe(401);
    expect((await get('')).statusCode).toBe(200);
  });
});
