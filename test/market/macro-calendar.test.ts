// GET /v1/macro-calendar at a fixed `now` against a fake Kalshi, the calendar file (built-in and
// MACRO_CALENDAR_FILE), the coverage warnings, and the Fed-odds arithmetic.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runningOut, upcomingEvents } from '../../src/analytics/macro-calendar.ts';
import { addDays, newYorkDate } from '../../src/lib/new-york-time.ts';
import { fedBucket, fedOdds } from '../../src/analytics/prediction-markets.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { BUILT_IN_MACRO_CALENDAR, knownThrough } from '../../src/data/macro-calendar.ts';
import { fedDecisionEventTicker } from '../../src/sources/kalshi.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, PAST_DEADLINE_MS, TEST_DEADLINE_MS, useFakeUpstreamApp } from '../helpers.ts';

const { fake, get } = useFakeUpstreamApp((url) => ({ KALSHI_BASE_URL: url, FREE_RATE_LIMIT: '100000' }));

/** 2026-10-06 08:00 in New York (EDT), two hours after the recorded Kalshi capture. */
const NOW = Date.parse('2026-10-06T12:00:00Z');
const FED_EVENTS = 'kalshi_events_KXFEDDECISION_open_nested.TRIMMED.json';

/**
 * The December 2026 meeting's event, rebuilt from the recorded October one with the quotes the capture
 * notes list for KXFEDDECISION-26DEC (bid/ask, last): C26 0.00/0.01 0.01; C25 0.01/0.02 0.02;
 * H0 0.25/0.27 0.26; H25 0.72/0.74 0.74; H26 0.02/0.03 0.02. Sizes were not noted: "" (unknown).
 */
function december() {
  const e = recorded(FED_EVENTS).events[0];
  const quotes: Record<string, [string, string, string]> = {
    C26: ['0.0000', '0.0100', '0.0100'], C25: ['0.0100', '0.0200', '0.0200'], H0: ['0.2500', '0.2700', '0.2600'],
    H25: ['0.7200', '0.7400', '0.7400'], H26: ['0.0200', '0.0300', '0.0200'],
  };
  e.event_ticker = 'KXFEDDECISION-26DEC';
  e.markets = e.markets.map((m: Record<string, string>) => {
    const suffix = m.ticker!.split('-').at(-1)!;
    const [bid, ask, last] = quotes[suffix]!;
    return { ...m, ticker: `KXFEDDECISION-26DEC-${suffix}`, event_ticker: 'KXFEDDECISION-26DEC', yes_bid_dollars: bid, yes_ask_dollars: ask, last_price_dollars: last, yes_bid_size_fp: '', yes_ask_size_fp: '' };
  });
  return e;
}

const OCT_ODDS = {
  event_ticker: 'KXFEDDECISION-26OCT',
  // cut: C26 no bid → last 0.01, C25 no bid → last 0.01: 0.02; hold: H0 (0.79 + 0.80) / 2 = 0.795;
  // hike: H25 (0.20 + 0.21) / 2 = 0.205 + H26 no bid → last 0.01 = 0.215; sum 1.03.
  // Normalised: 0.02 / 1.03, 0.795 / 1.03, 0.215 / 1.03.
  cut: 0.0194174757282,
  hold: 0.771844660194,
  hike: 0.208737864078,
  raw: { cut: 0.02, hold: 0.795, hike: 0.215, sum: 1.03 },
  markets: [
    { ticker: 'KXFEDDECISION-26OCT-C26', bucket: 'cut', price: 0.01, basis: 'last_price' },
    { ticker: 'KXFEDDECISION-26OCT-C25', bucket: 'cut', price: 0.01, basis: 'last_price' },
    { ticker: 'KXFEDDECISION-26OCT-H0', bucket: 'hold', price: 0.795, basis: 'mid' },
    { ticker: 'KXFEDDECISION-26OCT-H25', bucket: 'hike', price: 0.205, basis: 'mid' },
    { ticker: 'KXFEDDECISION-26OCT-H26', bucket: 'hike', price: 0.01, basis: 'last_price' },
  ],
  source: 'kalshi',
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => vi.useRealTimers());

