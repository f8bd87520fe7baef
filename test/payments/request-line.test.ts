// The request line a payment identifier (and a voucher's retry) is bound to (request-adapter.ts): the method, the
// matched route and the query with its pairs sorted by name, then value, however the client ordered them. A query
// that already arrives sorted is written as it is; one that does not, sorted: both give the same line.
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../../src/catalog/route.ts';
import type { PaymentSchemes } from '../../src/payments/core/scheme.ts';
import { beginAttempt } from '../../src/payments/request-adapter.ts';

const line = (url: string, method = 'GET') =>
  beginAttempt({ id: 'r1', method, url, headers: {} } as unknown as FastifyRequest, { url: '/v1/price' } as CatalogEntry, 'http://127.0.0.1', {} as PaymentSchemes).request.line;

describe('the request line of a paid call', () => {
  it('is the method and the matched route, with no query', () => {
    expect(line('/v1/price')).toBe('GET /v1/price');
    expect(line('/v1/price?')).toBe('GET /v1/price');
    expect(line('/anything/else', 'HEAD')).toBe('HEAD /v1/price');
  });

  it('sorts the pairs by name, then by value, however they came', () => {
    expect(line('/v1/price?symbol=BTC')).toBe('GET /v1/price?symbol=BTC');
    expect(line('/v1/price?symbol=BTC&asset_class=crypto')).toBe('GET /v1/price?asset_class=crypto&symbol=BTC');
    expect(line('/v1/price?asset_class=crypto&symbol=BTC')).toBe('GET /v1/price?asset_class=crypto&symbol=BTC');
    expect(line('/v1/price?b=2&a=9&a=1')).toBe('GET /v1/price?a=1&a=9&b=2');
    expect(line('/v1/price?a=1&a=9&b=2')).toBe('GET /v1/price?a=1&a=9&b=2');
  });

  it('writes every spelling of one query the same, sorted or not', () => {
    // URLSearchParams' form encoding either way: %2F and / alike, a space as +.
    expect(line('/v1/price?symbol=BTC%2FUSDT&x=a%20b')).toBe('GET /v1/price?symbol=BTC%2FUSDT&x=a+b');
    expect(line('/v1/price?x=a+b&symbol=BTC/USDT')).toBe('GET /v1/price?symbol=BTC%2FUSDT&x=a+b');
    expect(line('/v1/price?B=1&a=1')).toBe('GET /v1/price?B=1&a=1'); // by UTF-16 code units: upper case first
    expect(line('/v1/price?a=1&B=1')).toBe('GET /v1/price?B=1&a=1');
  });
});
