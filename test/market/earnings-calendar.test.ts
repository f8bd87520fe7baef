// GET /v1/earnings-calendar against a fake Nasdaq serving the recorded 2024-07-03 calendar.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BROWSER_USER_AGENT } from '../../src/sources/yahoo.ts';
import { parseAsOf, parseCount, parseFiscalQuarter, parseUsd, parseUsDate, reportTiming } from '../../src/sources/nasdaq.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, NASDAQ_BASE_URL: url }), { headers: TEST_KEY });
const CALENDAR = '/api/calendar/earnings';
const DAY = 'nasdaq__calendar_earnings.json';
/** A day without reports, as public clients of this API record it: rows null. */
const EMPTY_DAY = (asOf: string) => ({ data: { asOf, headers: recorded(DAY).data.headers, rows: null }, message: null, status: { rCode: 200, bCodeMessage: null, developerMessage: null } });

afterEach(() => vi.useRealTimers());

describe('GET /v1/earnings-calendar', () => {
  it('parses the recorded day (2024-07-03): formatted strings to numbers or null', async () => {
    fake.route(`GET ${CALENDAR}`, { body: recorded(DAY) });
    const res = await get('/v1/earnings-calendar?date=2024-07-03');
    expect(res.statusCode, res.body).toBe(200);
    const call = fake.calls(CALENDAR)[0]!;
    expect(call.query.get('date')).toBe('2024-07-03');
    expect(call.headers).toMatchObject({ 'user-agent': BROWSER_USER_AGENT, origin: 'https://www.nasdaq.com', referer: 'https://www.nasdaq.com/' });
    const { data, meta } = res.json();
    expect(data).toMatchObject({ from: '2024-07-03', to: '2024-07-03', count: 22, days: [{ date: '2024-07-03', count: 22 }] });
    const bySymbol = Object.fromEntries(data.earnings.map((e: { symbol: string }) => [e.symbol, e]));
    // "$47,076,153,012", "$3.46", "10", "May/2024", "$2.91", "6/30/2023", time-pre-market
    expect(data.earnings[0]).toEqual({
      date: '2024-07-03', symbol: 'STZ', company: 'Constellation Brands Inc', timing: 'before_open', eps_estimate: 3.46, estimate_count: 10,
      market_cap_usd: 47076153012, fiscal_quarter_ending: '2024-05', prior_year_eps: 2.91, prior_year_report_date: '2023-06-30',
    });
    // epsForecast "" and noOfEsts "N/A" → null; lastYearRptDt and lastYearEPS "N/A" → null
    expect(bySymbol.HCM).toMatchObject({ timing: 'not_supplied', eps_estimate: null, estimate_count: null, market_cap_usd: 2983181468, prior_year_eps: null, prior_year_report_date: null });
    // "($0.29)" and "($0.11)": negative in parentheses
    expect(bySymbol.SPWR).toMatchObject({ eps_estimate: -0.29, estimate_count: 11, prior_year_eps: -0.11, prior_year_report_date: '2023-05-03' });
    // "$1" without cents; "($19.20)"; an empty marketCap "" → null
    expect(bySymbol.YOSH.prior_year_eps).toBe(1);
    expect(bySymbol.BJDX.prior_year_eps).toBe(-19.2);
    expect(bySymbol.LSDI).toMatchObject({ market_cap_usd: null, prior_year_eps: 3, fiscal_quarter_ending: '2024-03' });
    expect(data.earnings.map((e: { symbol: string }) => e.symbol).slice(0, 3)).toEqual(['STZ', 'HCM', 'SPWR']);
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'nasdaq', cached: false })]);
  });

  it('asks once per date; a weekend is an empty day, not an error', async () => {
    // Friday 2024-07-05 served with the recorded rows (a stand-in: only 2024-07-03 was recorded); Saturday and Sunday empty.
    const weekend: Record<string, string> = { '2024-07-06': 'Sat, Jul 6, 2024', '2024-07-07': 'Sun, Jul 7, 2024' };
    fake.route(`GET ${CALENDAR}`, (req) => {
      const date = req.query.get('date')!;
      if (date in weekend) return { body: EMPTY_DAY(weekend[date]!) };
      const friday = recorded(DAY);
      friday.data.asOf = 'Fri, Jul 5, 2024';
      return { body: friday };
    });
    const res = await get('/v1/earnings-calendar?date=2024-07-05&days=3');
    expect(fake.calls(CALENDAR).map((c) => c.query.get('date')).sort()).toEqual(['2024-07-05', '2024-07-06', '2024-07-07']);
    const { data, meta } = res.json();
    expect(data).toMatchObject({ from: '2024-07-05', to: '2024-07-07', count: 22, days: [{ date: '2024-07-05', count: 22, error: null }, { date: '2024-07-06', count: 0, error: null }, { date: '2024-07-07', count: 0, error: null }] });
    expect(new Set(data.earnings.map((e: { date: string }) => e.date))).toEqual(new Set(['2024-07-05']));
    expect(meta.sources).toHaveLength(1);
  });

  it("defaults to today's New York date (2026-11-23T03:00Z is 2026-11-22 in New York)", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2026-11-23T03:00:00Z'));
    fake.route(`GET ${CALENDAR}`, { body: EMPTY_DAY('Sun, Nov 22, 2026') });
    const { data } = (await get('/v1/earnings-calendar')).json();
    expect(data).toEqual({ from: '2026-11-22', to: '2026-11-22', count: 0, days: [{ date: '2026-11-22', count: 0, error: null }], earnings: [] });
  });

  it('answers 400 for a bad date or days', async () => {
    const accepted = 'a date YYYY-MM-DD, a real calendar day from 2000-01-01 to 2099-12-31 (2026-11-24)';
    expect((await get('/v1/earnings-calendar?date=2024-02-30')).json()).toEqual({
      error: `query parameter 'date' must be ${accepted}; '2024-02-30' is not a day of the calendar: February 2024 has 29 days`,
    });
    // Year 0000 is a calendar day but no date Nasdaq can answer for: out of the shared range.
    expect((await get('/v1/earnings-calendar?date=0000-01-01')).json()).toEqual({
      error: `query parameter 'date' must be ${accepted}; '0000-01-01' is outside 2000-01-01 to 2099-12-31`,
    });
    expect((await get('/v1/earnings-calendar?date=2024-7-3')).json()).toEqual({ error: `query parameter 'date' must be ${accepted}; '2024-7-3' is not written YYYY-MM-DD` });
    expect((await get('/v1/earnings-calendar?date=2024-07-03&days=15')).json()).toEqual({ error: "query parameter 'days' must be a whole number from 1 to 14" });
    expect(fake.requests).toHaveLength(0);
  });

  it.each<FailureCase>([
    ...upstreamFailures('nasdaq', { malformed: '{"data":{"rows":[' }),
    ['its error body', { body: { data: null, message: null, status: { rCode: 400, bCodeMessage: [{ code: 1001, errorMessage: 'Date is invalid' }], developerMessage: null } } }, 'nasdaq error: Date is invalid'],
    ['data null without a reason', { body: { data: null, message: null, status: { rCode: 200, bCodeMessage: null, developerMessage: null } } }, 'nasdaq returned an unexpected response shape at data'],
    ['the rows of another day (asOf Fri, Jul 5, 2024)', { body: (() => { const b = recorded(DAY); b.data.asOf = 'Fri, Jul 5, 2024'; return b; })() }, 'nasdaq answered for 2024-07-05 (asOf "Fri, Jul 5, 2024"), not for 2024-07-04'],
  ])('answers %s as 502 naming nasdaq when it is the only day asked', async (_n, reply, message, status = 502) => {
    fake.route(`GET ${CALENDAR}`, reply);
    const res = await get('/v1/earnings-calendar?date=2024-07-04');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'nasdaq' });
  });

  it.each<FailureCase>([
    ['HTTP 500', { status: 500, body: 'oops' }, 'nasdaq answered HTTP 500'],
    ['its error body', { body: { data: null, message: null, status: { rCode: 400, bCodeMessage: [{ code: 1001, errorMessage: 'Date is invalid' }], developerMessage: null } } }, 'nasdaq error: Date is invalid'],
    // Nasdaq answered the 4th with the recorded rows of the 3rd: those rows are not the 4th's, so the 4th is unknown.
    ['the rows of another day (asOf of the 3rd)', { body: recorded(DAY) }, 'nasdaq answered for 2024-07-03 (asOf "Wed, Jul 3, 2024"), not for 2024-07-04'],
  ])('one day failing (%s) does not fail the others: that day is count null with the error', async (_n, reply, message) => {
    fake.route(`GET ${CALENDAR}`, (req) => (req.query.get('date') === '2024-07-04' ? reply : { body: recorded(DAY) }));
    const res = await get('/v1/earnings-calendar?date=2024-07-03&days=2');
    expect(res.statusCode, res.body).toBe(200);
    const { data, meta } = res.json();
    expect(data).toMatchObject({
      from: '2024-07-03', to: '2024-07-04', count: 22,
      days: [{ date: '2024-07-03', count: 22, error: null }, { date: '2024-07-04', count: null, error: message }],
    });
    expect(new Set(data.earnings.map((e: { date: string }) => e.date))).toEqual(new Set(['2024-07-03']));
    expect(meta.sources).toHaveLength(1);
  });

  it('answers the first day\'s error when no day could be read', async () => {
    fake.route(`GET ${CALENDAR}`, { status: 500, body: 'oops' });
    const res = await get('/v1/earnings-calendar?date=2024-07-03&days=3');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'nasdaq answered HTTP 500', source: 'nasdaq' });
  });

  it('an odd money cell affects only that cell: parsed where unambiguous, else null (edited recorded day, 2 days)', async () => {
    const odd = recorded(DAY);
    odd.data.asOf = 'Thu, Jul 4, 2024';
    Object.assign(odd.data.rows[0], { epsForecast: '$-0.22', lastYearEPS: -0.22, marketCap: '$47.1B' });
    Object.assign(odd.data.rows[1], { epsForecast: '-$0.22', marketCap: 2983181468, noOfEsts: 'many', lastYearRptDt: '2023-06-30', fiscalQuarterEnding: 3 });
    Object.assign(odd.data.rows[2], { epsForecast: '(-$0.29)', lastYearEPS: '$1,234.5' });
    fake.route(`GET ${CALENDAR}`, (req) => (req.query.get('date') === '2024-07-04' ? { body: odd } : { body: recorded(DAY) }));
    const res = await get('/v1/earnings-calendar?date=2024-07-03&days=2');
    expect(res.statusCode, res.body).toBe(200);
    const { data } = res.json();
    expect(data.days).toEqual([{ date: '2024-07-03', count: 22, error: null }, { date: '2024-07-04', count: 22, error: null }]);
    const fourth = data.earnings.filter((e: { date: string }) => e.date === '2024-07-04');
    // "$-0.22" and the JSON number -0.22 read as −0.22; "$47.1B" is not a plain amount: null, the rest of the row kept.
    expect(fourth[0]).toEqual({
      date: '2024-07-04', symbol: 'STZ', company: 'Constellation Brands Inc', timing: 'before_open', eps_estimate: -0.22, estimate_count: 10,
      market_cap_usd: null, fiscal_quarter_ending: '2024-05', prior_year_eps: -0.22, prior_year_report_date: '2023-06-30',
    });
    // "-$0.22" → −0.22; a JSON number market cap as is; "many", an ISO date and a number quarter are not Nasdaq's forms: null.
    expect(fourth[1]).toMatchObject({ symbol: 'HCM', eps_estimate: -0.22, market_cap_usd: 2983181468, estimate_count: null, prior_year_report_date: null, fiscal_quarter_ending: null });
    // "(-$0.29)" says negative twice: ambiguous, null; "$1,234.5" → 1234.5.
    expect(fourth[2]).toMatchObject({ symbol: 'SPWR', eps_estimate: null, prior_year_eps: 1234.5, estimate_count: 11 });
  });
});

