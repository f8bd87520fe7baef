// /v1/predmkt-probability: implied probabilities of Kalshi markets — the most active open markets of a
// category (by 24 h volume), one market by ticker, or the markets of one event.
import { z } from 'zod';
import { impliedProbability, quotedAsk, quotedBid, tradedPrice } from '../../analytics/prediction-markets.ts';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope, mergeSourceMetas, type SourceMeta } from '../../upstream/envelope.ts';
import { BadRequestError } from '../../lib/errors.ts';
import { KALSHI_CATEGORIES, type KalshiMarket } from '../../sources/kalshi.ts';
import type { Sources } from '../../sources/index.ts';
import { numberOrNull } from '../../catalog/fields.ts';

const TICKER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const tickerParam = (what: string, example: string) =>
  z
    .string()
    .regex(TICKER, `must be a Kalshi ${what} ticker: letters, digits, '.', '_' and '-' (${example})`)
    .transform((v) => v.toUpperCase())
    .optional()
    .describe(`A Kalshi ${what} ticker (${example}), case-insensitive.`);

const CATEGORY_LIST = KALSHI_CATEGORIES.join(', ');

const query = z.object({
  category: z
    .string()
    .transform((v, ctx) => {
      const found = KALSHI_CATEGORIES.find((c) => c.toLowerCase() === v.trim().toLowerCase());
      if (!found) ctx.addIssue({ code: 'custom', message: `must be one of ${CATEGORY_LIST} (case-insensitive)` });
      return found ?? z.NEVER;
    })
    .optional()
    .describe(`A Kalshi category, case-insensitive: ${CATEGORY_LIST}. Answers its most active open markets by 24 h volume.`)
    .meta({ enum: [...KALSHI_CATEGORIES] }),
  ticker: tickerParam('market', 'KXFEDDECISION-26OCT-H0'),
  event: tickerParam('event', 'KXFEDDECISION-26OCT'),
  limit: boundedInt(1, 50, 10, 'With category: how many markets, 1-50.'),
});


const marketRow = z.object({
  ticker: z.string(),
  event_ticker: z.string(),
  title: z.string().nullable().describe("The market's question"),
  outcome: z.string().nullable().describe('What YES means (Kalshi yes_sub_title)'),
  probability: numberOrNull(
    'Implied probability of YES, 0–1, by the first rule that applies: a resolved market (status determined, amended, finalized or settled) ' +
      'reports its result, 1 for yes and 0 for no (null for void or scalar); (yes_bid + yes_ask) / 2 when both are quoted; else last_price ' +
      'clamped into the live quote ([0, yes_ask] with no bid, [yes_bid, 1] with no ask); null when nothing is quoted on both sides and it never traded. ' +
      'It never lies outside [yes_bid, yes_ask] where those exist',
  ),
  probability_basis: z
    .enum(['result', 'mid', 'last_price', 'last_price_clamped'])
    .nullable()
    .describe('The rule that gave `probability`: result (settled outcome), mid, last_price (the last trade, inside the quote), last_price_clamped (the last trade lay outside the one-sided quote and was moved to its edge); null with probability null'),
  yes_bid: numberOrNull('Best bid for YES, dollars per $1 contract; null when no bid rests (Kalshi: 0.0000 with size 0)'),
  yes_ask: numberOrNull('Best ask for YES, dollars; null when no ask rests (Kalshi: 1.0000, or size 0)'),
  last_price: numberOrNull('Last trade price of YES, dollars; null before the first trade'),
  volume_24h: numberOrNull('Contracts traded in the last 24 h (Kalshi volume_24h_fp)'),
  open_interest: numberOrNull('Contracts outstanding (Kalshi open_interest_fp)'),
  close_time: z.string().nullable().describe('When trading closes, ISO-8601 UTC'),
  status: z.string().describe('Kalshi\'s status ("active" for an open market, then "closed", "determined", "finalized", …)'),
});

