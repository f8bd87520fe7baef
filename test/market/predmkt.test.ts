// GET /v1/predmkt-probability and /v1/predmkt-market against a fake Kalshi serving recorded payloads.
import { describe, expect, it } from 'vitest';
import { impliedProbability, summariseBidsOnlyBook } from '../../src/analytics/prediction-markets.ts';
import { KALSHI_CATEGORIES } from '../../src/sources/kalshi.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { recorded } from '../fixtures.ts';
import { TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../helpers.ts';

const t = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, KALSHI_BASE_URL: url, KALSHI_CATEGORY_SCAN_PAGES: '2' }));
const { fake, get } = t;
const paid = (url: string) => get(url, TEST_KEY);

const FED_EVENTS = 'kalshi_events_KXFEDDECISION_open_nested.TRIMMED.json';
/** The recorded Fed event of October 2026 (category Economics, 5 markets). */
const fedEvent = () => recorded(FED_EVENTS).events[0];
/** A copy of the Fed event dressed as another category, with its own tickers and volumes. */
function otherEvent(category: string, n: number, volume: string) {
  const e = fedEvent();
  e.category = category;
  e.event_ticker = `KXOTHER-${n}`;
  e.markets = e.markets.map((m: Record<string, unknown>, i: number) => ({ ...m, ticker: `KXOTHER-${n}-M${i}`, event_ticker: `KXOTHER-${n}`, volume_24h_fp: volume }));
  return e;
}
const NOT_FOUND = { status: 404, body: { error: { code: 'not_found', message: 'not found', service: 'exchange' } } };