describe("Nasdaq's formatted strings", () => {
  it('reads dollars, counts, dates and quarters, and gives null for what it cannot read', () => {
    expect([parseUsd('$47,076,153,012'), parseUsd('($0.29)'), parseUsd('$1'), parseUsd('-$0.05'), parseUsd('$-0.22'), parseUsd('$1,234'), parseUsd('N/A'), parseUsd('')])
      .toEqual([47076153012, -0.29, 1, -0.05, -0.22, 1234, null, null]);
    expect([parseUsd(-0.22), parseUsd(3), parseUsd(null), parseUsd(undefined)]).toEqual([-0.22, 3, null, null]);
    // Ambiguous or not an amount: null, never a guess.
    for (const odd of ['($0.29', '(-$0.29)', '$-$1', '$1,23', '$47.1B', 'abc', '$', '1.2.3', Number.NaN, Number.POSITIVE_INFINITY, true, {}]) expect(parseUsd(odd), String(odd)).toBeNull();
    expect([parseCount('10'), parseCount(10), parseCount('N/A'), parseCount('ten'), parseCount(1.5)]).toEqual([10, 10, null, null, null]);
    expect([parseUsDate('6/30/2023'), parseUsDate('5/03/2023'), parseUsDate('N/A'), parseUsDate('2/30/2023'), parseUsDate(20230630)]).toEqual(['2023-06-30', '2023-05-03', null, null, null]);
    expect([parseFiscalQuarter('May/2024'), parseFiscalQuarter('Dec/2025'), parseFiscalQuarter(''), parseFiscalQuarter('Q2/2024')]).toEqual(['2024-05', '2025-12', null, null]);
    expect([parseAsOf('Wed, Jul 3, 2024'), parseAsOf('Sat, Jul 6, 2024'), parseAsOf('Jul 3, 2024'), parseAsOf('Fri, Feb 30, 2024'), parseAsOf('today')]).toEqual(['2024-07-03', '2024-07-06', '2024-07-03', null, null]);
    expect([reportTiming('time-pre-market'), reportTiming('time-after-hours'), reportTiming('time-not-supplied'), reportTiming(undefined)]).toEqual(['before_open', 'after_close', 'not_supplied', 'not_supplied']);
  });
});
