// /v1/sentiment: the Crypto Fear & Greed Index of alternative.me, the current reading and up to a year of history.
import { z } from 'zod';
import { boundedInt } from '../../params/query.ts';
import { defineRoute } from '../../catalog/route.ts';
import { derived, envelope } from '../../http/envelope.ts';
import { FNG_READINGS } from '../../sources/alternative-me.ts';
import { isoFromMs } from '../../sources/wire.ts';

const MAX_HISTORY = FNG_READINGS - 1;

const query = z.object({
  limit: boundedInt(0, MAX_HISTORY, 0, `Daily readings of history before the current one, 0-${MAX_HISTORY}.`),
});

const value = z.number().int().describe('Index from 0 (extreme fear) to 100 (extreme greed)');
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

/**
 * next_update_in_s counts down with the answer's age (age_s, in tenths): the answer holds until the age
 * reaches the half second at which the countdown's rounding moves on (a little before it, to be safe).
 */
function nextSecondOfAge(fetchedMs: number, ageAtThisCountS: number): number {
  return fetchedMs + ageAtThisCountS * 1000 + 500;
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
  query,
  data,
  example: { limit: '7' },
  handler: async (req, { sources }) => {
    const { data: readings, meta } = await sources.alternativeMe.fearGreed();
    const [now, ...before] = readings as [(typeof readings)[number], ...typeof readings];
    const untilUpdate = now.time_until_update === null ? null : Math.max(0, Math.round(now.time_until_update - meta.age_s));
    const data = derived(readings, `${req.query.limit} ${untilUpdate}`, () => ({
      current: { value: now.value, classification: now.classification, time: isoFromMs(now.time), next_update_in_s: untilUpdate },
      history: before
        .slice(0, req.query.limit)
        .reverse()
        .map((r) => ({ value: r.value, classification: r.classification, date: isoFromMs(r.time).slice(0, 10) })),
    }));
    return envelope(data, [meta], {}, untilUpdate ? nextSecondOfAge(Date.parse(meta.fetched_at), now.time_until_update! - untilUpdate) : undefined);
  },
});
