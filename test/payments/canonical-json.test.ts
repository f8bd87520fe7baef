// attempt.ts's payloadHash: SHA-256 of the payload's canonical JSON (keys sorted at every level). The text is what the
// key-by-key writer of earlier builds gave (hashes in the ledger and in payment identifiers' claims stay comparable
// across an upgrade), whatever the keys: ones JavaScript enumerates first (array-index-like), `__proto__`, undefined.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, payloadHash } from '../../src/payments/core/attempt.ts';

/** The earlier builds' writer, kept here as the reference. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${reference((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('canonical JSON of a payment payload', () => {
  const payload = {
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/v1/price', mimeType: 'application/json', description: 'Spot price' },
    accepted: { scheme: 'batch-settlement', network: 'eip155:8453', amount: '1000', extra: { version: '2', name: 'USD Coin' }, maxTimeoutSeconds: 300 },
    payload: { voucher: { signature: '0xab', maxClaimableAmount: '9000', channelId: '0x01' }, type: 'voucher', list: [3, 'a', null, { z: 1, a: [true, false] }] },
    extensions: { 'payment-identifier': { info: { id: 'pay_0123456789abcdef', required: false } } },
  };

  it('sorts every level’s keys, as the key-by-key writer did', () => {
    expect(canonicalJson(payload)).toBe(reference(payload));
    expect(canonicalJson(payload).startsWith('{"accepted":{"amount":"1000","extra":{"name":"USD Coin","version":"2"}')).toBe(true);
    expect(payloadHash(payload)).toBe(createHash('sha256').update(reference(payload)).digest('hex'));
  });

  it('gives the same text for keys a sorted copy cannot hold in place, and for undefined and scalars', () => {
    const odd = [
      JSON.parse('{"b":1,"10":2,"9":3,"a":{"0":"x","__proto__":{"polluted":true}}}'),
      JSON.parse('{"__proto__":1,"a":2}'),
      JSON.parse('{"toJSON":{"x":1},"b":[{"toJSON":"y"}]}'),
      { a: undefined, b: [undefined, 1], c: { d: undefined } },
      [1, 'two', null],
      'text',
      42,
      null,
      undefined,
    ];
    for (const v of odd) expect(canonicalJson(v)).toBe(reference(v));
    // The integer-like keys in the key-by-key writer's order (as strings), not JavaScript's enumeration order.
    expect(canonicalJson(odd[0])).toBe('{"10":2,"9":3,"a":{"0":"x","__proto__":{"polluted":true}},"b":1}');
    expect(canonicalJson(odd[1])).toBe('{"__proto__":1,"a":2}');
  });

  it('tells payloads apart that differ only in a key the copy could not place', () => {
    expect(payloadHash(JSON.parse('{"__proto__":{"a":1}}'))).not.toBe(payloadHash({}));
  });
});

it('orders keys as a string sort does (UTF-16 code units), whatever their order and characters', () => {
  const keys = ['b', 'a', 'B', 'é', 'aa', '_', 'Z', 'a-b', 'a_b', '\u{1F600}', '\uFFFF', '', ' ', 'ab', 'A'];
  for (let shift = 0; shift < keys.length; shift++) {
    const rotated = [...keys.slice(shift), ...keys.slice(0, shift)];
    const value = Object.fromEntries(rotated.map((k, i) => [k, i]));
    expect(canonicalJson(value)).toBe(reference(value));
    expect(Object.keys(JSON.parse(canonicalJson(value)))).toEqual([...keys].sort());
  }
});
