// The one date / date-time rule of every route that takes one (src/params/dates.ts): a real day of the
// calendar, a real time of day, a sane offset, a range of years; never rolled over as Date.parse does.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { calendarDateProblem, dateParam, dateTimeParam, dateTimeProblem } from '../../src/params/dates.ts';

describe('calendarDateProblem', () => {
  it.each(['2024-02-29', '2026-12-31', '2000-01-01'])('%s is a day', (d) => expect(calendarDateProblem(d)).toBeUndefined());
  it.each([
    ['2026-02-29', 'not a day of the calendar: February 2026 has 28 days'],
    ['2026-04-31', 'not a day of the calendar: April 2026 has 30 days'],
    ['2026-00-10', 'not a day of the calendar: there is no month 00'],
    ['2026-01-00', 'not a day of the calendar: January 2026 has 31 days'],
    ['26-01-01', 'not written YYYY-MM-DD'],
    ['2026-1-1', 'not written YYYY-MM-DD'],
  ])('%s: %s', (d, why) => expect(calendarDateProblem(d)).toBe(why));
});

describe('dateTimeProblem', () => {
  it.each(['2026-07-02T15:59Z', '2026-07-02T15:59:00.123456789-04:00', '2026-07-02t15:59:00z', '2026-07-02T23:59:59+14:00', '2026-07-02T00:00:00-12:00'])(
    '%s is a date-time',
    (v) => expect(dateTimeProblem(v)).toBeUndefined(),
  );
  it.each([
    ['2026-02-30T10:00:00Z', 'not a day of the calendar: February 2026 has 28 days'],
    ['2026-07-02T24:00Z', 'not a time of day: 24:00'],
    ['2026-07-02T12:00:61Z', 'not a time of day: 12:00:61'],
    ['2026-07-02T12:00:00+05:60', 'not a UTC offset in use: +05:60 (offsets run from −12:00 to +14:00)'],
    ['2026-07-02 12:00:00Z', 'not written YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset ±HH:MM'],
  ])('%s: %s', (v, why) => expect(dateTimeProblem(v)).toBe(why));
});

describe('the zod parameters', () => {
  const q = z.object({ date: dateParam('Day.'), at: dateTimeParam('Moment.', '2026-07-02T15:59:00-04:00') });
  const issue = (input: Record<string, string>) => q.safeParse(input).error?.issues[0]?.message;

  it('take a real date and date-time and hand the date-time on upper-cased', () => {
    expect(q.parse({ date: '2026-11-24', at: '2026-07-02t15:59:00z' })).toEqual({ date: '2026-11-24', at: '2026-07-02T15:59:00Z' });
    expect(q.parse({})).toEqual({});
  });

  it('refuse years outside 2000-2099 by default, naming the form and the range', () => {
    expect(issue({ date: '0000-01-01' })).toBe("must be a date YYYY-MM-DD, a real calendar day from 2000-01-01 to 2099-12-31 (2026-11-24); '0000-01-01' is outside 2000-01-01 to 2099-12-31");
    expect(issue({ at: '9999-12-31T00:00:00Z' })).toBe(
      "must be an ISO-8601 date-time with Z or a UTC offset, from 2000-01-01 to 2099-12-31 (2026-07-02T15:59:00-04:00); '9999-12-31T00:00:00Z' is outside 2000-01-01 to 2099-12-31",
    );
  });

  it('take the range as instants: the last day counts to its end in UTC', () => {
    expect(issue({ at: '2099-12-31T23:59:59Z' })).toBeUndefined();
    expect(issue({ at: '2099-12-31T20:00:00-05:00' })).toMatch(/is outside/); // 2100-01-01T01:00Z
  });
});
