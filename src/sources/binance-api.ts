// What Binance spot and USD-M futures share: the `{code, msg}` error body (sent with HTTP 4xx, codes
// negative). -1121 "Invalid symbol" is an answer (our 404); -1003 (too many requests) and -1015 (too
// many orders) are rate limits; any other code is a provider failure. The 451 geo-block body carries
// code 0, so it is left to its HTTP status.
import { isRecord, type Protocol } from '../upstream/protocol.ts';

const INVALID_SYMBOL = -1121;
const RATE_LIMIT_CODES = new Set([-1003, -1015]);

export const BINANCE_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || typeof body.code !== 'number' || typeof body.msg !== 'string' || body.code >= 0) return undefined;
    if (body.code === INVALID_SYMBOL) return { kind: 'not_found', detail: body.msg };
    const detail = `code ${body.code} (${body.msg})`;
    return RATE_LIMIT_CODES.has(body.code) ? { kind: 'rate_limited', detail } : { kind: 'provider_error', detail };
  },
};

/** Query string in the order given (the cache key depends on the URL, so callers keep one order). */
export const query = (params: Record<string, string | number>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