describe('upcoming events at a fixed now (2026-10-06 08:00 EDT, 90 days → 2027-01-04)', () => {
  it('lists them in time order with New York dates, UTC instants across the DST change, and days_until', () => {
    const up = upcomingEvents(BUILT_IN_MACRO_CALENDAR.calendar, NOW, 90, ['fomc', 'cpi', 'jobs']);
    expect(up.from).toBe('2026-10-06');
    expect(up.to).toBe('2027-01-04');
    // The jobs report of 2026-10-02 is past. 08:30 EDT = 12:30Z until 2026-11-01, then 08:30 EST = 13:30Z;
    // 14:00 EDT = 18:00Z (Kalshi's strike_date of 26OCT), 14:00 EST = 19:00Z (26DEC's).
    expect(up.events.map((e) => [e.type, e.date, e.datetime_utc, e.days_until])).toEqual([
      ['cpi', '2026-10-14', '2026-10-14T12:30:00.000Z', 8],
      ['fomc', '2026-10-28', '2026-10-28T18:00:00.000Z', 22],
      ['jobs', '2026-11-06', '2026-11-06T13:30:00.000Z', 31],
      ['cpi', '2026-11-10', '2026-11-10T13:30:00.000Z', 35],
      ['jobs', '2026-12-04', '2026-12-04T13:30:00.000Z', 59],
      ['fomc', '2026-12-09', '2026-12-09T19:00:00.000Z', 64],
      ['cpi', '2026-12-10', '2026-12-10T13:30:00.000Z', 65],
    ]);
    expect(up.coverage).toEqual([
      { type: 'fomc', known_through: '2028-01-26', complete: true },
      { type: 'cpi', known_through: '2026-12-10', complete: false },
      { type: 'jobs', known_through: '2026-12-04', complete: false },
    ]);
  });

  it('drops an event whose moment has passed today, and keeps one later today (days_until 0)', () => {
    // 2026-10-14 at 09:00 EDT: the CPI of 08:30 is past; the same day at 08:00 it is 0 days away.
    const after = upcomingEvents(BUILT_IN_MACRO_CALENDAR.calendar, Date.parse('2026-10-14T13:00:00Z'), 30, ['cpi']);
    expect(after.events.map((e) => e.date)).toEqual(['2026-11-10']);
    const before = upcomingEvents(BUILT_IN_MACRO_CALENDAR.calendar, Date.parse('2026-10-14T12:00:00Z'), 30, ['cpi']);
    expect(before.events[0]).toMatchObject({ date: '2026-10-14', days_until: 0 });
  });
});

