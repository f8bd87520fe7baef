// /v1/sentiment: the Crypto Fear & Greed Index of alternative.me, the current reading and up to a year of history.
import { z } from 'zod';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { derived, envelope } from '../../upstream/envelope.ts';
import { FNG_READINGS } from '../../sources/alternative-me.ts';
import { isoFromMs } from '../../sources/wire.ts';

const MAX_HISTORY = FNG_READINGS - 1;

const query = z.object({
  limit: boundedInt(0, MAX_HISTORY, 0, `Daily readings of history before the current one, 0-${MAX_HISTORY}.`),
});

const value = z.number().int().min(0).max(100).describe('Index from 0 (extreme fear) to 100 (extreme greed)');
const classification = z.string().describe("alternative.me's label: Extreme Fear, Fear, Neutral, Greed or Extreme Greed");

const data = z.object({
  current: z.object({
    value,
    classification,
    time: z.string().describe('Day of the reading (the index is daily, stamped 00:00 UTC), ISO-8601 UTC'),
    next_update_in_s: z
      .number()
      .int()
      .nullable()
      .describe("Seconds until alternative.me publishes the next reading: its time_until_update minus the age of the cached answer (≥ 0); null when not given"),
  }),
  history: z
    .array(z.object({ value, classification, date: z.string().describe('Day of the reading, YYYY-MM-DD (UTC)') }))
    .describe('The `limit` daily readings before the current one, oldest first (fewer when alternative.me has fewer)'),
});

/** next_update_in_s for a reading's time_until_update and the answer's age_s (in tenths, as served). */
export function countdownAt(timeUntilUpdate: number, ageS: number): number {
  return Math.max(0, Math.round(timeUntilUpdate - ageS));
}

/**
 * Until when (epoch ms, exclusive) an answer made at `ageS` shows the same countdown: the first moment its
 * age_s (tenths, rounded half up from the age in ms, see ageOf) reaches a tenth at which countdownAt gives
 * another value; undefined once the countdown is 0 (it stays there). Found with the countdown's own
 * arithmetic, tenth by tenth, so that the answer is remembered exactly as long as it holds: a bound worked
 * out apart is easily early (age_s rounds half up, so a whole countdown turns 0.55 s past the second, not
 * 0.50 s), and an answer made past its own bound cannot be remembered: every request then takes the full path.
 */
export function countdownHoldsUntil(fetchedMs: number, timeUntilUpdate: number, ageS: number): number | undefined {
  const shown = countdownAt(timeUntilUpdate, ageS);
  if (shown === 0) return undefined;
  const tenth = Math.round(ageS * 10);
  // The countdown moves by one a second: it changes within 10 tenths (11 at a rounding edge).
  for (let k = tenth + 1; k <= tenth + 20; k++) {
    // age_s is k/10 from age 100k − 50 ms on.
    if (countdownAt(timeUntilUpdate, k / 10) !== shown) return fetchedMs + 100 * k - 50;
  }
  return fetchedMs + 100 * tenth + 50; // not reached; if it were, the answer would hold for this tenth only
}

export const sentiment = defineRoute({
  path: '/v1/sentiment',
  summary: 'Crypto Fear & Greed Index (alternative.me): current reading and daily history',
  description:
    "alternative.me's Crypto Fear & Greed Index (0 = extreme fear, 100 = extreme greed), published once a day. current is the newest reading; " +
    'next_update_in_s = its time_until_update − the age of the cached answer, never below 0. history holds the `limit` readings before it, ' +
    `oldest first (limit 0-${MAX_HISTORY}, default 0), one per day: a day alternative.me lists twice is served once (its later stamp). ` +
    'Free: limited per client IP (FREE_RATE_LIMIT, 60/min by default).',
  tag: 'Market context',
  access: 'free',
  maxStale: 'MARKET_CONTEXT_STALE_S',
  query,
  data,
  example: { limit: '7' },
  handler: async (req, { sources }) => {
    const { data: readings, meta } = await sources.alternativeMe.fearGreed();
    const [now, ...before] = readings as [(typeof readings)[number], ...typeof readings];
    const untilUpdate = now.time_until_update === null ? null : countdownAt(now.time_until_update, meta.age_s);
    const data = derived(readings, `${req.query.limit} ${untilUpdate}`, () => ({
      current: { value: now.value, classification: now.classification, time: isoFromMs(now.time), next_update_in_s: untilUpdate },
      history: before
        .slice(0, req.query.limit)
        .reverse()
        .map((r) => ({ value: r.value, classification: r.classification, date: isoFromMs(r.time).slice(0, 10) })),
    }));
    // The countdown reads the clock: the answer holds only while it shows the same value.
    const holdsUntil = now.time_until_update === null ? undefined : countdownHoldsUntil(Date.parse(meta.fetched_at), now.time_until_update, meta.age_s);
    return envelope(data, [meta], {}, holdsUntil);
  },
});
