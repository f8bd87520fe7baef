// GET /v1/usage: an API key's own limits and use, in the shape of CoinMarketCap's /v1/key/info
// (plan limits; usage this minute, today and this month, made and left). It needs a valid key, costs
// nothing and is never counted against the key (access `key`: its own rate-limit bucket, no usage row).
//
// This minute is the rate limiter's own window for the key (what a 429 is decided on); today and
// this month are UTC calendar periods from the usage table plus this process's unflushed counts.
// There are no daily or monthly limits: their `requests_left` is null.
import { z } from 'zod';
import { defineRoute } from '../catalog/route.ts';
import { envelope } from '../upstream/envelope.ts';

const period = (what: string) =>
  z.object({
    requests_made: z.number().int().describe(`Calls counted ${what}`),
    requests_left: z.number().int().nullable().describe(`Calls left ${what}; null = no limit`),
    resets_at: z.string().nullable().describe('ISO-8601 time the period ends (UTC)'),
  });

export const keyUsage = defineRoute({
  path: '/v1/usage',
  summary: "Your API key's limits and use",
  description:
    'The calling API key\'s limits and its use this minute (the rate limiter\'s window), today and this month (UTC), with today\'s calls per route. ' +
    'Needs a valid x-api-key; free, never charged and never counted against the key. Counts from other instances arrive within USAGE_FLUSH_MS.',
  tag: 'Account',
  access: 'key',
  data: z.object({
    key_id: z.string().describe('The id of the key (never the key itself)'),
    limits: z.object({
      requests_per_minute: z.number().int().describe('KEY_RATE_LIMIT: paid calls per minute with this key'),
      requests_per_day: z.number().int().nullable().describe('Calls allowed per UTC day; null = no daily limit (none is set on this server)'),
      requests_per_month: z.number().int().nullable().describe('Calls allowed per UTC month; null = no monthly limit (none is set on this server)'),
    }),
    usage: z.object({
      current_minute: period('in the rate limiter\'s current one-minute window'),
      current_day: period('today (UTC)').extend({
        date: z.string().describe('YYYY-MM-DD (UTC)'),
        by_route: z.record(z.string(), z.number().int()).describe('Calls today per route'),
      }),
      current_month: period('this month (UTC)').extend({ month: z.string().describe('YYYY-MM (UTC)') }),
    }),
  }),
  handler: async (req, ctx) => {
    const credential = req.credential;
    // Access control lets only keyed calls through to a key-only route.
    if (credential?.kind !== 'key') throw new Error('key-only route reached without a key');
    const keyId = credential.key.id;
    // The limiter's window for this key, read without counting this call.
    const minute = await ctx.keyMinute(keyId);
    const used = await ctx.usage.usageOf(keyId);
    const now = new Date();
    const dayEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const perMinute = ctx.config.keys.rateLimitPerMinute;
    const left = Math.max(0, perMinute - minute.current);
    const windowOpen = minute.ttl > 0;
    return envelope(
      {
        key_id: keyId,
        limits: { requests_per_minute: perMinute, requests_per_day: null, requests_per_month: null },
        usage: {
          current_minute: {
            requests_made: perMinute - left,
            requests_left: left,
            resets_at: windowOpen ? new Date(now.getTime() + minute.ttl).toISOString() : null,
          },
          current_day: { date: now.toISOString().slice(0, 10), requests_made: used.today, requests_left: null, resets_at: dayEnd.toISOString(), by_route: used.today_by_route },
          current_month: { month: now.toISOString().slice(0, 7), requests_made: used.month, requests_left: null, resets_at: monthEnd.toISOString() },
        },
      },
      [],
    );
  },
});