describe('GET /v1/macro-calendar', () => {
  it('answers the upcoming events with Kalshi odds for each FOMC meeting it lists', async () => {
    const body = recorded(FED_EVENTS);
    body.events.push(december());
    fake.route('GET /events', { body });
    const res = await get('/v1/macro-calendar');
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.fromEntries(fake.calls('/events')[0]!.query)).toEqual({ series_ticker: 'KXFEDDECISION', status: 'open', with_nested_markets: 'true', limit: '200' });
    const { data, meta } = res.json();
    expect(data).toMatchObject({ from: '2026-10-06', to: '2027-01-04', count: 7 });
    const october = data.events[1];
    expect(october).toEqual({
      type: 'fomc',
      name: 'FOMC rate decision',
      date: '2026-10-28',
      time_et: '14:00',
      datetime_utc: '2026-10-28T18:00:00.000Z',
      days_until: 22,
      reference_period: null,
      sep: false,
      source_url: 'https://www.federalreserve.gov/monetarypolicy/fomccalendars.htm',
      verified: true,
      note: expect.stringContaining('Two-day meeting 2026-10-27 to 2026-10-28'),
      odds: { ...OCT_ODDS, as_of: meta.sources[0].fetched_at },
      odds_unavailable: null,
    });
    // December from the noted quotes: cut 0.01 (C26 last) + 0.015 (C25 mid) = 0.025; hold 0.26 (mid of 0.25/0.27);
    // hike 0.73 (H25 mid) + 0.025 (H26 mid) = 0.755; sum 1.04 → 0.025 / 1.04, 0.26 / 1.04 = 0.25, 0.755 / 1.04.
    expect(data.events[5].odds).toMatchObject({ event_ticker: 'KXFEDDECISION-26DEC', cut: 0.0240384615385, hold: 0.25, hike: 0.725961538462, raw: { cut: 0.025, hold: 0.26, hike: 0.755, sum: 1.04 } });
    expect(data.events[5].sep).toBe(true);
    // The CPI of 2026-10-14: BLS month September, known from secondary copies only.
    expect(data.events[0]).toMatchObject({ type: 'cpi', name: 'CPI release, September 2026', reference_period: '2026-09', sep: null, verified: false, odds: null, odds_unavailable: null, source_url: 'https://www.bls.gov/schedule/news_release/cpi.htm' });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'kalshi', cached: false })]);
    expect(meta.calendar_file).toBe('built-in');
    expect(meta.warnings).toEqual([
      'cpi dates are known only through 2026-12-10; the horizon reaches 2027-01-04, so later cpi releases are not listed (not yet published or not yet added to the calendar file).',
      'jobs dates are known only through 2026-12-04; the horizon reaches 2027-01-04, so later jobs releases are not listed (not yet published or not yet added to the calendar file).',
    ]);
    expect(meta.odds_error).toBeUndefined();
  });

  it('prices a one-sided market inside its quote: H25 with no bid, ask 0.02 and an old trade at 0.30 counts 0.02', async () => {
    const body = recorded(FED_EVENTS);
    const h25 = body.events[0].markets.find((m: { ticker: string }) => m.ticker.endsWith('-H25'));
    Object.assign(h25, { yes_bid_dollars: '0.0000', yes_bid_size_fp: '0.00', yes_ask_dollars: '0.0200', last_price_dollars: '0.3000' });
    fake.route('GET /events', { body });
    const { data } = (await get('/v1/macro-calendar?type=fomc')).json();
    // cut 0.01 + 0.01 = 0.02; hold 0.795; hike: H25 last 0.30 clamped to its ask 0.02, + H26 0.01 = 0.03; sum 0.845.
    // With the unclamped 0.30 the hike would read 0.31 / 1.125 = 0.28.
    expect(data.events[0].odds).toMatchObject({
      raw: { cut: 0.02, hold: 0.795, hike: 0.03, sum: 0.845 },
      cut: 0.0236686390533, hold: 0.940828402367, hike: 0.0355029585799,
    });
    expect(data.events[0].odds.markets[3]).toEqual({ ticker: 'KXFEDDECISION-26OCT-H25', bucket: 'hike', price: 0.02, basis: 'last_price_clamped' });
  });

  it('says why a meeting has no odds when Kalshi lists no open event for it', async () => {
    fake.route('GET /events', { body: recorded(FED_EVENTS) });
    const { data } = (await get('/v1/macro-calendar?type=fomc')).json();
    expect(data.events.map((e: { date: string }) => e.date)).toEqual(['2026-10-28', '2026-12-09']);
    expect(data.events[1]).toMatchObject({ odds: null, odds_unavailable: 'Kalshi lists no open KXFEDDECISION-26DEC event' });
  });

  it.each([
    ['HTTP 500', { status: 500, body: 'oops' }, 'kalshi failed: kalshi answered HTTP 500'],
    ['a timeout', { delayMs: PAST_DEADLINE_MS, body: {} }, `kalshi failed: kalshi did not answer within ${TEST_DEADLINE_MS} ms`],
    ['a drifted body', { body: { events: 'none' } }, 'kalshi failed: kalshi returned an unexpected response shape at events'],
  ])('still answers 200 from its own dates when Kalshi fails (%s): odds null with the reason', async (_n, reply, reason) => {
    fake.route('GET /events', reply);
    const res = await get('/v1/macro-calendar');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    expect(data.count).toBe(7);
    const fomc = data.events.filter((e: { type: string }) => e.type === 'fomc');
    expect(fomc).toHaveLength(2);
    for (const e of fomc) expect(e).toMatchObject({ odds: null, odds_unavailable: reason });
    expect(meta.odds_error).toEqual({ error: reason, source: 'kalshi' });
    expect(meta.sources).toEqual([]);
  });

  it('type=cpi lists CPI releases only and does not ask Kalshi; days bounds the horizon', async () => {
    // 40 days from 2026-10-06 reach 2026-11-15: two CPI releases, both inside the known dates.
    const res = await get('/v1/macro-calendar?type=cpi&days=40');
    const { data, meta } = res.json();
    expect(data.events.map((e: { date: string }) => e.date)).toEqual(['2026-10-14', '2026-11-10']);
    expect(meta.coverage).toEqual([{ type: 'cpi', known_through: '2026-12-10', complete: true }]);
    expect(meta.warnings).toBeUndefined();
    expect(fake.requests).toHaveLength(0);
  });

  it('answers 400 for a bad type or horizon', async () => {
    expect((await get('/v1/macro-calendar?type=gdp')).json()).toEqual({ error: "query parameter 'type' must be one of fomc, cpi, jobs" });
    expect((await get('/v1/macro-calendar?days=401')).json()).toEqual({ error: "query parameter 'days' must be a whole number from 1 to 400" });
    expect((await get('/v1/macro-calendar?days=0')).statusCode).toBe(400);
  });

  it('/v1/status shows up to which date each type is known', async () => {
    const { data } = (await get('/v1/status')).json();
    expect(data.calendar).toMatchObject({ file: 'built-in', known_through: { fomc: '2028-01-26', cpi: '2026-12-10', jobs: '2026-12-04' } });
  });
});

