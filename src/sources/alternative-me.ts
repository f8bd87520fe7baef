// alternative.me Crypto Fear & Greed Index (no key).
//   GET {base}/fng/?limit=N&format=json  →  {name, data: [{value, value_classification, timestamp, time_until_update?}], metadata: {error}}
// Quirks: every value is a string; the index is daily, `timestamp` is unix seconds (00:00 UTC) and the
// newest reading comes first; a day may be listed twice (one reading per day is kept);
// `time_until_update` (seconds) is on the newest reading only; limit=0
// means the whole history since 2018-02-01, so it is never sent. Errors are reported in metadata.error.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { optionalDecimal } from './wire.ts';

export const ALTERNATIVE_ME = 'alternative.me';

/** Readings asked for on every call: the current one and 365 days of history, so one cached answer serves every `limit`. */
export const FNG_READINGS = 366;

/** alternative.me reports errors in `metadata.error` (null on success). */
export const ALTERNATIVE_ME_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || !isRecord(body.metadata)) return undefined;
    const error = body.metadata.error;
    return typeof error === 'string' && error !== '' ? { kind: 'provider_error', detail: error } : undefined;
  },
};

const indexValue = z
  .string()
  .regex(/^\d{1,3}$/)
  .transform(Number)
  .pipe(z.number().int().min(0).max(100));
const unixSeconds = z
  .string()
  .regex(/^\d+$/)
  .transform((v) => Number(v) * 1000);

export interface FearGreedReading {
  /** 0 (extreme fear) to 100 (extreme greed). */
  value: number;
  /** alternative.me's label: Extreme Fear, Fear, Neutral, Greed, Extreme Greed. */
  classification: string;
  /** Day of the reading (00:00 UTC), epoch ms. */
  time: number;
  /** Seconds until the next reading, as of the answer; only on the newest reading. */
  time_until_update: number | null;
}

const DAY_MS = 86_400_000;

/**
 * One reading per UTC day, newest first. The index is daily, but a day can arrive twice: the later stamp of the
 * day is kept, and of two with the same stamp the one listed first (alternative.me lists its newest word first).
 */
function onePerDay(readings: FearGreedReading[]): FearGreedReading[] {
  const newestFirst = [...readings].sort((a, b) => b.time - a.time); // stable: equal stamps keep their order
  const seen = new Set<number>();
  return newestFirst.filter((r) => {
    const day = Math.floor(r.time / DAY_MS);
    if (seen.has(day)) return false;
    seen.add(day);
    return true;
  });
}

/** Readings, newest first, one per day. */
const fngSchema = z
  .object({
    data: z
      .array(z.object({ value: indexValue, value_classification: z.string(), timestamp: unixSeconds, time_until_update: optionalDecimal }))
      .min(1),
  })
  .transform((doc) =>
    onePerDay(doc.data.map((r): FearGreedReading => ({ value: r.value, classification: r.value_classification, time: r.timestamp, time_until_update: r.time_until_update }))),
  );

export interface AlternativeMeSettings {
  baseUrl: string;
  ttlS: number;
}

function createAlternativeMe(ctx: SourceContext<AlternativeMeSettings>) {
  const { baseUrl, ttlS } = ctx.settings;
  return {
    /** The newest FNG_READINGS daily readings, newest first. */
    async fearGreed(): Promise<Sourced<FearGreedReading[]>> {
      return ctx.fetch({ url: `${baseUrl}/fng/?limit=${FNG_READINGS}&format=json`, schema: fngSchema, protocol: ALTERNATIVE_ME_PROTOCOL, ttlS });
    },
  };
}

export type AlternativeMe = ReturnType<typeof createAlternativeMe>;

export const alternativeMeSource = defineSource({
  key: 'alternativeMe',
  name: ALTERNATIVE_ME,
  title: 'alternative.me Crypto Fear & Greed Index',
  docs: 'https://alternative.me/crypto/fear-and-greed-index/#api',
  notes: 'No key and no documented rate limit. One daily reading (00:00 UTC); every value is a string; errors are reported in metadata.error.',
  env: {
    ALTERNATIVE_ME_BASE_URL: env.url('https://api.alternative.me', 'alternative.me API (/fng/).'),
    CACHE_TTL_SENTIMENT_S: env.ttl(300, 'Fear & Greed readings'),
  },
  settings: (e) => ({ baseUrl: e.ALTERNATIVE_ME_BASE_URL, ttlS: e.CACHE_TTL_SENTIMENT_S }),
  create: createAlternativeMe,
});
