// /v1/macro-calendar: upcoming US macro events (FOMC decisions, CPI, jobs report) from the project's
// calendar file, with Kalshi's market odds of each upcoming FOMC decision. The dates never depend on
// Kalshi: when it fails, the calendar still answers, with odds null and the reason.
import { z } from 'zod';
import { coverageWarnings, upcomingEvents, type UpcomingEvent } from '../../analytics/macro-calendar.ts';
import { fedOdds } from '../../analytics/prediction-markets.ts';
import { boundedInt, enumParam } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { MACRO_EVENT_TYPES } from '../../data/macro-calendar.ts';
import { envelope, type SourceMeta } from '../../upstream/envelope.ts';
import { AppError } from '../../lib/errors.ts';
import { fedDecisionEventTicker, KALSHI, type KalshiEvent } from '../../sources/kalshi.ts';
import type { Sources } from '../../sources/index.ts';

const query = z.object({
  days: boundedInt(1, 400, 90, 'Horizon in days from today (New York date), 1-400.'),
  type: enumParam(MACRO_EVENT_TYPES)
    .optional()
    .describe('Only this kind, any case: fomc (FOMC rate decisions), cpi (BLS CPI releases) or jobs (BLS Employment Situation). Default: all.'),
});

const share = (what: string) => z.number().describe(what);

const oddsSchema = z
  .object({
    event_ticker: z.string().describe('Kalshi event of the meeting (KXFEDDECISION-26OCT)'),
    cut: share('Normalised probability of a cut of any size: Σ cut markets / Σ all markets'),
    hold: share('Normalised probability of no change'),
    hike: share('Normalised probability of a hike of any size'),
    raw: z
      .object({ cut: z.number(), hold: z.number(), hike: z.number(), sum: z.number().describe('Σ of the markets\' prices; over 1 by the spread and fees') })
      .describe('The bucket sums of the market prices before normalising'),
    markets: z
      .array(
        z.object({
          ticker: z.string(),
          bucket: z.enum(['cut', 'hold', 'hike']),
          price: z.number().describe('Implied probability of the market (as /v1/predmkt-probability): its YES bid/ask mid, else its last trade clamped into the one-sided quote'),
          basis: z.enum(['result', 'mid', 'last_price', 'last_price_clamped']).describe('The rule that gave `price` (see /v1/predmkt-probability probability_basis)'),
        }),
      )
      .describe('Every market of the event, as used'),
    source: z.literal(KALSHI),
    as_of: z.string().describe('When Kalshi answered, ISO-8601 UTC'),
  })
  .describe("Kalshi's KXFEDDECISION market odds of this meeting's decision");

const eventRow = z.object({
  type: z.enum(MACRO_EVENT_TYPES),
  name: z.string(),
  date: z.string().describe('YYYY-MM-DD, New York'),
  time_et: z.string().describe('Release time, New York (08:30 for BLS, 14:00 for the FOMC statement)'),
  datetime_utc: z.string().describe('date and time_et as an instant, ISO-8601 UTC'),
  days_until: z.number().int().describe("Calendar days from today's New York date to `date` (0 = today)"),
  reference_period: z.string().nullable().describe('The month the data describe (YYYY-MM) for CPI and jobs; null for FOMC'),
  sep: z.boolean().nullable().describe('FOMC only: a Summary of Economic Projections (dot plot) comes with the decision; null when unknown or not FOMC'),
  source_url: z.string().describe('The official source of the date'),
  verified: z.boolean().describe('True when the date was read from the official source (or a verbatim copy of its release); false when it is known from secondary sources only'),
  note: z.string().nullable().describe('Provenance and circumstances (moved, tentative, how the SEP flag is known)'),
  odds: oddsSchema.nullable().describe('FOMC only; null for other types, and when Kalshi has no open market for the meeting or fails (see odds_unavailable)'),
  odds_unavailable: z.string().nullable().describe('Why odds is null for an FOMC event; null otherwise'),
});

