// The benchmark holds (bench/README.md, "Token risk corpus"): on the corpus of purpose-built tokens every trap is
// detected by its own signal and no control is rated high. One chain, one server, one check per token.
import { describe, expect, it } from 'vitest';
import { corpusTable, runCorpus } from './chain/corpus-run.ts';

describe('the token risk corpus', () => {
  it('detects every trap by its signal and rates no control high', async () => {
    const { rows } = await runCorpus();
    expect(rows.length).toBeGreaterThanOrEqual(25);
    expect(rows.filter((r) => !r.ok), corpusTable(rows)).toEqual([]);
  }, 300_000);
});
