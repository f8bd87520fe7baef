// One rule for text someone else chose, stored (the ledger) and printed (the CLIs): control characters as visible escapes.
import { describe, expect, it } from 'vitest';
import { controlFreeJson, escapeControl } from '../../src/lib/control-chars.ts';

describe('escapeControl', () => {
  it('writes C0, DEL, C1, the line separators and the bidirectional controls as escapes; leaves the rest, backslashes included', () => {
    expect(escapeControl('a\nb\r\t\x1b[2J\x7f\x9b\u2028\u202e\u2066 é ✓ \\x0a')).toBe('a\\x0ab\\x0d\\x09\\x1b[2J\\x7f\\x9b\\u2028\\u202e\\u2066 é ✓ \\x0a');
  });

  it('is idempotent: text stored escaped prints the same when escaped again', () => {
    const once = escapeControl('0x2222\x1b[2J\r\n2026-01-01  settled\u009b31m');
    expect(escapeControl(once)).toBe(once);
    expect(once).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });
});

describe('controlFreeJson', () => {
  it('is the same JSON, with no raw control character left in it', () => {
    const value = { label: 'x\x1b\n\u009b\u202e' };
    const text = controlFreeJson(value);
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