const data = z.object({
  query: z.object({ category: z.string().nullable(), ticker: z.string().nullable(), event: z.string().nullable() }).describe('What was asked (category as Kalshi spells it)'),
  markets: z.array(marketRow).describe('category: sorted by volume_24h, largest first; event: as Kalshi lists them'),
});

type MarketRow = z.output<typeof marketRow>;

function toRow(m: KalshiMarket): MarketRow {
  const p = impliedProbability(m);
  return {
    ticker: m.ticker,
    event_ticker: m.event_ticker,
    title: m.title,
    outcome: m.outcome,
    probability: p.probability,
    probability_basis: p.basis,
    yes_bid: quotedBid(m),
    yes_ask: quotedAsk(m),
    last_price: tradedPrice(m),
    volume_24h: m.volume_24h,
    open_interest: m.open_interest,
    close_time: m.close_time,
    status: m.status,
  };
}

/** The `limit` busiest open markets of a category; meta says how much of Kalshi was walked. */
async function categoryMarkets(sources: Sources, category: string, limit: number) {
  const scan = await sources.kalshi.openEventsOfCategory(category);
  const markets = scan.events
    .flatMap((e) => e.markets)
    .filter((m) => m.status === 'active' || m.status === 'open')
    .sort((a, b) => (b.volume_24h ?? -1) - (a.volume_24h ?? -1) || a.ticker.localeCompare(b.ticker));
  const extra = {
    scan: {
      pages: scan.pages,
      events_scanned: scan.eventsScanned,
      category_events: scan.events.length,
      complete: scan.complete,
      ...(scan.complete ? {} : { note: `Kalshi lists more open events than the ${scan.eventsScanned} walked (KALSHI_CATEGORY_SCAN_PAGES); the ranking covers those only.` }),
    },
  };
  return { markets: markets.slice(0, limit), metas: mergeSourceMetas(scan.metas), extra };
}

export const predmktProbability = defineRoute({
  path: '/v1/predmkt-probability',
  summary: 'Implied probabilities of Kalshi prediction markets',
  description:
    'Give exactly one of: `category` (a Kalshi category: its open markets with the largest 24 h volume, `limit` of them), `ticker` (one market) ' +
    'or `event` (every market of an event). probability = the result (1 yes, 0 no) once Kalshi has determined it; else (yes_bid + yes_ask) / 2 ' +
    'when both sides are quoted; else the last trade clamped into the one-sided quote ([0, ask] with no bid, [bid, 1] with no ask); else null. ' +
    'probability_basis names the rule. Prices are dollars per contract that pays $1, so they read as probabilities. Kalshi has no category filter ' +
    'on its events, so a category is ranked over a walk of its open events, page by page until Kalshi\'s cursor is empty (meta.scan says how many, ' +
    'and whether the walk reached the end). An unknown ticker or event is a 404.',
  tag: 'Prediction markets',
  access: 'free',
  maxStale: 'PREDICTION_MARKETS_STALE_S',
  query,
  data,
  example: { category: 'Economics', limit: '3' },
  handler: async (req, { sources }) => {
    const { category, ticker, event, limit } = req.query;
    const given = [category, ticker, event].filter((v) => v !== undefined).length;
    if (given !== 1) throw new BadRequestError('give exactly one of the query parameters category, ticker or event');
    const asked = { category: category ?? null, ticker: ticker ?? null, event: event ?? null };
    let markets: KalshiMarket[];
    let metas: SourceMeta[];
    let extra = {};
    if (category !== undefined) {
      ({ markets, metas, extra } = await categoryMarkets(sources, category, limit));
    } else if (ticker !== undefined) {
      const got = await sources.kalshi.market(ticker);
      [markets, metas] = [[got.data], [got.meta]];
    } else {
      const got = await sources.kalshi.eventMarkets(event!);
      [markets, metas] = [got.data, [got.meta]];
    }
    return envelope({ query: asked, markets: markets.map(toRow) }, metas, extra);
  },
});
