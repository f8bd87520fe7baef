// core/header-codec.ts reads PAYMENT-SIGNATURE and writes PAYMENT-RESPONSE exactly as @x402/core/http does, with
// Node's base64: the same payloads, the same refusals (length, padding, alphabet), the same header text.
import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { SettleResponse } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { decodePaymentHeader, encodePaymentResponse } from '../../src/payments/core/header-codec.ts';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const sdk = (h: string) => {
  try {
    return { ok: decodePaymentSignatureHeader(h) as unknown };
  } catch {
    return 'refused';
  }
};
const ours = (h: string) => {
  try {
    return { ok: decodePaymentHeader(h) as unknown };
  } catch {
    return 'refused';
  }
};

describe('decodePaymentHeader', () => {
  it('reads what the SDK reads and refuses what it refuses', () => {
    const json = [
      JSON.stringify({ x402Version: 2, payload: { a: 1 } }),
      JSON.stringify({ x402Version: 2, payload: { s: 'héllo ✓ 𝄞', n: [1, 2, 3] } }),
      JSON.stringify({ x: 'y'.repeat(4000) }),
      '{"a":1}',
      '{"ab":1}',
      '{"abc":1}',
      '[]',
      'null',
    ];
    const headers = [
      ...json.map(b64),
      ...json.map((j) => b64(j).replace(/=+$/, '')), // padding left off
      ...json.map((j) => `${b64(j)}A`), // one character too many
      ...json.map((j) => `${b64(j)}=`),
      ...json.map((j) => `${b64(j).replace(/=+$/, '')}=`), // padding at a length that is not 4n
      ...json.map((j) => b64(j).replace(/[A-Z]/, '-')), // outside the alphabet
      ...json.map((j) => ` ${b64(j)}`),
      b64('not json'),
      b64('{"a":'),
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d]).toString('base64'), // not UTF-8
      '',
      'A',
      'AB',
      'ABC',
      'ABCD',
      '====',
      'QQ=',
      'QQ==',
    ];
    for (const h of headers) expect(ours(h), h.slice(0, 40)).toEqual(sdk(h));
    expect(headers.filter((h) => sdk(h) !== 'refused').length).toBeGreaterThan(10);
    expect(headers.filter((h) => sdk(h) === 'refused').length).toBeGreaterThan(10);
  });
});

describe('encodePaymentResponse', () => {
  it('writes the header text the SDK writes', () => {
    const responses: SettleResponse[] = [
      { success: true, payer: '0xab', transaction: '', network: 'eip155:8453', amount: '', extra: { channelState: { chargedCumulativeAmount: '3000', withdrawRequestedAt: 0 }, chargedAmount: '1000' } } as SettleResponse,
      { success: false, errorReason: 'invalid_batch_settlement_evm_channel_busy', errorMessage: 'busy ✓', transaction: '', network: 'eip155:8453' } as SettleResponse,
      { success: true, transaction: '0x12', network: 'eip155:8453', extensionResponses: { a: 1 } } as unknown as SettleResponse,
    ];
    for (const r of responses) expect(encodePaymentResponse(r)).toBe(encodePaymentResponseHeader(r));
  });
});
