// GET /v1/rates against a fake Treasury serving the recorded yield-curve CSV rows, at fixed dates.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { curveSignals, TENORS, type Curve } from '../../src/analytics/yield-curve.ts';
import { parseYieldCurveCsv } from '../../src/sources/treasury.ts';
import type { FakeReply } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recordedText } from '../fixtures.ts';
import { PAST_DEADLINE_MS, TEST_DEADLINE_MS, TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, TREASURY_BASE_URL: url, TREASURY_DEADLINE_MS: String(TEST_DEADLINE_MS) }), { headers: TEST_KEY });

const CSV_2026 = recordedText('treasury__daily_par_yield_curve_2026.TRIMMED.csv');
const CSV_2025 = recordedText('treasury__daily_par_yield_curve_2025_blank_cell.TRIMMED.csv');
const HEADER_ONLY = CSV_2026.split('\n')[0]! + '\n';
const path = (year: number) => `/resource-center/data-chart-center/interest-rates/daily-treasury-rates.csv/${year}/all`;
const serve = (year: number, reply: FakeReply) => fake.route(`GET ${path(year)}`, reply);

const curve = (values: number[]): Curve => Object.fromEntries(TENORS.map((t, i) => [t, values[i] ?? null])) as Curve;

function at(iso: string) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.parse(iso));
}
afterEach(() => vi.useRealTimers());

describe('GET /v1/rates', () => {
  it('reads the newest recorded 2026 row, its spreads and the row before', async () => {
    at('2026-10-06T16:00:00Z');
    serve(2026, { body: CSV_2026, headers: { 'content-type': 'text/csv' } });
    const res = await get('/v1/rates');
    expect(res.statusCode, res.body).toBe(200);
    const call = fake.calls(path(2026))[0]!;
    expect(Object.fromEntries(call.query)).toEqual({ type: 'daily_treasury_yield_curve', field_tdr_date_value: '2026', page: '', _format: 'csv' });
    const { data, meta } = res.json();
    expect(data).toEqual({
      date: '2026-10-05',
      curve: curve([4.05, 4.1, 4.13, 4.22, 4.27, 4.3, 4.47, 4.84, 4.97, 5.06, 5.19, 5.31, 5.7, 5.66]),
      // 10Y 5.31 − 2Y 4.84 = 0.47; 10Y 5.31 − 3M 4.22 = 1.09 (percentage points)
      spreads: { '10y_2y': 0.47, '10y_3m': 1.09 },
      inverted: { '10y_2y': false, '10y_3m': false },
      previous: { date: '2026-10-02', curve: curve([4.04, 4.09, 4.11, 4.19, 4.26, 4.27, 4.46, 4.83, 4.96, 5.06, 5.17, 5.28, 5.67, 5.63]) },
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'treasury', cached: false })]);
    expect(meta.fallback).toBeUndefined();
    expect(fake.calls(path(2025))).toHaveLength(0);
  });

  it('early in January, an empty current-year file falls back to the previous year (blank cell → null)', async () => {
    at('2026-01-02T15:00:00Z');
    serve(2026, { body: HEADER_ONLY });
    serve(2025, { body: CSV_2025 });
    const { data, meta } = (await get('/v1/rates')).json();
    // 2025-02-18: 10Y 4.55 − 2Y 4.29 = 0.26; 10Y 4.55 − 3M 4.34 = 0.21. 2025-02-14 has no 1.5-month yield (",,").
    expect(data).toMatchObject({ date: '2025-02-18', spreads: { '10y_2y': 0.26, '10y_3m': 0.21 } });
    expect(data.previous.date).toBe('2025-02-14');
    expect(data.previous.curve['1.5M']).toBeNull();
    expect(data.previous.curve['1M']).toBe(4.37);
    expect(meta.fallback).toEqual({ from: '2026', to: '2025', reason: 'the 2026 file has no rows yet' });
    expect(meta.sources).toHaveLength(1);
  });

  it('a current year with one row takes `previous` from the year before', async () => {
    at('2026-10-06T16:00:00Z');
    serve(2026, { body: CSV_2026.split('\n').slice(0, 2).join('\n') }); // header + 10/05/2026 only
    serve(2025, { body: CSV_2025 });
    const { data, meta } = (await get('/v1/rates')).json();
    expect(data.date).toBe('2026-10-05');
    expect(data.previous.date).toBe('2025-02-18');
    expect(meta.fallback).toBeUndefined();
  });

  it.each<[string, FakeReply, string]>([
    ['HTTP 500', { status: 500, body: 'oops' }, 'treasury answered HTTP 500'],
    ['a timeout', { delayMs: PAST_DEADLINE_MS, body: CSV_2025 }, `treasury did not answer within ${TEST_DEADLINE_MS} ms`],
  ])('on the first business day of a year, the previous-year file failing (%s) still serves the newest curve, previous null', async (_n, reply, error) => {
    at('2026-01-02T22:00:00Z');
    // EDITED recorded 2026 file: its newest row, dated 01/02/2026, alone (the year's first publication).
    const [header, newest] = CSV_2026.split('\n');
    serve(2026, { body: `${header}\n${newest!.replace('10/05/2026', '01/02/2026')}\n` });
    serve(2025, reply);
    const res = await get('/v1/rates');
    expect(res.statusCode, res.body).toBe(200);
    const { data, meta } = res.json();
    expect(data).toEqual({
      date: '2026-01-02',
      curve: curve([4.05, 4.1, 4.13, 4.22, 4.27, 4.3, 4.47, 4.84, 4.97, 5.06, 5.19, 5.31, 5.7, 5.66]),
      spreads: { '10y_2y': 0.47, '10y_3m': 1.09 },
      inverted: { '10y_2y': false, '10y_3m': false },
      previous: null,
    });
    expect(meta.previous_error).toEqual({ error: `the 2025 file, which holds the day before: ${error}`, source: 'treasury' });
    expect(meta.sources).toHaveLength(1);
  });

  it('early in January with no 2026 row yet, the 2025 file failing is a 502: the newest curve is unknown', async () => {
    at('2026-01-02T15:00:00Z');
    serve(2026, { body: HEADER_ONLY });
    serve(2025, { status: 500, body: 'oops' });
    const res = await get('/v1/rates');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'treasury answered HTTP 500', source: 'treasury' });
  });

  it('uses the New York year: 2027-01-01T03:00Z is still 2026 in New York', async () => {
    at('2027-01-01T03:00:00Z');
    serve(2026, { body: CSV_2026 });
    expect((await get('/v1/rates')).json().data.date).toBe('2026-10-05');
  });

  it('answers 502 when both years are empty (no row is made up)', async () => {
    at('2026-01-02T15:00:00Z');
    serve(2026, { body: '' });
    serve(2025, { body: HEADER_ONLY });
    const res = await get('/v1/rates');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'treasury returned no yield-curve rows for 2026 or 2025', source: 'treasury' });
  });

  it.each<FailureCase>([
    ...upstreamFailures('treasury', { malformed: '' }).filter(([name]) => name !== 'malformed JSON'),
    ['an HTML page with HTTP 200', { body: '<!DOCTYPE html><html><body>Maintenance</body></html>', headers: { 'content-type': 'text/html' } }, 'treasury error: returned HTML instead of CSV'],
    ['an unknown column', { body: 'Date,"1 Mo","15 Yr"\n10/05/2026,4.05,5.00\n' }, 'treasury returned an unexpected response shape'],
    ['a date that is not MM/DD/YYYY', { body: CSV_2026.replace('10/05/2026', '2026-10-05') }, 'treasury returned an unexpected response shape'],
    ['a yield that is not a number', { body: CSV_2026.replace('4.05', 'x') }, 'treasury returned an unexpected response shape'],
  ])('answers %s as a 502 naming treasury', async (_n, reply, message, status = 502) => {
    at('2026-10-06T16:00:00Z');
    serve(2026, reply);
    const res = await get('/v1/rates');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'treasury' });
  });
});

