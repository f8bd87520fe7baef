// Parsing DefiLlama's yields document: the pure step (defillama-pools.ts), the selection a request makes,
// and the worker thread that runs the parse.
import { describe, expect, it } from 'vitest';
import { parsePoolsText, selectPools, type PoolsOutcome, type PoolTable } from '../../src/sources/defillama-pools.ts';
import { runOffThread, workerModule } from '../../src/lib/off-thread.ts';
import { recordedText } from '../fixtures.ts';
import { LIDO } from '../fakes/defillama.ts';

const WORKER = workerModule('defillama-pools-worker', new URL('../../src/sources/', import.meta.url).href);


function table(text: string): PoolTable {
  const out = parsePoolsText(text);
  if (!out.ok) throw new Error(out.message);
  return out.table;
}

/** The recorded document plus CONSTRUCTED pools in its format (values chosen for the tests). */
function constructed(): string {
  const doc = JSON.parse(recordedText('defillama__yields_pools.json'));
  const [lido] = doc.data;
  doc.data.push(
    { ...lido, pool: 'small-arb', project: 'Uniswap-V3', chain: 'Arbitrum', symbol: 'USDC-WETH', tvlUsd: 5, apy: 20, apyBase: 18, apyReward: 2, ilRisk: 'yes' },
    { pool: 'bare', project: 'x', chain: 'arbitrum', symbol: 'Y', tvlUsd: 7 },
    { ...lido, pool: 'big', symbol: 'WSTETH', tvlUsd: 3e10, stablecoin: true, ilRisk: 'maybe' },
  );
  return JSON.stringify(doc);
}

describe('parsePoolsText and selectPools', () => {
  it('keeps the served fields of the recorded pool', () => {
    const t = table(recordedText('defillama__yields_pools.json'));
    expect(t.count).toBe(1);
    expect(selectPools(t, {}, 10)).toEqual({ chainKnown: true, projectKnown: true, matched: 1, rows: [LIDO] });
  });

  it('orders by TVL, largest first, and reads absent APYs, stablecoin and unknown ilRisk values as null', () => {
    const { rows, matched } = selectPools(table(constructed()), {}, 10);
    expect(matched).toBe(4);
    expect(rows.map((r) => r.pool)).toEqual(['big', LIDO.pool, 'bare', 'small-arb']);
    expect(rows[0]).toMatchObject({ symbol: 'WSTETH', tvl_usd: 3e10, stablecoin: true, il_risk: null });
    expect(rows[2]).toEqual({ pool: 'bare', project: 'x', chain: 'arbitrum', symbol: 'Y', tvl_usd: 7, apy: null, apy_base: null, apy_reward: null, stablecoin: null, il_risk: null });
    expect(rows[3]).toEqual({ pool: 'small-arb', project: 'Uniswap-V3', chain: 'Arbitrum', symbol: 'USDC-WETH', tvl_usd: 5, apy: 20, apy_base: 18, apy_reward: 2, stablecoin: false, il_risk: true });
  });

  it('filters by chain and project case-insensitively (both spellings of a chain count), cuts to limit, counts all matches', () => {
    const t = table(constructed());
    const arb = selectPools(t, { chain: 'ARBITRUM' }, 1);
    expect(arb.matched).toBe(2);
    expect(arb.rows.map((r) => r.pool)).toEqual(['bare']);
    expect(selectPools(t, { chain: 'arbitrum', project: 'uniswap-v3' }, 10).rows.map((r) => r.pool)).toEqual(['small-arb']);
    expect(selectPools(t, { chain: 'Arbitrum', project: 'lido' }, 10)).toEqual({ chainKnown: true, projectKnown: true, matched: 0, rows: [] });
    expect(selectPools(t, { chain: 'Solana' }, 10)).toMatchObject({ chainKnown: false, matched: 0 });
    expect(selectPools(t, { project: 'nope' }, 10)).toMatchObject({ chainKnown: true, projectKnown: false });
  });

  it('skips a pool whose served fields are missing or malformed and keeps the others (counted in skipped)', () => {
    const doc = JSON.parse(constructed());
    const [lido] = doc.data;
    doc.data.push({ ...lido, pool: 'no-tvl', tvlUsd: null }, { ...lido, pool: 'str-apy', apyBase: '3' }, { ...lido, pool: null }, 'not a pool');
    const t = table(JSON.stringify(doc));
    expect(t.skipped).toBe(4);
    expect(selectPools(t, {}, 10).rows.map((r) => r.pool)).toEqual(['big', LIDO.pool, 'bare', 'small-arb']);
    expect(table(constructed()).skipped).toBe(0);
  });

  it.each<[string, string, PoolsOutcome]>([
    ['HTML', '\n<!DOCTYPE html><html></html>', { ok: false, failure: 'malformed', message: 'returned HTML instead of JSON' }],
    ['an empty body', '', { ok: false, failure: 'malformed', message: 'returned a body that is not valid JSON (empty)' }],
    ['truncated JSON', '{"status":"success","data":[', { ok: false, failure: 'malformed', message: 'returned a body that is not valid JSON' }],
    ['another shape', '{"status":"success","data":{}}', { ok: false, failure: 'schema', message: 'returned an unexpected response shape at data' }],
    ['its only pool with an APY as a string (none sound)', '{"status":"success","data":[{"pool":"p","project":"x","chain":"C","symbol":"S","tvlUsd":1,"apy":"2"}]}', { ok: false, failure: 'schema', message: 'returned an unexpected response shape at data.0.apy' }],
  ])('says what is wrong with %s', (_name, text, outcome) => {
    expect(parsePoolsText(text)).toEqual(outcome);
  });
});

describe('runOffThread', () => {
  it('gives the same table on a worker thread (buffers moved back) as on this one', async () => {
    const text = constructed();
    const off = await runOffThread<string, PoolsOutcome>(WORKER, text);
    expect(off).toEqual(parsePoolsText(text));
    expect(off.ok && off.table.numbers).toBeInstanceOf(Float64Array);
    expect(await runOffThread<string, PoolsOutcome>(WORKER, '<html>')).toEqual(parsePoolsText('<html>'));
  });

  it('rejects when the worker module cannot run (the source then parses on this thread)', async () => {
    await expect(runOffThread(new URL('../no-such-worker.ts', import.meta.url), 'x')).rejects.toThrow();
  });
});