describe('MACRO_CALENDAR_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'macro-calendar-'));
  const write = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const event = (over: Record<string, unknown> = {}) => ({
    type: 'cpi', name: 'CPI release, December 2026', date: '2027-01-13', time_et: '08:30', reference_period: '2026-12',
    sep: null, source_url: 'https://www.bls.gov/schedule/news_release/cpi.htm', verified: true, note: null, ...over,
  });

  it('an updated file replaces the shipped one: the endpoint and /v1/status use it', async () => {
    const path = write('ok.json', { schema_version: 1, events: [event()] });
    const config = loadConfig({ MACRO_CALENDAR_FILE: path });
    expect(config.macroCalendar.file).toBe(path);
    expect(knownThrough(config.macroCalendar.calendar)).toEqual({ fomc: null, cpi: '2027-01-13', jobs: null });
    const t = await makeApp({ MACRO_CALENDAR_FILE: path });
    try {
      const cal = (await t.app.inject('/v1/macro-calendar?days=100')).json();
      expect(cal.data.events).toEqual([expect.objectContaining({ date: '2027-01-13', days_until: 99, verified: true, datetime_utc: '2027-01-13T13:30:00.000Z' })]);
      expect(cal.meta.calendar_file).toBe(path);
      expect(cal.meta.warnings).toEqual(['The calendar has no fomc dates.', 'cpi dates are known only through 2027-01-13; the horizon reaches 2027-01-14, so later cpi releases are not listed (not yet published or not yet added to the calendar file).', 'The calendar has no jobs dates.']);
      expect((await t.app.inject('/v1/status')).json().data.calendar).toMatchObject({ file: path, known_through: { fomc: null, cpi: '2027-01-13', jobs: null } });
    } finally {
      await t.app.close();
    }
  });

  it.each([
    ['a date that does not exist', () => write('bad-date.json', { schema_version: 1, events: [event({ date: '2027-02-30' })] }), 'events.0.date: a real date written YYYY-MM-DD'],
    ['a missing verified flag', () => write('no-flag.json', { schema_version: 1, events: [{ ...event(), verified: undefined }] }), 'events.0.verified: Invalid input: expected boolean, received undefined'],
    ['sep on a CPI event', () => write('sep.json', { schema_version: 1, events: [event({ sep: true })] }), 'events.0.sep: sep is for FOMC events only (null otherwise)'],
    ['a misspelt field', () => write('typo.json', { schema_version: 1, events: [{ ...event(), verifed: true }] }), 'events.0: Unrecognized key: "verifed"'],
    ['no events', () => write('empty.json', { schema_version: 1, events: [] }), 'events: Too small: expected array to have >=1 items'],
    ['not JSON', () => write('text.json', 'dates: soon'), 'not JSON'],
    ['a missing file', () => join(dir, 'absent.json'), 'ENOENT'],
  ])('stops start-up naming the variable for %s', (_n, path, why) => {
    const p = path();
    expect(() => loadConfig({ MACRO_CALENDAR_FILE: p })).toThrow(ConfigError);
    expect(() => loadConfig({ MACRO_CALENDAR_FILE: p })).toThrow(`MACRO_CALENDAR_FILE=${JSON.stringify(p)} is invalid: expected a readable JSON file in the macro-calendar schema (`);
    expect(() => loadConfig({ MACRO_CALENDAR_FILE: p })).toThrow(why);
  });

  it('a kind of event with fewer than 60 days of dates left: /v1/status lists it, and the start-up warns naming it', async () => {
    const today = newYorkDate(Date.now());
    const path = write('short.json', {
      schema_version: 1,
      events: [
        event({ date: addDays(today, 10) }),
        event({ type: 'jobs', name: 'Employment Situation', date: addDays(today, 100) }),
        event({ type: 'fomc', name: 'FOMC decision', date: addDays(today, 59), time_et: '14:00', sep: false, source_url: 'https://www.federalreserve.gov/monetarypolicy/fomccalendars.htm' }),
      ],
    });
    const t = await makeApp({ MACRO_CALENDAR_FILE: path });
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { running_out } = (await t.app.inject('/v1/status')).json().data.calendar;
      expect(running_out).toEqual([
        { type: 'fomc', known_through: addDays(today, 59), days_left: 59 },
        { type: 'cpi', known_through: addDays(today, 10), days_left: 10 },
      ]);
      const warning = t.logs.map((l) => JSON.parse(l)).find((l) => l.level === 40 && /macro calendar/.test(l.msg));
      expect(warning?.msg).toContain(`has fewer than 60 days of dates left for fomc through ${addDays(today, 59)} (59 days left), cpi through ${addDays(today, 10)} (10 days left)`);
      expect(warning?.msg).toContain('MACRO_CALENDAR_FILE');
      expect(warning?.msg).toContain('docs/operating/macro-calendar.md');
    } finally {
      await t.app.close();
    }
  });

  it('running out is counted from today: the shipped CPI and jobs dates at 2026-10-06 and on 2026-12-07', () => {
    const cal = BUILT_IN_MACRO_CALENDAR.calendar;
    expect(runningOut(cal, NOW)).toEqual([{ type: 'jobs', known_through: '2026-12-04', days_left: 59 }]);
    expect(runningOut(cal, Date.parse('2026-12-07T17:00:00Z'))).toEqual([
      { type: 'cpi', known_through: '2026-12-10', days_left: 3 },
      { type: 'jobs', known_through: '2026-12-04', days_left: 0 },
    ]);
  });

  it('the shipped file: every event has an official https source; CPI and jobs end in December 2026 (BLS had not published 2027)', () => {
    const cal = BUILT_IN_MACRO_CALENDAR.calendar;
    expect(cal.events.length).toBe(71);
    for (const e of cal.events) expect(e.source_url).toMatch(/^https:\/\/www\.(federalreserve|bls)\.gov\//);
    expect(knownThrough(cal)).toEqual({ fomc: '2028-01-26', cpi: '2026-12-10', jobs: '2026-12-04' });
    // FOMC dates come from the Fed's releases; 2026 BLS dates only from third-party copies of its schedule.
    expect(cal.events.filter((e) => e.type === 'fomc').every((e) => e.verified)).toBe(true);
    expect(cal.events.filter((e) => e.type !== 'fomc' && e.date >= '2026-03-01').some((e) => e.verified)).toBe(false);
  });
});

