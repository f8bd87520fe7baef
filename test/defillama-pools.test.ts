// Parsing DefiLlama's yields document: the pure step (defillama-pools.ts) and the worker thread that runs it.
import { describe, expect, it } from 'vitest';
import { parsePoolsText, type PoolsOutcome } from '../src/sources/defillama-pools.ts';
import { runOffThread, workerModule } from '../src/sources/off-thread.ts';
import { recordedText } from './fixtures.ts';

const WORKER = workerModule('defillama-pools-worker', new URL('../src/sources/', import.meta.url).href);

describe('parsePoolsText', () => {
  it('keeps the served fields of the recorded pool', () => {
    expect(parsePoolsText(recordedText('defillama__yields_pools.json'))).toEqual({
      ok: true,
      pools: [
        {
          pool: '747c1d2a-c668-4682-b9f9-296708a3dd90',
          project: 'lido',
          chain: 'Ethereum',
          symbol: 'STETH',
          tvl_usd: 23908962564,
          apy: 2.235,
          apy_base: 2.235,
          apy_reward: null,
          stablecoin: false,
          il_risk: false,
        },
      ],
    });
  });

  it('sorts by TVL, largest first, and reads a missing APY or ilRisk as null', () => {
    const doc = JSON.parse(recordedText('defillama__yields_pools.json'));
    const [lido] = doc.data;
    // CONSTRUCTED pools: one larger, one without apy/apyReward/ilRisk fields.
    doc.data.push({ ...lido, pool: 'big', tvlUsd: 3e10 }, { pool: 'bare', project: 'x', chain: 'Base', symbol: 'Y', tvlUsd: 5 });
    const out = parsePoolsText(JSON.stringify(doc));
    expect(out.ok && out.pools.map((p) => p.pool)).toEqual(['big', lido.pool, 'bare']);
    expect(out.ok && out.pools[2]).toEqual({ pool: 'bare', project: 'x', chain: 'Base', symbol: 'Y', tvl_usd: 5, apy: null, apy_base: null, apy_reward: null, stablecoin: null, il_risk: null });
  });

  it.each<[string, string, PoolsOutcome]>([
    ['HTML', '\n<!DOCTYPE html><html></html>', { ok: false, failure: 'malformed', message: 'returned HTML instead of JSON' }],
    ['an empty body', '', { ok: false, failure: 'malformed', message: 'returned a body that is not valid JSON (empty)' }],
    ['truncated JSON', '{"status":"success","data":[', { ok: false, failure: 'malformed', message: 'returned a body that is not valid JSON' }],
    ['another shape', '{"status":"success","data":{}}', { ok: false, failure: 'schema', message: 'returned an unexpected response shape at data' }],
  ])('says what is wrong with %s', (_name, text, outcome) => {
    expect(parsePoolsText(text)).toEqual(outcome);
  });
});

describe('runOffThread', () => {
  it('gives the same outcome on a worker thread as on this one', async () => {
    const text = recordedText('defillama__yields_pools.json');
    expect(await runOffThread<string, PoolsOutcome>(WORKER, text)).toEqual(parsePoolsText(text));
    expect(await runOffThread<string, PoolsOutcome>(WORKER, '<html>')).toEqual(parsePoolsText('<html>'));
  });

  it('rejects when the worker module cannot run (the source then parses on this thread)', async () => {
    await expect(runOffThread(new URL('./no-such-worker.ts', import.meta.url), 'x')).rejects.toThrow();
  });
});
