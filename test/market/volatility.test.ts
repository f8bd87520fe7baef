// GET /v1/volatility against a fake Deribit on 127.0.0.1.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FakeHandler, FakeReply } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const DVOL = '/api/v2/public/get_volatility_index_data';
const HV = '/api/v2/public/get_historical_volatility';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, DERIBIT_BASE_URL: url }), { headers: TEST_KEY });
const serve = (dvol: FakeReply | FakeHandler, hv: FakeReply = { body: recorded('deribit__get_historical_volatility.json') }) => {
  fake.route(`GET ${DVOL}`, dvol);
  fake.route(`GET ${HV}`, hv);
};

afterEach(() => vi.useRealTimers());

describe('GET /v1/volatility', () => {
  /** The recorded answer (one-minute candles 10:15-10:25, asked for at 10:25:13.698 = its usOut) for the recent window, none a day earlier. */
  const recording = (dayAgo: number[][] = []): FakeHandler => (req) =>
    Number(req.query.get('end_timestamp')) < RECORDED_FROM
      ? { body: { jsonrpc: '2.0', result: { data: dayAgo, continuation: null } } }
      : { body: recorded('deribit__get_volatility_index_data.json') };
  const RECORDED_FROM = 1791281700000;
  const atRecordingTime = () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1791282313698);
  };

  it('reads DVOL and realized volatility from the recorded answers', async () => {
    atRecordingTime();
    serve(recording());
    const res = await get('/v1/volatility');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // DVOL: at 10:25:13 the 10:25 candle is forming; the newest completed one is [1791282240000, 47.56, 47.56, 47.55, 47.55]
    // (10:24) → 47.55 at its end, 2026-10-06T10:25:00Z. Deribit has no candle a day earlier here: the change is null, not a guess.
    // Realized: newest point [1550228400000, 46.371891307340015] → 2019-02-15T11:00:00Z.
    // Spread: 47.55 − 46.371891307340015 = 1.17810869266 (12 significant digits).
    expect(data).toEqual({
      symbol: 'BTC',
      currency: 'BTC',
      implied_volatility_30d: 47.55,
      implied_volatility_change_24h: null,
      realized_volatility: 46.371891307340015,
      iv_rv_spread: 1.17810869266,
      as_of: '2026-10-06T10:25:00.000Z',
      realized_volatility_as_of: '2019-02-15T11:00:00.000Z',
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'deribit', cached: false })]);

    // One-minute candles over the hour up to the whole minute before the request, and over the same hour a day earlier; BTC by default.
    const windows = fake.calls(DVOL).map((c) => c.query);
    expect(windows.map((q) => [q.get('currency'), q.get('resolution')])).toEqual([['BTC', '60'], ['BTC', '60']]);
    const end = Date.parse('2026-10-06T10:25:00Z');
    const day = 24 * 3_600_000;
    expect(windows.map((q) => [Number(q.get('start_timestamp')), Number(q.get('end_timestamp'))]).sort()).toEqual([
      [end - day - 3_600_000, end - day],
      [end - 3_600_000, end],
    ]);
    expect(fake.calls(HV)[0]!.query.get('currency')).toBe('BTC');
  });

  it('computes the 24 h change against the minute that ended exactly 24 h before the value shown', async () => {
    atRecordingTime();
    // CONSTRUCTED candles a day earlier (not a recording): the one that ended at 10:25:00 − 24 h (opened 1791195840000) closed at
    // 50.05; the one opened 24 h before the forming 10:25 candle (1791195900000) closed at 49 and must not be used.
    serve(recording([[1791195840000, 50.1, 50.2, 50.0, 50.05], [1791195900000, 50.05, 50.05, 49, 49]]));
    const { data } = (await get('/v1/volatility?currency=BTC')).json();
    // 47.55 − 50.05 = −2.5 volatility points.
    expect(data.implied_volatility_change_24h).toBe(-2.5);
    expect(data.implied_volatility_30d).toBe(47.55);
  });

  it('compares DVOL with its value exactly 24 h earlier, even while the newest hourly candle is still forming', async () => {
    // A CONSTRUCTED DVOL that climbs 0.1 point an hour: f(t) = 50 + 0.1 × hours since 2026-10-05T00:00Z. The fake answers
    // any resolution and window as Deribit does: candles by open time in [start, end], each closing at f(open + width), the
    // forming one at f(now). At 10:30:00 the newest hourly candle (10:00) is half done: its close is f(10:30), while the
    // close of the hourly candle opened 24 h before it is f(yesterday 11:00), 23.5 h earlier (a change of 2.35, not 2.4).
    const t0 = Date.parse('2026-10-05T00:00:00Z');
    const f = (t: number) => 50 + (0.1 * (t - t0)) / 3_600_000;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-10-06T10:30:00Z'));
    serve((req) => {
      const width = Number(req.query.get('resolution')) * 1000;
      const [start, end] = [Number(req.query.get('start_timestamp')), Number(req.query.get('end_timestamp'))];
      const data: number[][] = [];
      for (let open = Math.ceil(start / width) * width; open <= end && open <= Date.now(); open += width) {
        const close = f(Math.min(open + width, Date.now()));
        data.push([open, f(open), close, f(open), close]);
      }
      return { body: { jsonrpc: '2.0', result: { data, continuation: null } } };
    });
    const { data } = (await get('/v1/volatility')).json();
    // The newest completed minute ends at 10:30:00: f = 50 + 0.1 × 34.5 = 53.45; 24 h before, f = 50 + 0.1 × 10.5 = 51.05.
    expect(data).toMatchObject({ implied_volatility_30d: 53.45, implied_volatility_change_24h: 2.4, as_of: '2026-10-06T10:30:00.000Z' });
  });

  it('asks for ETH when told to', async () => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') });
    const res = await get('/v1/volatility?currency=ETH');
    expect(res.json().data.currency).toBe('ETH');
    expect(fake.calls(DVOL)[0]!.query.get('currency')).toBe('ETH');
    expect(fake.calls(HV)[0]!.query.get('currency')).toBe('ETH');
  });

  it('leaves realized volatility and the spread null when Deribit gives no point', async () => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') }, { body: { jsonrpc: '2.0', result: [] } });
    const { data } = (await get('/v1/volatility')).json();
    expect(data).toMatchObject({ implied_volatility_30d: 47.55, realized_volatility: null, iv_rv_spread: null, realized_volatility_as_of: null });
  });

  it('serves a repeated request within the minute from the cache', async () => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') });
    await get('/v1/volatility');
    const { meta } = (await get('/v1/volatility')).json();
    // Both requests fall in the same minute almost always; when a minute boundary falls between them, the two DVOL calls repeat.
    expect(fake.calls(HV)).toHaveLength(1);
    expect(fake.calls(DVOL).length).toBeLessThanOrEqual(4);
    if (fake.calls(DVOL).length === 2) expect(meta.sources[0].cached).toBe(true);
  });

  it('answers 502 when Deribit sends no completed DVOL candle in the last hour', async () => {
    serve({ body: { jsonrpc: '2.0', result: { data: [], continuation: null } } });
    const res = await get('/v1/volatility');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'deribit returned no DVOL candle for BTC in the last hour', source: 'deribit' });
  });

  it.each<FailureCase>([
    ...upstreamFailures('deribit', { malformed: '{"jsonrpc":"2.0","result":{"data":[[' }),
    ['its error (HTTP 400)', { status: 400, body: { jsonrpc: '2.0', error: { message: 'Invalid params', code: -32602 }, testnet: false } }, 'deribit error: code -32602 (Invalid params)'],
    ['its rate limit', { status: 429, body: { jsonrpc: '2.0', error: { message: 'too_many_requests', code: 10028 } } }, 'deribit is rate limiting this server (code 10028 (too_many_requests))', 503],
    ['a candle that is not five numbers', { body: { jsonrpc: '2.0', result: { data: [[1791282300000, '47.5']], continuation: null } } }, 'deribit returned an unexpected response shape at result.data.0'],
  ])('answers 502/503 naming deribit on %s', async (_name, reply, message, status = 502) => {
    serve(reply);
    const res = await get('/v1/volatility');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'deribit' });
  });

  it.each(['SOL', 'BTC,ETH', ''])('answers 400 for currency=%s', async (currency) => {
    const res = await get(`/v1/volatility?currency=${encodeURIComponent(currency)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "query parameter 'currency' must be one of BTC, ETH" });
    expect(fake.requests).toHaveLength(0);
  });

  it.each([
    ['currency=eth', 'ETH'],
    ['currency=Btc', 'BTC'],
    ['symbol=eth', 'ETH'],
    ['symbol=ETHUSDT', 'ETH'],
    ['symbol=btc-usd', 'BTC'],
    ['symbol=ETH&currency=eth', 'ETH'],
  ])('%s asks Deribit for %s (any case; `symbol` is the name every route uses, `currency` its older name here)', async (qs, underlying) => {
    serve({ body: recorded('deribit__get_volatility_index_data.json') });
    const res = await get(`/v1/volatility?${qs}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ symbol: underlying, currency: underlying });
    expect(fake.calls(DVOL)[0]!.query.get('currency')).toBe(underlying);
  });

  it.each([
    ['symbol=SOL', "query parameter 'symbol' must be BTC or ETH (the currencies Deribit publishes DVOL for), alone or as a USD pair (BTCUSDT, ETH-USD); got 'SOL'"],
    ['symbol=ETHBTC', "query parameter 'symbol' must be BTC or ETH (the currencies Deribit publishes DVOL for), alone or as a USD pair (BTCUSDT, ETH-USD); got 'ETHBTC'"],
    ['symbol=BTC&currency=ETH', "query parameters 'symbol' and 'currency' name the same thing (currency is the older name); give one, or the same value in both"],
  ])('answers 400 for %s', async (qs, error) => {
    const res = await get(`/v1/volatility?${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error });
    expect(fake.requests).toHaveLength(0);
  });

  it('is paid: 401 without credentials (x402 off), before any upstream call', async () => {
    const res = await get('/v1/volatility', {});
    expect(res.statusCode).toBe(401);
    expect(fake.requests).toHaveLength(0);
  });
});