describe('yield-curve parsing and signals', () => {
  it('maps columns by name, keeps blanks and N/A as null, and sorts newest first', () => {
    const days = parseYieldCurveCsv('Date,"3 Mo","10 Yr","2 Yr"\r\n01/02/2025,N/A,4.57,\r\n01/03/2025,4.31,4.60,4.28\r\n');
    expect(days).toEqual([
      { date: '2025-01-03', curve: { ...curve([]), '3M': 4.31, '10Y': 4.6, '2Y': 4.28 } },
      { date: '2025-01-02', curve: { ...curve([]), '10Y': 4.57 } },
    ]);
    expect(curveSignals(days[1]!.curve)).toEqual({ spreads: { '10y_2y': null, '10y_3m': null }, inverted: { '10y_2y': null, '10y_3m': null } });
    expect(parseYieldCurveCsv('')).toEqual([]);
    expect(() => parseYieldCurveCsv('Date,"1 Mo"\n02/30/2025,4.1\n')).toThrow('is not MM/DD/YYYY');
    expect(() => parseYieldCurveCsv('Date,"1 Mo"\n02/03/2025,4.1,4.2\n')).toThrow('row 1 has 3 cells, the header 2');
  });

  it('an inverted curve: 10Y under 2Y and 3M', () => {
    // 10Y 4.00 − 2Y 4.25 = −0.25; 10Y 4.00 − 3M 4.50 = −0.5
    const c = { ...curve([]), '3M': 4.5, '2Y': 4.25, '10Y': 4.0 };
    expect(curveSignals(c)).toEqual({ spreads: { '10y_2y': -0.25, '10y_3m': -0.5 }, inverted: { '10y_2y': true, '10y_3m': true } });
  });
});
