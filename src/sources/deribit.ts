// Deribit public market data (no key).
//   GET {base}/api/v2/public/get_volatility_index_data?currency=&start_timestamp=&end_timestamp=&resolution=
//       → result.data = [[ts_ms, open, high, low, close], ...] (DVOL candles), result.continuation (int|null)
//   GET {base}/api/v2/public/get_historical_volatility?currency=
//       → result = [[ts_ms, volatility_percent], ...] (hourly, oldest first; the official example repeats timestamps)
// Quirks: a JSON-RPC envelope over plain HTTP GET: {jsonrpc, result, usIn, usOut, usDiff, testnet}; errors
// carry `error: {code, message}` (HTTP 400 for bad parameters); 10028 "too_many_requests" is its rate limit.
// Both series are annualized volatility in percent (DVOL 47.5 = 47.5 %).
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';

export const DERIBIT = 'deribit';

/** The currencies whose DVOL and historical volatility Deribit publishes and this server serves. */
export const VOLATILITY_CURRENCIES = ['BTC', 'ETH'] as const;
export type VolatilityCurrency = (typeof VOLATILITY_CURRENCIES)[number];

/** Deribit's error code for "too many requests" (its rate limit). */
const TOO_MANY_REQUESTS = 10028;

/** Deribit answers `{ error: { code, message } }` (HTTP 200 or 400) for every failure. */
export const DERIBIT_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || !isRecord(body.error)) return undefined;
    const code = typeof body.error.code === 'number' ? body.error.code : undefined;
    const message = typeof body.error.message === 'string' ? body.error.message : 'error';
    const detail = `code ${code ?? '?'} (${message})`;
    return code === TOO_MANY_REQUESTS ? { kind: 'rate_limited', detail } : { kind: 'provider_error', detail };
  },
};

/** Deribit's success envelope around `result`. */
const ok = <S extends z.ZodType>(result: S) => z.object({ jsonrpc: z.literal('2.0'), result });

const timestampMs = z.number().int().nonnegative();
const candle = z.tuple([timestampMs, z.number(), z.number(), z.number(), z.number()]);

/** DVOL candles → `{ time, close }`, oldest first. */
const volatilityIndexSchema = ok(z.object({ data: z.array(candle), continuation: z.number().nullable().optional() })).transform((r) =>
  r.result.data.map(([time, , , , close]) => ({ time, close })).sort((a, b) => a.time - b.time),
);

/** Historical volatility points → `{ time, volatility }`, oldest first. */
const historicalVolatilitySchema = ok(z.array(z.tuple([timestampMs, z.number()]))).transform((r) =>
  r.result.map(([time, volatility]) => ({ time, volatility })).sort((a, b) => a.time - b.time),
);

export interface DvolCandle {
  /** Candle open time, epoch ms. */
  time: number;
  /** DVOL at the candle's close (the latest value for the candle in progress), annualized percent. */
  close: number;
}

export interface VolatilityPoint {
  time: number;
  /** Annualized realized volatility, percent. */
  volatility: number;
}

/** Candle lengths `get_volatility_index_data` accepts, in seconds. */
export type DvolResolution = 1 | 60 | 3600 | 43200;

export interface DeribitSettings {
  baseUrl: string;
  ttlS: number;
}

function createDeribit(ctx: SourceContext<DeribitSettings>) {
  const { baseUrl, ttlS } = ctx.settings;
  const url = (method: string, query: Record<string, string>) => `${baseUrl}/api/v2/public/${method}?${new URLSearchParams(query)}`;
  return {
    /** DVOL candles with open time in [startMs, endMs], oldest first. */
    async volatilityIndex(currency: VolatilityCurrency, startMs: number, endMs: number, resolution: DvolResolution): Promise<Sourced<DvolCandle[]>> {
      return ctx.fetch({
        url: url('get_volatility_index_data', { currency, start_timestamp: String(startMs), end_timestamp: String(endMs), resolution: String(resolution) }),
        schema: volatilityIndexSchema,
        protocol: DERIBIT_PROTOCOL,
        ttlS,
      });
    },

    /** Deribit's hourly historical (realized) volatility, oldest first. */
    async historicalVolatility(currency: VolatilityCurrency): Promise<Sourced<VolatilityPoint[]>> {
      return ctx.fetch({ url: url('get_historical_volatility', { currency }), schema: historicalVolatilitySchema, protocol: DERIBIT_PROTOCOL, ttlS });
    },
  };
}

export type Deribit = ReturnType<typeof createDeribit>;

export const deribitSource = defineSource({
  key: 'deribit',
  name: DERIBIT,
  title: 'Deribit (public market data)',
  docs: 'https://docs.deribit.com/api-reference/market-data/public-get_volatility_index_data',
  notes: 'No key for public/* methods; unauthenticated calls are limited per IP by a credit pool (error 10028 "too_many_requests" when it runs dry). Errors arrive as {error: {code, message}}, often with HTTP 400.',
  env: {
    DERIBIT_BASE_URL: env.url('https://www.deribit.com', 'Deribit API (public methods under /api/v2/public/).'),
    CACHE_TTL_VOLATILITY_S: env.ttl(60, 'Deribit DVOL candles and historical volatility'),
  },
  settings: (e) => ({ baseUrl: e.DERIBIT_BASE_URL, ttlS: e.CACHE_TTL_VOLATILITY_S }),
  create: createDeribit,
});
