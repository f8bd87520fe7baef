// Kraken public market data (no key).
//   GET {base}/0/public/Depth?pair=XBTUSD&count=N   {error: [], result: {<Kraken pair name>: {asks, bids}}}
// Quirks: Kraken spells bitcoin XBT and dogecoin XDG; the result is keyed by Kraken's own pair name
// (XXBTZUSD for XBTUSD), not the alias sent, so the single entry is taken. Levels are
// [price(str), volume(str), timestamp(int, unix s)]. Errors arrive in `error[]`, usually with HTTP 200:
// "EQuery:Unknown asset pair" is our 404, anything else (e.g. "EGeneral:Too many requests") a 502.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { UpstreamError } from '../lib/errors.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import type { CryptoSymbol } from '../params/symbols.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { TTL_ENV } from './ttls.ts';
import { decimal } from './wire.ts';

export const KRAKEN = 'kraken';

const UNKNOWN_PAIR = 'EQuery:Unknown asset pair';

/** Kraken puts its errors in `error[]` (usually with HTTP 200): an unknown pair is an answer, a rate limit is one, the rest are failures. */
export const KRAKEN_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || !Array.isArray(body.error) || body.error.length === 0) return undefined;
    const errors = body.error.map(String);
    if (errors.includes(UNKNOWN_PAIR)) return { kind: 'not_found', detail: UNKNOWN_PAIR };
    const detail = errors.join('; ');
    return /rate limit|too many requests/i.test(detail) ? { kind: 'rate_limited', detail } : { kind: 'provider_error', detail };
  },
};

const level = z.tuple([decimal, decimal, z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/).transform(Number)])], z.unknown());
const depthSchema = z.object({
  error: z.array(z.string()),
  result: z.record(z.string(), z.object({ asks: z.array(level), bids: z.array(level) })),
});

/** Kraken's asset codes where they differ from the common ones. */
const KRAKEN_ASSET: Record<string, string> = { BTC: 'XBT', DOGE: 'XDG' };

/**
 * Kraken pair alias for a symbol: BTC → XBTUSD. Like Coinbase, Kraken's main markets are in USD, so a
 * base asset given alone (USDT by default elsewhere) is priced against USD; an explicit quote is kept.
 */
export function krakenPair(s: CryptoSymbol): string {
  const quote = !s.explicitQuote && s.quote === 'USDT' ? 'USD' : s.quote;
  return `${KRAKEN_ASSET[s.base] ?? s.base}${KRAKEN_ASSET[quote] ?? quote}`;
}

export interface KrakenBook {
  /** Kraken's own name of the pair, e.g. XXBTZUSD. */
  pairName: string;
  bids: [number, number][];
  asks: [number, number][];
  /** Latest level timestamp in the answer, ISO; null for an empty book. */
  time: string | null;
}

export interface KrakenSettings {
  baseUrl: string;
  ttl: { orderbook: number };
}

function createKraken(ctx: SourceContext<KrakenSettings>) {
  const options = ctx.settings;
  return {
    /** The book to `count` (1-500) levels a side. `pair` is a Kraken alias such as XBTUSD. */
    async depth(pair: string, count: number): Promise<Sourced<KrakenBook>> {
      const res = await ctx.fetch({
        url: `${options.baseUrl}/0/public/Depth?pair=${encodeURIComponent(pair)}&count=${count}`,
        schema: depthSchema,
        protocol: KRAKEN_PROTOCOL,
        notFound: `kraken does not list the pair ${pair}`,
        ttlS: options.ttl.orderbook,
      });
      const entries = Object.entries(res.data.result);
      if (entries.length !== 1) {
        throw new UpstreamError(KRAKEN, 'schema', `kraken returned ${entries.length} books for one pair`);
      }
      const [pairName, book] = entries[0]!;
      const times = [...book.bids, ...book.asks].map((l) => l[2]);
      const side = (levels: (readonly unknown[])[]) => levels.map((l) => [l[0], l[1]] as [number, number]);
      return {
        data: {
          pairName,
          bids: side(book.bids),
          asks: side(book.asks),
          time: times.length ? new Date(Math.max(...times) * 1000).toISOString() : null,
        },
        meta: res.meta,
      };
    },
  };
}

export type Kraken = ReturnType<typeof createKraken>;

export const krakenSource = defineSource({
  key: 'kraken',
  name: KRAKEN,
  title: 'Kraken',
  docs: 'https://docs.kraken.com/api/docs/rest-api/get-order-book',
  notes: 'No key. Public calls cost 1 point of a 15-point counter that decays at 0.33/s per IP; errors arrive in error[] with HTTP 200.',
  env: {
    KRAKEN_BASE_URL: env.url('https://api.kraken.com', 'Kraken spot REST API.'),
    CACHE_TTL_ORDERBOOK_S: TTL_ENV.CACHE_TTL_ORDERBOOK_S,
  },
  settings: (e) => ({ baseUrl: e.KRAKEN_BASE_URL, ttl: { orderbook: e.CACHE_TTL_ORDERBOOK_S } }),
  create: createKraken,
});
