// The response cache's Redis format (src/redis/cache-codec.ts): parsed upstream answers that are not JSON
// (bigints, typed arrays, Maps) read back exactly as written; what would not read back the same, or is
// over the size cap, is refused; the key never carries the upstream URL.
import { describe, expect, it } from 'vitest';
import { cacheKeyId, decodeValue, encodeEntry, entryStamps, L2_KEY_PREFIX, notRoundTripping } from '../../src/redis/cache-codec.ts';

const roundTrip = (value: unknown) => {
  const encoded = encodeEntry({ value, fetchedAt: 1_700_000_000_123, sentAt: 1_700_000_000_001, keepMs: 60_000 }, 1 << 20);
  if (!encoded.ok) throw new Error(encoded.reason);
  return { bytes: encoded.bytes, value: decodeValue(encoded.bytes) };
};

describe('the L2 codec', () => {
  it('round-trips an EVM block with bigint quantities', () => {
    const block = { found: true, value: { result: { number: 28, baseFeePerGas: 875_000_000n, huge: 2n ** 200n } } };
    const back = roundTrip(block).value as typeof block;
    expect(back).toEqual(block);
    expect(typeof back.value.result.baseFeePerGas).toBe('bigint');
    expect(back.value.result.huge).toBe(2n ** 200n);
  });

  it('round-trips a pools table of typed arrays, Maps, Sets, Dates, NaN and undefined', () => {
    const table = {
      count: 2,
      numbers: new Float64Array([1.5, Number.NaN, -0, 1e300]),
      chainOf: new Uint32Array([0, 1]),
      flags: new Int8Array([1, -1]),
      byName: new Map<string, number>([['Ethereum', 0], ['Arbitrum', 1]]),
      tags: new Set(['a', 'b']),
      at: new Date(1_700_000_000_000),
      missing: undefined,
    };
    const back = roundTrip(table).value as typeof table;
    expect(back.numbers).toBeInstanceOf(Float64Array);
    expect([...back.numbers]).toEqual([1.5, Number.NaN, -0, 1e300]);
    expect(Object.is(back.numbers[2], -0)).toBe(true);
    expect(back.chainOf).toBeInstanceOf(Uint32Array);
    expect([...back.chainOf]).toEqual([0, 1]);
    expect([...back.flags]).toEqual([1, -1]);
    expect(back.byName).toEqual(new Map([['Ethereum', 0], ['Arbitrum', 1]]));
    expect(back.tags).toEqual(new Set(['a', 'b']));
    expect(back.at.getTime()).toBe(1_700_000_000_000);
    expect('missing' in back).toBe(true);
  });

  it('keeps the stamps in a header read without the value', () => {
    const { bytes } = roundTrip({ a: 1 });
    expect(entryStamps(bytes)).toEqual({ fetchedAt: 1_700_000_000_123, sentAt: 1_700_000_000_001, keepMs: 60_000 });
    expect(entryStamps(Buffer.alloc(24))).toBeNull();
  });

  it('refuses what v8 would not give back the same: class instances, functions, symbols', () => {
    class Candle {
      constructor(readonly close: number) {}
    }
    expect(notRoundTripping({ rows: [new Candle(1)] })).toBe('an instance of Candle');
    expect(notRoundTripping({ f: () => 1 })).toBe('a function');
    expect(notRoundTripping(new Map([['k', Symbol('s')]]))).toBe('a symbol');
    expect(notRoundTripping({ [Symbol('s')]: 1 })).toBe('a symbol-keyed property');
    const refused = encodeEntry({ value: { rows: [new Candle(1)] }, fetchedAt: 1, sentAt: 1, keepMs: 1 }, 1 << 20);
    expect(refused).toEqual({ ok: false, why: 'type', reason: 'holds an instance of Candle, which would not read back the same' });
    // Shared references and cycles are fine (v8 keeps them).
    const shared: Record<string, unknown> = { x: 1 };
    shared.self = shared;
    expect(notRoundTripping({ a: shared, b: shared })).toBeNull();
    const back = roundTrip({ a: shared, b: shared }).value as { a: Record<string, unknown>; b: unknown };
    expect(back.a).toBe(back.b);
    expect(back.a.self).toBe(back.a);
  });

  it('refuses a value over the cap', () => {
    const value = { text: 'x'.repeat(2000) };
    const refused = encodeEntry({ value, fetchedAt: 1, sentAt: 1, keepMs: 1 }, 1000);
    expect(refused.ok).toBe(false);
    expect(refused.ok === false && refused.why).toBe('size');
    expect(refused.ok === false && refused.reason).toMatch(/^is 20\d\d bytes, over the 1000-byte cap$/);
    expect(encodeEntry({ value, fetchedAt: 1, sentAt: 1, keepMs: 1 }, 4000).ok).toBe(true);
  });

  it('keys by a hash of the cache key (which may hold a provider key), under the format and Node major', () => {
    const key = 'coingecko GET https://pro-api.coingecko.com/api/v3/global?x_cg_pro_api_key=SECRET123 ';
    const id = cacheKeyId(key);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id).not.toContain('SECRET');
    expect(cacheKeyId(key)).toBe(id);
    expect(cacheKeyId(key.replace('SECRET123', 'SECRET124'))).not.toBe(id);
    expect(L2_KEY_PREFIX).toBe(`marketgate:cache:v1:node${process.versions.node.split('.')[0]}:`);
  });
});
