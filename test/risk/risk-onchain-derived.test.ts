// The token risk data is made once per pair of cached answers (the provider's and the chain's), then served as
// the same object, whose JSON is made once too; a new answer on either side makes new data.
import { describe, expect, it } from 'vitest';
import { derivedJson } from '../../src/upstream/envelope.ts';
import { derivedFromBoth } from '../../src/risk/onchain.ts';

describe('derivedFromBoth', () => {
  it('builds once per (provider answer, chain answer) pair', () => {
    let builds = 0;
    const build = () => ({ n: ++builds });
    const provider = { p: 1 };
    const chain = { c: 1 };
    const first = derivedFromBoth(provider, chain, 'ethereum 0xab', build);
    expect(derivedFromBoth(provider, chain, 'ethereum 0xab', build)).toBe(first);
    expect(derivedJson(first)).toBe('{"n":1}');
    // A new chain answer, a new provider answer, or another token: new data.
    expect(derivedFromBoth(provider, { c: 2 }, 'ethereum 0xab', build)).toEqual({ n: 2 });
    expect(derivedFromBoth({ p: 2 }, chain, 'ethereum 0xab', build)).toEqual({ n: 3 });
    expect(derivedFromBoth(provider, chain, 'ethereum 0xcd', build)).toEqual({ n: 4 });
    expect(builds).toBe(4);
  });

  it('with no provider data (GoPlus knows nothing of the token), the chain answer alone', () => {
    let builds = 0;
    const chain = { c: 1 };
    const first = derivedFromBoth(null, chain, 'solana X', () => ({ n: ++builds }));
    expect(derivedFromBoth(null, chain, 'solana X', () => ({ n: ++builds }))).toBe(first);
    expect(builds).toBe(1);
  });
});
