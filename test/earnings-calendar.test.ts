// GET /v1/earnings-calendar against a fake Nasdaq serving the recorded 2024-07-03 calendar.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BROWSER_USER_AGENT } from '../src/sources/yahoo.ts';
import { parseCount, parseFiscalQuarter, parseUsd, parseUsDate, reportTiming } from '../src/sources/nasdaq.ts';
import { upstreamFailures, type FailureCase } from './fakes/failures.ts';
import { recorded } from './fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from './helpers.ts';

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
    fake.route(`GET ${CALENDAR}`, (req) => (req.query.get('date') === '2024-07-05' ? { body: recorded(DAY) } : { body: EMPTY_DAY('Sat, Jul 6, 2024') }));
    const res = await get('/v1/earnings-calendar?date=2024-07-05&days=3');
    expect(fake.calls(CALENDAR).map((c) => c.query.get('date')).sort()).toEqual(['2024-07-05', '2024-07-06', '2024-07-07']);
    const { data, meta } = res.json();
    expect(data).toMatchObject({ from: '2024-07-05', to: '2024-07-07', count: 22, days: [{ date: '2024-07-05', count: 22 }, { date: '2024-07-06', count: 0 }, { date: '2024-07-07', count: 0 }] });
    expect(new Set(data.earnings.map((e: { date: string }) => e.date))).toEqual(new Set(['2024-07-05']));
    expect(meta.sources).toHaveLength(1);
  });

  it("defaults to today's New York date (2026-11-23T03:00Z is 2026-11-22 in New York)", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2026-11-23T03:00:00Z'));
    fake.route(`GET ${CALENDAR}`, { body: EMPTY_DAY('Sun, Nov 22, 2026') });
    const { data } = (await get('/v1/earnings-calendar')).json();
    expect(data).toEqual({ from: '2026-11-22', to: '2026-11-22', count: 0, days: [{ date: '2026-11-22', count: 0 }], earnings: [] });
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
    ['a market cap it cannot read', { body: (() => { const b = recorded(DAY); b.data.rows[0].marketCap = '$47.1B'; return b; })() }, 'nasdaq returned an unexpected response shape at data.rows.0.marketCap'],
    ['data null without a reason', { body: { data: null, message: null, status: { rCode: 200, bCodeMessage: null, developerMessage: null } } }, 'nasdaq returned an unexpected response shape at data'],
  ])('answers %s as 502 naming nasdaq (one failing day fails the answer)', async (_n, reply, message, status = 502) => {
    fake.route(`GET ${CALENDAR}`, (req) => (req.query.get('date') === '2024-07-04' ? reply : { body: recorded(DAY) }));
    const res = await get('/v1/earnings-calendar?date=2024-07-03&days=2');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'nasdaq' });
  });
});

describe("Nasdaq's formatted strings", () => {
  it('reads dollars, counts, dates and quarters, and refuses what it cannot read', () => {
    expect([parseUsd('$47,076,153,012'), parseUsd('($0.29)'), parseUsd('$1'), parseUsd('-$0.05'), parseUsd('N/A'), parseUsd('')]).toEqual([47076153012, -0.29, 1, -0.05, null, null]);
    expect(() => parseUsd('($0.29')).toThrow('is not a dollar amount');
    expect(() => parseUsd('47')).toThrow('is not a dollar amount');
    expect([parseCount('10'), parseCount('N/A')]).toEqual([10, null]);
    expect([parseUsDate('6/30/2023'), parseUsDate('5/03/2023'), parseUsDate('N/A')]).toEqual(['2023-06-30', '2023-05-03', null]);
    expect(() => parseUsDate('2/30/2023')).toThrow('is not a M/D/YYYY date');
    expect([parseFiscalQuarter('May/2024'), parseFiscalQuarter('Dec/2025'), parseFiscalQuarter('')]).toEqual(['2024-05', '2025-12', null]);
    expect(() => parseFiscalQuarter('Q2/2024')).toThrow('is not a Mon/YYYY fiscal quarter end');
    expect([reportTiming('time-pre-market'), reportTiming('time-after-hours'), reportTiming('time-not-supplied'), reportTiming(undefined)]).toEqual(['before_open', 'after_close', 'not_supplied', 'not_supplied']);
  });
});
