// GET /v1/sentiment against a fake alternative.me on 127.0.0.1.
import { describe, expect, it } from 'vitest';
import type { FakeReply } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { useFakeUpstreamApp } from '../helpers.ts';
import { ageOf } from '../../src/upstream/envelope.ts';
import { countdownAt, countdownHoldsUntil } from '../../src/market/market-context/sentiment.ts';

const FNG = '/fng/';

const { fake, get } = useFakeUpstreamApp((url) => ({ ALTERNATIVE_ME_BASE_URL: url }));
const serve = (reply: FakeReply) => fake.route(`GET ${FNG}`, reply);

describe('GET /v1/sentiment', () => {
  it('answers the current reading (recorded answer), free and without credentials; no history by default', async () => {
    serve({ body: recorded('alternativeme__fng.json') });
    const res = await get('/v1/sentiment');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // Newest reading: value "71", "Greed", timestamp 1790294400 s = 2026-09-25T00:00:00Z, time_until_update "33432"
    // (a fresh answer: age 0 s → 33432 s).
    expect(data).toEqual({
      current: { value: 71, classification: 'Greed', time: '2026-09-25T00:00:00.000Z', next_update_in_s: 33432 },
      history: [],
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'alternative.me', cached: false })]);
    // One call for the current reading and a year of history, whatever limit was asked: never limit=0 (the whole history).
    expect(Object.fromEntries(fake.calls(FNG)[0]!.query)).toEqual({ limit: '366', format: 'json' });
  });

  it('adds `limit` readings of history, oldest first, from the same cached answer', async () => {
    serve({ body: recorded('alternativeme__fng.json') });
    await get('/v1/sentiment');
    const res = await get('/v1/sentiment?limit=5');
    const { data, meta } = res.json();
    // Only one reading before the current one was recorded: 1790208000 s = 2026-09-24.
    expect(data.history).toEqual([{ value: 71, classification: 'Greed', date: '2026-09-24' }]);
    expect(meta.sources[0].cached).toBe(true);
    expect(fake.calls(FNG)).toHaveLength(1);
    // The countdown is the provider's, less the age of the cached answer.
    expect(data.current.next_update_in_s).toBe(Math.max(0, Math.round(33432 - meta.sources[0].age_s)));
  });

  it('orders by timestamp whatever the order sent, and keeps history oldest first', async () => {
    const body = recorded('alternativeme__fng.json');
    // CONSTRUCTED third reading (a day earlier, 1790121600 s = 2026-09-23), then the list reversed to oldest first.
    body.data.push({ value: '45', value_classification: 'Fear', timestamp: '1790121600' });
    body.data.reverse();
    serve({ body });
    const { data } = (await get('/v1/sentiment?limit=2')).json();
    expect(data.current).toMatchObject({ value: 71, time: '2026-09-25T00:00:00.000Z', next_update_in_s: 33432 });
    expect(data.history).toEqual([
      { value: 45, classification: 'Fear', date: '2026-09-23' },
      { value: 71, classification: 'Greed', date: '2026-09-24' },
    ]);
  });

  it('gives one reading per day when alternative.me repeats a day (EDITED recorded answer)', async () => {
    const body = recorded('alternativeme__fng.json');
    const [today, yesterday] = body.data;
    // The 2026-09-24 reading twice, and the current day again without its countdown, then an older day.
    body.data.push({ ...yesterday }, { value: '70', value_classification: 'Greed', timestamp: today.timestamp }, { value: '45', value_classification: 'Fear', timestamp: '1790121600' });
    serve({ body });
    const { data } = (await get('/v1/sentiment?limit=10')).json();
    expect(data.current).toEqual({ value: 71, classification: 'Greed', time: '2026-09-25T00:00:00.000Z', next_update_in_s: 33432 });
    expect(data.history).toEqual([
      { value: 45, classification: 'Fear', date: '2026-09-23' },
      { value: 71, classification: 'Greed', date: '2026-09-24' },
    ]);
  });

  it('keeps the later reading of a day stamped twice at different times', async () => {
    const body = recorded('alternativeme__fng.json');
    // 1790208000 s = 2026-09-24T00:00Z; 1790211600 s = 01:00Z the same day, value 60.
    body.data.push({ value: '60', value_classification: 'Greed', timestamp: '1790211600' });
    serve({ body });
    const { data } = (await get('/v1/sentiment?limit=10')).json();
    expect(data.history).toEqual([{ value: 60, classification: 'Greed', date: '2026-09-24' }]);
  });

  it('answers next_update_in_s null when alternative.me gives no time_until_update', async () => {
    const body = recorded('alternativeme__fng.json');
    delete body.data[0].time_until_update;
    serve({ body });
    expect((await get('/v1/sentiment')).json().data.current.next_update_in_s).toBeNull();
  });

  it('ignores payment headers: nobody pays for a free call', async () => {
    serve({ body: recorded('alternativeme__fng.json') });
    const res = await get('/v1/sentiment', { 'payment-signature': 'bm90IGEgcGF5bWVudA==', 'x-payment': 'garbage' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['payment-response']).toBeUndefined();
  });

  it.each<FailureCase>([
    ...upstreamFailures('alternative.me', { malformed: '{"name":"Fear and Greed Index","data":[' }),
    ['its error in metadata.error', { body: { name: 'Fear and Greed Index', data: [], metadata: { error: 'Invalid limit' } } }, 'alternative.me error: Invalid limit'],
    ['no reading at all', { body: { name: 'Fear and Greed Index', data: [], metadata: { error: null } } }, 'alternative.me returned an unexpected response shape at data'],
    ['a value out of 0-100', { body: { data: [{ value: '171', value_classification: 'Greed', timestamp: '1790294400' }], metadata: { error: null } } }, 'alternative.me returned an unexpected response shape at data.0.value'],
  ])('answers 502 naming alternative.me on %s', async (_name, reply, message, status = 502) => {
    serve(reply);
    const res = await get('/v1/sentiment');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'alternative.me' });
  });

  it.each(['366', '-1', 'abc', '1e2'])('answers 400 for limit=%s', async (limit) => {
    const res = await get(`/v1/sentiment?limit=${limit}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "query parameter 'limit' must be a whole number from 0 to 365" });
    expect(fake.requests).toHaveLength(0);
  });
});

// The answer reads the clock (its countdown moves as the cached answer ages), so it says until when it holds:
// the remembered answer (answer-memo.ts) is served until then, and one made at any moment must be
// rememberable (its bound after that moment) and exact (the countdown the handler would give, up to the
// bound and not at it).
describe('sentiment countdown: until when an answer holds', () => {
  const FETCHED = Date.parse('2026-11-27T09:00:00.123Z');
  it.each([33432, 100, 1, 12.25, 7.75, 0.4])('holds exactly while it shows the same countdown (time_until_update %s)', (timeUntilUpdate) => {
    for (let ageMs = 0; ageMs <= 3000; ageMs++) {
      const now = FETCHED + ageMs;
      const shown = countdownAt(timeUntilUpdate, ageOf(FETCHED, now));
      const until = countdownHoldsUntil(FETCHED, timeUntilUpdate, ageOf(FETCHED, now));
      if (shown === 0) {
        expect(until).toBeUndefined();
        continue;
      }
      // The countdown only ever goes down: the same value at both ends means the same in between.
      expect(until, `age ${ageMs} ms`).toBeGreaterThan(now);
      expect(countdownAt(timeUntilUpdate, ageOf(FETCHED, until! - 1)), `age ${ageMs} ms`).toBe(shown);
      expect(countdownAt(timeUntilUpdate, ageOf(FETCHED, until!)), `age ${ageMs} ms`).not.toBe(shown);
    }
  });

  it('changes a second apart, at the half tenth where age_s turns (e.g. 0.55 s after the fetch for a whole countdown)', () => {
    expect(countdownHoldsUntil(FETCHED, 33432, 0)).toBe(FETCHED + 550);
    // Made in the last 50 ms before it turns (age_s 0.5 still shows 33432): the same bound, still ahead.
    expect(countdownHoldsUntil(FETCHED, 33432, 0.5)).toBe(FETCHED + 550);
    expect(countdownHoldsUntil(FETCHED, 33432, 0.6)).toBe(FETCHED + 1550);
  });
});
