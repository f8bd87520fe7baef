// /v1/market-clock: the NYSE's session state now or at `at`, computed locally from the exchange's
// rules (src/analytics/nyse-calendar.ts, market-clock.ts). No upstream is called.
import { z } from 'zod';
import { HOLIDAYS_AHEAD_DAYS, marketClock, UPCOMING_SESSIONS } from '../../analytics/market-clock.ts';
import { addDays, NEW_YORK } from '../../lib/new-york-time.ts';
import { defineRoute } from '../../catalog/route.ts';
import { envelope } from '../../upstream/envelope.ts';
import { dateTimeParam, DEFAULT_DATE_RANGE } from '../../params/dates.ts';

/** The last year the NYSE had published its holiday calendar for when these rules were checked. */
const PUBLISHED_THROUGH_YEAR = 2028;
/** The NYSE rules here were checked from 2025 on; the year range is the shared date rule's. */
const AT_RANGE = { from: '2025-01-01', to: DEFAULT_DATE_RANGE.to };

const query = z.object({
  at: dateTimeParam('The moment to ask about (default: now).', '2026-07-02T15:59:00-04:00', AT_RANGE),
});

const time = (what: string) => z.string().describe(`${what}, ISO-8601 with New York's UTC offset of that moment (−05:00 EST, −04:00 EDT)`);

const data = z.object({
  now: time('The moment asked about (`at`, or the server time), to the second'),
  is_open: z.boolean().describe('True from the open (inclusive) to the close (exclusive) of a session'),
  session: z.enum(['open', 'closed']),
  reason: z
    .string()
    .describe(
      'Open: "regular session" or "early close day: closes at 13:00 (<occasion>)". Closed: "weekend", the holiday\'s name, ' +
        '"pre-market" (a trading day before 09:30), "after hours" (after 16:00) or "early close (<occasion>)" (after 13:00 on an early-close day)',
    ),
  next_open: time('The next session open after `now`'),
  next_close: time('The close of the session in progress, else of the next session'),
  timezone: z.literal(NEW_YORK),
  upcoming_sessions: z
    .array(z.object({ date: z.string().describe('YYYY-MM-DD'), open: time('Open'), close: time('Close'), early_close: z.boolean().describe('Closes at 13:00') }))
    .describe(`The next ${UPCOMING_SESSIONS} sessions whose close is after now (today's included while it has not closed)`),
  holidays_ahead: z
    .array(z.object({ date: z.string().describe('YYYY-MM-DD'), name: z.string() }))
    .describe(`Full-day closures (weekends aside) from today through ${HOLIDAYS_AHEAD_DAYS} days ahead`),
});

export const marketClockRoute = defineRoute({
  path: '/v1/market-clock',
  summary: 'NYSE open or closed, next open and close, upcoming sessions and holidays',
  description:
    'Computed locally from the NYSE rules, no upstream: regular session 09:30–16:00 America/New_York; full-day holidays (New Year\'s Day, ' +
    'Martin Luther King Jr. Day, Washington\'s Birthday, Good Friday, Memorial Day, Juneteenth, Independence Day, Labor Day, Thanksgiving, Christmas) ' +
    'moved Saturday → Friday and Sunday → Monday, except a Saturday New Year\'s Day, which is not observed; 13:00 early closes on July 3 ' +
    '(Monday–Thursday), the day after Thanksgiving and Christmas Eve (Monday–Thursday); plus ad hoc closures (2025-01-09). ' +
    `Checked against the NYSE's published calendars for 2025–${PUBLISHED_THROUGH_YEAR}; later years follow the same rules, and an ad hoc ` +
    'closure announced later is not known until it is added. Times carry New York\'s offset of that moment, so daylight-saving changes show.',
  tag: 'Calendars',
  access: 'paid',
  query,
  data,
  example: { at: '2026-11-27T12:59:00-05:00' },
  handler: async (req) => {
    const at = req.query.at === undefined ? Date.now() : Date.parse(req.query.at);
    const clock = marketClock(at);
    // holidays_ahead reaches furthest: say when any date shown is past the published calendars.
    const lastYear = Number(addDays(clock.now.slice(0, 10), HOLIDAYS_AHEAD_DAYS).slice(0, 4));
    const extra = lastYear > PUBLISHED_THROUGH_YEAR
      ? { note: `The NYSE has published its holidays through ${PUBLISHED_THROUGH_YEAR}; later dates here follow the exchange's rules.` }
      : {};
    return envelope(clock, [], extra);
  },
});