describe('GET /v1/predmkt-probability — by category', () => {
  it("lists Kalshi's categories exactly as its /search/tags_by_categories does (recorded)", () => {
    expect([...KALSHI_CATEGORIES].sort()).toEqual(Object.keys(recorded('kalshi__search_tags_by_categories.json').tags_by_categories).sort());
  });

  it('ranks the open markets of the category by 24 h volume (recorded Fed event, category Economics)', async () => {
    // The recorded page carries a cursor (Kalshi had more events); served here as the last page.
    fake.route('GET /events', { body: { ...recorded<object>(FED_EVENTS), cursor: '' } });
    const res = await get('/v1/predmkt-probability?category=economics&limit=3');
    expect(res.statusCode, res.body).toBe(200);
    const call = fake.calls('/events')[0]!;
    expect(Object.fromEntries(call.query)).toEqual({ status: 'open', with_nested_markets: 'true', limit: '200' });
    const { data, meta } = res.json();
    expect(data.query).toEqual({ category: 'Economics', ticker: null, event: null });
    // volume_24h_fp: H0 109308.28 > H25 67937.62 > H26 25169.93 > C25 14459.40 > C26 467.59.
    expect(data.markets).toEqual([
      {
        ticker: 'KXFEDDECISION-26OCT-H0', event_ticker: 'KXFEDDECISION-26OCT',
        title: 'Will the Federal Reserve Hike rates by 0bps at their October 2026 meeting?', outcome: 'Fed maintains rate',
        // yes 0.7900 (24154.29) / 0.8000 (49649.18): mid (0.79 + 0.80) / 2 = 0.795
        probability: 0.795, probability_basis: 'mid', yes_bid: 0.79, yes_ask: 0.8, last_price: 0.8,
        volume_24h: 109308.28, open_interest: 1284115.51, close_time: '2026-10-28T17:59:00Z', status: 'active',
      },
      {
        ticker: 'KXFEDDECISION-26OCT-H25', event_ticker: 'KXFEDDECISION-26OCT',
        title: 'Will the Federal Reserve Hike rates by 25bps at their October 2026 meeting?', outcome: 'Hike 25bps',
        // (0.20 + 0.21) / 2 = 0.205
        probability: 0.205, probability_basis: 'mid', yes_bid: 0.2, yes_ask: 0.21, last_price: 0.21,
        volume_24h: 67937.62, open_interest: 1038161.13, close_time: '2026-10-28T17:59:00Z', status: 'active',
      },
      {
        ticker: 'KXFEDDECISION-26OCT-H26', event_ticker: 'KXFEDDECISION-26OCT',
        title: 'Will the Federal Reserve Hike rates by >25bps at their October 2026 meeting?', outcome: 'Hike >25bps',
        // no bid (0.0000, size 0.00): no mid, so the last trade 0.01
        probability: 0.01, probability_basis: 'last_price', yes_bid: null, yes_ask: 0.01, last_price: 0.01,
        volume_24h: 25169.93, open_interest: 839291.53, close_time: '2026-10-28T17:59:00Z', status: 'active',
      },
    ]);
    expect(meta.scan).toEqual({ pages: 1, events_scanned: 1, category_events: 1, complete: true });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'kalshi', cached: false })]);
  });

  it('walks the pages by cursor and keeps only the category asked for', async () => {
    // Pages need not be full (200) to have more after them, so short ones keep this test light.
    const sports = Array.from({ length: 3 }, (_, i) => otherEvent('Sports', i, '999999.00'));
    fake.route('GET /events', (req) =>
      req.query.get('cursor') === 'page-2'
        ? { body: { cursor: '', events: [otherEvent('Politics', 900, '5.00'), fedEvent()] } }
        : { body: { cursor: 'page-2', events: sports } },
    );
    const res = await get('/v1/predmkt-probability?category=ECONOMICS');
    expect(res.statusCode, res.body).toBe(200);
    expect(fake.calls('/events').map((c) => c.query.get('cursor'))).toEqual([null, 'page-2']);
    const { data, meta } = res.json();
    expect(data.markets.map((m: { ticker: string }) => m.ticker)).toEqual([
      'KXFEDDECISION-26OCT-H0', 'KXFEDDECISION-26OCT-H25', 'KXFEDDECISION-26OCT-H26', 'KXFEDDECISION-26OCT-C25', 'KXFEDDECISION-26OCT-C26',
    ]);
    expect(meta.scan).toEqual({ pages: 2, events_scanned: 5, category_events: 1, complete: true });
  });

  it('walks on past a page shorter than 200 while Kalshi still gives a cursor: only an empty cursor ends the walk', async () => {
    // Kalshi may answer fewer events than the limit on a page that is not the last (its pagination ends at cursor "").
    fake.route('GET /events', (req) =>
      req.query.get('cursor') === 'page-2'
        ? { body: { cursor: '', events: [fedEvent()] } }
        : { body: { cursor: 'page-2', events: [otherEvent('Politics', 1, '5.00'), otherEvent('Sports', 2, '5.00')] } },
    );
    const res = await get('/v1/predmkt-probability?category=Economics&limit=1');
    expect(res.statusCode, res.body).toBe(200);
    expect(fake.calls('/events').map((c) => c.query.get('cursor'))).toEqual([null, 'page-2']);
    const { data, meta } = res.json();
    expect(data.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['KXFEDDECISION-26OCT-H0']);
    expect(meta.scan).toEqual({ pages: 2, events_scanned: 3, category_events: 1, complete: true });
  });

  it('counts an event once when a later page repeats it (the walk spans several answers)', async () => {
    fake.route('GET /events', (req) =>
      req.query.get('cursor') === 'page-2'
        ? { body: { cursor: '', events: [fedEvent()] } }
        : { body: { cursor: 'page-2', events: [fedEvent()] } },
    );
    const { data, meta } = (await get('/v1/predmkt-probability?category=Economics')).json();
    expect(data.markets).toHaveLength(5);
    expect(meta.scan).toEqual({ pages: 2, events_scanned: 2, category_events: 1, complete: true });
  });

  it('says so when the walk stops at KALSHI_CATEGORY_SCAN_PAGES (2 here) before the last page', async () => {
    const page = (n: number) => Array.from({ length: 4 }, (_, i) => otherEvent('Sports', n * 1000 + i, '1.00'));
    fake.route('GET /events', (req) => ({ body: { cursor: `after-${req.query.get('cursor') ?? 'start'}`, events: page(req.query.get('cursor') ? 2 : 1) } }));
    const res = await get('/v1/predmkt-probability?category=Sports&limit=1');
    expect(fake.calls('/events')).toHaveLength(2);
    const { data, meta } = res.json();
    expect(data.markets).toHaveLength(1);
    expect(meta.scan).toEqual({
      pages: 2, events_scanned: 8, category_events: 8, complete: false,
      note: 'Kalshi lists more open events than the 8 walked (KALSHI_CATEGORY_SCAN_PAGES); the ranking covers those only.',
    });
  });

  it('answers 400 listing the categories for an unknown one, without calling Kalshi', async () => {
    const res = await get('/v1/predmkt-probability?category=weather');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe(`query parameter 'category' must be one of ${KALSHI_CATEGORIES.join(', ')} (case-insensitive)`);
    expect(fake.requests).toHaveLength(0);
  });

  it.each([
    ['none', ''],
    ['two', '?category=Economics&ticker=KXELONMARS-99'],
  ])('answers 400 when %s of category, ticker and event is given', async (_n, qs) => {
    const res = await get(`/v1/predmkt-probability${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'give exactly one of the query parameters category, ticker or event' });
  });

  it('answers 400 for a malformed ticker and a limit out of bounds', async () => {
    expect((await get('/v1/predmkt-probability?ticker=a%20b')).json().error).toMatch(/^query parameter 'ticker' must be a Kalshi market ticker/);
    expect((await get('/v1/predmkt-probability?category=Crypto&limit=51')).json().error).toBe("query parameter 'limit' must be a whole number from 1 to 50");
  });
});

describe('GET /v1/predmkt-probability — by ticker and by event', () => {
  it('reads one recorded market (KXELONMARS-99)', async () => {
    fake.route('GET /markets/KXELONMARS-99', { body: recorded('kalshi__market.json') });
    const res = await get('/v1/predmkt-probability?ticker=kxelonmars-99');
    expect(res.statusCode, res.body).toBe(200);
    // bid 0.0800 (444.32) / ask 0.1200 (1967.33): mid 0.10; last 0.1000; volume_24h_fp 19.74; open_interest_fp 32746.17
    expect(res.json().data).toEqual({
      query: { category: null, ticker: 'KXELONMARS-99', event: null },
      markets: [{
        ticker: 'KXELONMARS-99', event_ticker: 'KXELONMARS-99', title: 'Will Elon Musk visit Mars before Aug 1, 2099?', outcome: 'Mars',
        probability: 0.1, probability_basis: 'mid', yes_bid: 0.08, yes_ask: 0.12, last_price: 0.1,
        volume_24h: 19.74, open_interest: 32746.17, close_time: '2099-08-01T04:59:00Z', status: 'active',
      }],
    });
  });

  it('keeps the probability inside the live quote: no bid, ask 0.02, last trade 0.30 → 0.02 (edited recorded market)', async () => {
    const market = { ...recorded('kalshi__market.json').market, yes_bid_dollars: '0.0000', yes_bid_size_fp: '0.00', yes_ask_dollars: '0.0200', last_price_dollars: '0.3000' };
    fake.route('GET /markets/KXELONMARS-99', { body: { market } });
    const [row] = (await get('/v1/predmkt-probability?ticker=KXELONMARS-99')).json().data.markets;
    // Anyone may buy YES at 0.02, so the market does not price YES at 0.30: the last trade is clamped to [0, ask].
    expect(row).toMatchObject({ probability: 0.02, probability_basis: 'last_price_clamped', yes_bid: null, yes_ask: 0.02, last_price: 0.3 });
  });

  it('keeps the probability inside the live quote: no ask, bid 0.60, last trade 0.30 → 0.60', async () => {
    const market = { ...recorded('kalshi__market.json').market, yes_bid_dollars: '0.6000', yes_ask_dollars: '1.0000', yes_ask_size_fp: '0.00', last_price_dollars: '0.3000' };
    fake.route('GET /markets/KXELONMARS-99', { body: { market } });
    const [row] = (await get('/v1/predmkt-probability?ticker=KXELONMARS-99')).json().data.markets;
    expect(row).toMatchObject({ probability: 0.6, probability_basis: 'last_price_clamped', yes_bid: 0.6, yes_ask: null, last_price: 0.3 });
  });

  it.each([
    ['finalized', 'yes', 1],
    ['settled', 'no', 0],
    ['determined', 'yes', 1],
  ])('a %s market with result %s reports the result (%d), not its last trade', async (status, result, probability) => {
    const market = { ...recorded('kalshi__market.json').market, status, result, last_price_dollars: '0.9700', yes_bid_dollars: '0.0000', yes_bid_size_fp: '0.00', yes_ask_dollars: '0.0000', yes_ask_size_fp: '0.00' };
    fake.route('GET /markets/KXELONMARS-99', { body: { market } });
    const [row] = (await get('/v1/predmkt-probability?ticker=KXELONMARS-99')).json().data.markets;
    expect(row).toMatchObject({ probability, probability_basis: 'result', last_price: 0.97, status });
  });

  it('a finalized market voided (result "void") has no probability: not its last trade', async () => {
    const market = { ...recorded('kalshi__market.json').market, status: 'finalized', result: 'void' };
    fake.route('GET /markets/KXELONMARS-99', { body: { market } });
    const [row] = (await get('/v1/predmkt-probability?ticker=KXELONMARS-99')).json().data.markets;
    expect(row).toMatchObject({ probability: null, probability_basis: null, last_price: 0.1 });
  });

  it('answers 404 with source kalshi for a ticker Kalshi does not know', async () => {
    fake.route('GET /markets/KXNOPE-1', NOT_FOUND);
    const res = await get('/v1/predmkt-probability?ticker=KXNOPE-1');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'kalshi has no market KXNOPE-1', source: 'kalshi' });
  });

  it('lists every market of an event, in Kalshi\'s order, from GET /markets?event_ticker=', async () => {
    fake.route('GET /markets', { body: { cursor: '', markets: fedEvent().markets } });
    const res = await get('/v1/predmkt-probability?event=KXFEDDECISION-26OCT');
    expect(fake.calls('/markets')[0]!.query.get('event_ticker')).toBe('KXFEDDECISION-26OCT');
    const rows = res.json().data.markets;
    // C26 and C25: no bid, so their last trades 0.01; H0 0.795 and H25 0.205 mids; H26 last 0.01.
    expect(rows.map((m: { ticker: string; probability: number }) => [m.ticker.slice(-3), m.probability])).toEqual([
      ['C26', 0.01], ['C25', 0.01], ['-H0', 0.795], ['H25', 0.205], ['H26', 0.01],
    ]);
  });

  it('answers 404 for an event with no markets', async () => {
    fake.route('GET /markets', { body: { cursor: '', markets: [] } });
    const res = await get('/v1/predmkt-probability?event=KXNOPE-26');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'kalshi has no event KXNOPE-26', source: 'kalshi' });
  });

  it.each<FailureCase>([
    ...upstreamFailures('kalshi', { malformed: '{"market":{"ticker":' }),
    ['HTTP 429 (its error body)', { status: 429, body: { error: { code: 'too_many_requests', message: 'too many requests' } } }, 'kalshi is rate limiting this server (too_many_requests (too many requests))', 503],
    ['an error code with HTTP 400', { status: 400, body: { error: { code: 'bad_request', message: 'invalid ticker' } } }, 'kalshi error: bad_request (invalid ticker)'],
    ['a market without prices as strings', { body: { market: { ...recorded('kalshi__market.json').market, yes_bid_dollars: 'n/a' } } }, 'kalshi returned an unexpected response shape at market.yes_bid_dollars'],
  ])('answers %s as 502/503 naming kalshi', async (_name, reply, message, status = 502) => {
    fake.route('GET /markets/KXELONMARS-99', reply);
    const res = await get('/v1/predmkt-probability?ticker=KXELONMARS-99');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'kalshi' });
  });
});

describe('GET /v1/predmkt-market', () => {
  const MARS = '/markets/KXELONMARS-99';
  const serveMars = () => {
    fake.route(`GET ${MARS}`, { body: recorded('kalshi__market.json') });
    fake.route(`GET ${MARS}/orderbook`, { body: recorded('kalshi__orderbook.json') });
    fake.route('GET /markets/trades', { body: recorded('kalshi__trades.json') });
  };

  it('summarises the recorded bids-only book and trades of KXELONMARS-99', async () => {
    serveMars();
    const res = await paid('/v1/predmkt-market?ticker=KXELONMARS-99');
    expect(res.statusCode, res.body).toBe(200);
    expect(fake.calls(`${MARS}/orderbook`)[0]!.query.get('depth')).toBe('20');
    expect(Object.fromEntries(fake.calls('/markets/trades')[0]!.query)).toEqual({ ticker: 'KXELONMARS-99', limit: '20' });
    const { data, meta } = res.json();
    // YES bids ascending 0.01 … 0.08 (best last) → best first. Best NO bid 0.88 → YES ask 1 − 0.88 = 0.12, as the
    // market's own yes_ask; NO ask 1 − 0.08 = 0.92, as its no_ask. Spread 0.12 − 0.08 = 0.04.
    expect(data.yes_bids[0]).toEqual([0.08, 444.32]);
    expect(data.yes_bids.at(-1)).toEqual([0.01, 6558.5]);
    expect(data.no_bids[0]).toEqual([0.88, 1967.33]);
    expect(data.no_bids).toHaveLength(18);
    expect(data).toMatchObject({
      ticker: 'KXELONMARS-99',
      title: 'Will Elon Musk visit Mars before Aug 1, 2099?',
      best_yes_bid: 0.08,
      best_yes_ask: 0.12,
      best_no_ask: 0.92,
      spread: 0.04,
      // 6558.50 + 705 + 18708 + 1162 + 50 + 2201.86 + 3195.84 + 444.32 = 33025.52
      depth_yes: 33025.52,
      // Σ of the 18 NO levels = 27805.76
      depth_no: 27805.76,
    });
    expect(data.trades).toEqual([
      { time: '2026-06-12T17:11:11.927591Z', side: 'yes', price: 0.1, size: 9.4 },
      { time: '2026-06-12T15:45:05.842468Z', side: 'yes', price: 0.1, size: 0.94 },
      { time: '2026-06-12T14:45:56.123182Z', side: 'no', price: 0.08, size: 9.4 },
    ]);
    expect(meta.sources).toHaveLength(1);
    expect(meta.sources[0].provider).toBe('kalshi');
  });

  it('cuts each side to `depth` levels and sums only those (recorded Fed hold book, depth 3)', async () => {
    fake.route('GET /markets/KXFEDDECISION-26OCT-H0', { body: { market: fedEvent().markets[2] } });
    fake.route('GET /markets/KXFEDDECISION-26OCT-H0/orderbook', { body: recorded('kalshi_orderbook_KXFEDDECISION-26OCT-H0.json') });
    fake.route('GET /markets/trades', { body: { cursor: '', trades: [] } });
    const { data } = (await paid('/v1/predmkt-market?ticker=KXFEDDECISION-26OCT-H0&depth=3&trades=5')).json();
    // Best YES bid 0.79, best NO bid 0.20 → YES ask 0.80 and NO ask 0.21: the market's recorded 0.79/0.80 quote.
    expect(data).toEqual({
      ticker: 'KXFEDDECISION-26OCT-H0',
      title: 'Will the Federal Reserve Hike rates by 0bps at their October 2026 meeting?',
      yes_bids: [[0.79, 4122.75], [0.78, 90805.37], [0.77, 50366]],
      no_bids: [[0.2, 49649.18], [0.19, 47113.21], [0.18, 606]],
      best_yes_bid: 0.79,
      best_yes_ask: 0.8,
      best_no_ask: 0.21,
      spread: 0.01,
      depth_yes: 145294.12, // 4122.75 + 90805.37 + 50366
      depth_no: 97368.39, // 49649.18 + 47113.21 + 606
      trades: [],
    });
    expect(fake.calls('/markets/trades')[0]!.query.get('limit')).toBe('5');
  });

  it('answers 404 for an unknown ticker although Kalshi answers its book with an empty one', async () => {
    fake.route('GET /markets/KXNOPE-1', NOT_FOUND);
    fake.route('GET /markets/KXNOPE-1/orderbook', { body: { orderbook_fp: { yes_dollars: [], no_dollars: [] } } });
    fake.route('GET /markets/trades', { body: { cursor: '', trades: [] } });
    const res = await paid('/v1/predmkt-market?ticker=KXNOPE-1');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'kalshi has no market KXNOPE-1', source: 'kalshi' });
  });

  it('answers 502 naming kalshi when the book fails, and 400/401 before any call', async () => {
    serveMars();
    fake.route(`GET ${MARS}/orderbook`, { status: 500, body: 'oops' });
    const res = await paid('/v1/predmkt-market?ticker=KXELONMARS-99');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'kalshi answered HTTP 500', source: 'kalshi' });
    fake.reset();
    expect((await paid('/v1/predmkt-market')).json().error).toMatch(/^query parameter 'ticker' is required/);
    expect((await paid('/v1/predmkt-market?ticker=X&depth=0')).json().error).toBe("query parameter 'depth' must be a whole number from 1 to 100");
    expect((await get('/v1/predmkt-market?ticker=KXELONMARS-99')).statusCode).toBe(401);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('prediction-market arithmetic', () => {
  it('probability: mid when both sides rest, else a traded last price, else null', () => {
    const q = { yes_bid: 0.3, yes_bid_size: 10, yes_ask: 0.34, yes_ask_size: 5, last_price: 0.31 };
    expect(impliedProbability(q)).toEqual({ probability: 0.32, basis: 'mid' });
    expect(impliedProbability({ ...q, yes_ask: 1 })).toEqual({ probability: 0.31, basis: 'last_price' });
    expect(impliedProbability({ ...q, yes_bid_size: 0 })).toEqual({ probability: 0.31, basis: 'last_price' });
    // An unknown size ("" on the wire) with a real price still counts as a quote.
    expect(impliedProbability({ ...q, yes_bid_size: null, yes_ask_size: null })).toEqual({ probability: 0.32, basis: 'mid' });
    expect(impliedProbability({ yes_bid: 0, yes_bid_size: 0, yes_ask: 1, yes_ask_size: 0, last_price: 0 })).toEqual({ probability: null, basis: null });
  });

  it('probability never lies outside [best bid, best ask]: a one-sided quote clamps the last trade', () => {
    const noBid = { yes_bid: 0, yes_bid_size: 0, yes_ask: 0.02, yes_ask_size: 100, last_price: 0.3 };
    expect(impliedProbability(noBid)).toEqual({ probability: 0.02, basis: 'last_price_clamped' });
    expect(impliedProbability({ ...noBid, last_price: 0.01 })).toEqual({ probability: 0.01, basis: 'last_price' });
    const noAsk = { yes_bid: 0.6, yes_bid_size: 5, yes_ask: 1, yes_ask_size: 0, last_price: 0.3 };
    expect(impliedProbability(noAsk)).toEqual({ probability: 0.6, basis: 'last_price_clamped' });
    expect(impliedProbability({ ...noAsk, last_price: 0.75 })).toEqual({ probability: 0.75, basis: 'last_price' });
    // One side and no trade: nothing to read.
    expect(impliedProbability({ ...noBid, last_price: 0 })).toEqual({ probability: null, basis: null });
  });

  it('a settled market reports its result; an undetermined or voided one does not', () => {
    const q = { yes_bid: 0, yes_bid_size: 0, yes_ask: 1, yes_ask_size: 0, last_price: 0.97 };
    expect(impliedProbability({ ...q, status: 'finalized', result: 'no' })).toEqual({ probability: 0, basis: 'result' });
    expect(impliedProbability({ ...q, status: 'settled', result: 'yes' })).toEqual({ probability: 1, basis: 'result' });
    expect(impliedProbability({ ...q, status: 'finalized', result: 'void' })).toEqual({ probability: null, basis: null });
    // Closed but not determined yet (result ""), or disputed: the market still reads from its prices.
    expect(impliedProbability({ ...q, status: 'closed', result: null })).toEqual({ probability: 0.97, basis: 'last_price' });
    expect(impliedProbability({ ...q, status: 'disputed', result: 'yes' })).toEqual({ probability: 0.97, basis: 'last_price' });
  });

  it('an empty side of a book leaves its figures null and its depth 0', () => {
    expect(summariseBidsOnlyBook([[0.4, 10]], [], 10)).toEqual({
      yes_bids: [[0.4, 10]], no_bids: [], best_yes_bid: 0.4, best_no_bid: null,
      best_yes_ask: null, best_no_ask: 0.6, spread: null, depth_yes: 10, depth_no: 0,
    });
  });
});