describe('Fed-decision odds', () => {
  it('classifies the buckets by custom strike, else by ticker suffix', () => {
    expect(fedBucket('X', { Cut: '>25' })).toBe('cut');
    expect(fedBucket('X', { Hike: '0' })).toBe('hold');
    expect(fedBucket('X', { Hike: '25' })).toBe('hike');
    expect(fedBucket('KXFEDDECISION-27JAN-C25', null)).toBe('cut');
    expect(fedBucket('KXFEDDECISION-27JAN-H0', null)).toBe('hold');
    expect(fedBucket('KXFEDDECISION-27JAN-H26', null)).toBe('hike');
    expect(fedBucket('KXFED-27APR-T5.00', null)).toBeNull();
  });

  it('normalises the recorded October event, and refuses to guess a market it cannot price or place', () => {
    const markets = recorded(FED_EVENTS).events[0].markets.map((m: Record<string, unknown>) => ({
      ticker: m.ticker, custom_strike: m.custom_strike,
      yes_bid: Number(m.yes_bid_dollars), yes_bid_size: Number(m.yes_bid_size_fp), yes_ask: Number(m.yes_ask_dollars), yes_ask_size: Number(m.yes_ask_size_fp), last_price: Number(m.last_price_dollars),
    }));
    const got = fedOdds(markets);
    expect(got).toEqual({ odds: { cut: OCT_ODDS.cut, hold: OCT_ODDS.hold, hike: OCT_ODDS.hike, raw: OCT_ODDS.raw, markets: OCT_ODDS.markets } });
    expect(fedOdds([{ ...markets[0], yes_ask: 1, last_price: 0 }, ...markets.slice(1)])).toEqual({ reason: 'market KXFEDDECISION-26OCT-C26 has neither a two-sided quote nor a trade' });
    expect(fedOdds([{ ...markets[0], ticker: 'KXFED-26OCT-T4.00', custom_strike: null }])).toEqual({ reason: 'market KXFED-26OCT-T4.00 is not a cut, hold or hike bucket' });
    expect(fedOdds([])).toEqual({ reason: 'the event lists no markets' });
  });

  it('names the event of a decision date', () => {
    expect(fedDecisionEventTicker('2026-10-28')).toBe('KXFEDDECISION-26OCT');
    expect(fedDecisionEventTicker('2027-01-27')).toBe('KXFEDDECISION-27JAN');
  });
});