const data = z.object({
  from: z.string().describe("Today's New York date"),
  to: z.string().describe('from + days'),
  count: z.number().int(),
  events: z.array(eventRow).describe('Sorted by datetime_utc'),
});

type EventRow = z.output<typeof eventRow>;

interface OddsLookup {
  events: KalshiEvent[] | null;
  meta: SourceMeta | null;
  /** Why there are no events, when Kalshi failed. */
  failure: string | null;
}

/** Kalshi's open Fed-decision events; a failure is kept as a reason, never turned into odds. */
async function lookUpOdds(sources: Sources): Promise<OddsLookup> {
  try {
    const got = await sources.kalshi.fedDecisionEvents();
    return { events: got.data, meta: got.meta, failure: null };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { events: null, meta: null, failure: `${KALSHI} failed: ${err.message}` };
  }
}

function withOdds(e: UpcomingEvent, lookup: OddsLookup | null): Pick<EventRow, 'odds' | 'odds_unavailable'> {
  if (e.type !== 'fomc' || lookup === null) return { odds: null, odds_unavailable: null };
  if (lookup.events === null) return { odds: null, odds_unavailable: lookup.failure };
  const ticker = fedDecisionEventTicker(e.date);
  const event = lookup.events.find((k) => k.event_ticker === ticker);
  if (!event) return { odds: null, odds_unavailable: `Kalshi lists no open ${ticker} event` };
  if (event.mutually_exclusive === false) return { odds: null, odds_unavailable: `Kalshi's ${ticker} markets are not mutually exclusive` };
  const got = fedOdds(event.markets);
  if ('reason' in got) return { odds: null, odds_unavailable: `${ticker}: ${got.reason}` };
  const { cut, hold, hike, raw, markets } = got.odds;
  return { odds: { event_ticker: ticker, cut, hold, hike, raw, markets, source: KALSHI, as_of: lookup.meta!.fetched_at }, odds_unavailable: null };
}

export const macroCalendar = defineRoute({
  path: '/v1/macro-calendar',
  summary: 'Upcoming FOMC decisions, CPI and jobs releases, with Kalshi odds of each FOMC decision',
  description:
    'Dates come from the calendar file shipped with the server (or MACRO_CALENDAR_FILE), each with its official source and `verified` ' +
    '(false when known from secondary sources only). Events from now through `days` days ahead (New York dates), sorted by time. ' +
    'For each FOMC decision, odds from Kalshi\'s KXFEDDECISION event of that meeting: each market\'s YES bid/ask mid (else its last trade clamped into the one-sided quote), ' +
    'summed per bucket (cut = Σ cut markets, hold, hike) and divided by the total so the three add up to 1; the raw sums are kept. ' +
    'When Kalshi fails, the calendar still answers with odds null and the reason (meta.odds_error). When the file has no dates of a type ' +
    'up to the end of the horizon, meta.coverage and meta.warnings say so. /v1/status shows up to which date each type is known.',
  tag: 'Calendars',
  access: 'free',
  maxStale: 'PREDICTION_MARKETS_STALE_S',
  query,
  data,
  example: { days: '90' },
  handler: async (req, { config, sources }) => {
    const now = Date.now();
    const types = req.query.type ? [req.query.type] : MACRO_EVENT_TYPES;
    const up = upcomingEvents(config.macroCalendar.calendar, now, req.query.days, types);
    const lookup = up.events.some((e) => e.type === 'fomc') ? await lookUpOdds(sources) : null;
    const events = up.events.map(({ evidence: _evidence, ...e }) => ({ ...e, ...withOdds(e, lookup) }));
    const warnings = coverageWarnings(up);
    return envelope({ from: up.from, to: up.to, count: events.length, events }, lookup?.meta ? [lookup.meta] : [], {
      calendar_file: config.macroCalendar.file ?? 'built-in',
      coverage: up.coverage,
      ...(warnings.length ? { warnings } : {}),
      ...(lookup?.failure ? { odds_error: { error: lookup.failure, source: KALSHI } } : {}),
    });
  },
});
