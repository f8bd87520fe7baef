// The last line of defence (src/edge/pressure.ts): under memory or event-loop pressure every request is
// answered 503 with Retry-After and the `{ error }` body, /health included, /metrics excepted.
import { describe, expect, it } from 'vitest';
import { LATE_SAMPLES, PressureGauge, type PressureReading } from '../../src/edge/pressure.ts';
import { makeApp } from '../helpers.ts';

const GB = 1024 ** 3;
const calm: PressureReading = { heapUsedBytes: 0.2 * GB, heapLimitBytes: 4 * GB, rssBytes: 0.5 * GB, eventLoopDelayMs: 2 };
const limits = { maxHeapPercent: 90, maxRssBytes: 2 * GB, maxEventLoopDelayMs: 1000, retryAfterS: 10 };

/** A gauge reading `readings` one sample after the other. */
function gaugeOf(readings: PressureReading[], onChange: (reason: string | undefined) => void = () => {}) {
  let i = 0;
  return new PressureGauge(limits, onChange, () => readings[Math.min(i++, readings.length - 1)]!);
}

describe('PressureGauge', () => {
  it('is under pressure while the heap in use is over its share of the limit, or resident memory over its bound', () => {
    const changes: (string | undefined)[] = [];
    const gauge = gaugeOf([calm, { ...calm, heapUsedBytes: 3.8 * GB }, { ...calm, heapUsedBytes: 3.9 * GB }, { ...calm, rssBytes: 2.5 * GB }, calm], (r) => changes.push(r));
    const reasons = Array.from({ length: 5 }, () => (gauge.sample(), gauge.reason));
    expect(reasons).toEqual([
      undefined,
      'the JavaScript heap in use is 95% of its limit (PRESSURE_MAX_HEAP_PERCENT=90)',
      'the JavaScript heap in use is 98% of its limit (PRESSURE_MAX_HEAP_PERCENT=90)',
      'resident memory is 2560 MB (PRESSURE_MAX_RSS_MB=2048)',
      undefined,
    ]);
    // Told once when it starts and once when it ends.
    expect(changes).toEqual([reasons[1], undefined]);
  });

  it(`is under pressure once the event loop has been late in ${LATE_SAMPLES} samples in a row, not after one long task`, () => {
    const late = { ...calm, eventLoopDelayMs: 1500 };
    const gauge = gaugeOf([late, calm, late, late, late, late, calm]);
    const reasons = Array.from({ length: 7 }, () => (gauge.sample(), gauge.reason !== undefined));
    expect(reasons).toEqual([false, false, false, false, true, true, false]);
  });

  it('checks nothing set to 0', () => {
    const gauge = new PressureGauge({ maxHeapPercent: 0, maxRssBytes: 0, maxEventLoopDelayMs: 0, retryAfterS: 10 }, () => {}, () => ({
      heapUsedBytes: 4 * GB,
      heapLimitBytes: 4 * GB,
      rssBytes: 100 * GB,
      eventLoopDelayMs: 60_000,
    }));
    for (let i = 0; i < 5; i++) gauge.sample();
    expect(gauge.reason).toBeUndefined();
  });
});

describe('the app under pressure', () => {
  it('answers every request 503 with Retry-After and the error body, /health included (it says the truth); /metrics still answers', async () => {
    // Forced: any process holds more than 1 MB resident. (1% of the heap limit was not: about 43 MB of a 4.3 GB
    // limit, which a freshly made app can stay under.)
    const t = await makeApp({ PRESSURE_MAX_RSS_MB: '1', PRESSURE_RETRY_AFTER_S: '7', METRICS_TOKEN: 'a-metrics-token-of-16+' });
    try {
      expect(t.app.services.pressure.reason).toMatch(/^resident memory is \d+ MB \(PRESSURE_MAX_RSS_MB=1\)$/);
      for (const url of ['/health', '/risk/health', '/v1/status', '/openapi.json', '/v1/sentiment', '/v1/price?symbol=BTC', '/nowhere']) {
        const res = await t.app.inject({ url });
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['retry-after'], url).toBe('7');
        expect(res.json(), url).toEqual({ error: expect.stringMatching(/^the server is under pressure: resident memory is \d+ MB \(PRESSURE_MAX_RSS_MB=1\); retry later$/) });
        expect(res.headers['x-request-id'], url).toBeDefined();
      }
      expect((await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer a-metrics-token-of-16+' } })).statusCode).toBe(200);
      expect(t.logs.some((l) => /"msg":"under pressure: every request is answered 503 until it passes"/.test(l))).toBe(true);
    } finally {
      await t.app.close();
    }
  });

  it('serves as usual under the default thresholds', async () => {
    const t = await makeApp();
    try {
      expect(t.app.services.pressure.reason).toBeUndefined();
      expect((await t.app.inject({ url: '/health' })).statusCode).toBe(200);
    } finally {
      await t.app.close();
    }
  });
});
