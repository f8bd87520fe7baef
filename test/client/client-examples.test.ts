// The paying docs' examples (examples/*.ts) run as a reader would run them, against marketgate on the local
// chain offering exact and batch-settlement, so they cannot rot: keyed, exact, batch settlement.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, startWorld, type World } from './world.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
let w: World;

beforeAll(async () => {
  w = await startWorld({ batch: true, payerIndex: 12 });
}, 60_000);

afterAll(async () => {
  await w?.close();
});

async function example(name: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', MARKETGATE_URL: w.base, ...env },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

const wallet = () => ({ MARKETGATE_WALLET_KEY: w.payerKey, MARKETGATE_ASSETS: `${w.asset.network}:${w.asset.asset}:${w.asset.decimals}` });

describe('examples', () => {
  it('keyed.ts: a price and the key usage, nothing paid', async () => {
    const before = await w.fx.balanceOf(w.payer.address);
    expect(await example('keyed', { MARKETGATE_API_KEY: KEY })).toEqual({ symbol: 'BTC/USDT', price: 63350.1, calls_today: expect.any(Number) });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before);
  });

  it('exact.ts: one exact payment on chain', async () => {
    const before = await w.fx.balanceOf(w.payer.address);
    const out = await example('exact', wallet());
    expect(out).toMatchObject({ price: 63350.1, scheme: 'exact', paid: '0.001', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), spending: { limitUsd: '0.01', spentUsd: '0.001', heldUsd: '0' } });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before - 1000n);
  });

  it.each([
    ['exact', '0x1234', 'what is set is not: 6 characters'],
    ['batch', 'not-a-key', 'what is set is not: 9 characters, without 0x'],
  ])('%s.ts with a malformed MARKETGATE_WALLET_KEY (%j): a sentence naming it, no stack trace', async (name, key, why) => {
    const failed = await run(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', MARKETGATE_URL: w.base, MARKETGATE_WALLET_KEY: key },
    }).catch((e: { code: number; stderr: string; stdout: string }) => e);
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect((failed as { stderr: string }).stderr).toBe(`MARKETGATE_WALLET_KEY must be the paying wallet's private key, 0x and 64 hex digits (${why})\n`);
  });

  it('batch.ts: a deposit, vouchers, the rest refunded', async () => {
    const before = await w.fx.balanceOf(w.payer.address);
    const out = await example('batch', { ...wallet(), MARKETGATE_RPC_URL: w.chain.rpcUrl });
    expect(out).toEqual({
      schemes: ['batch-settlement:transaction', 'batch-settlement:voucher', 'batch-settlement:voucher'],
      spending: { limitUsd: '0.02', spentUsd: '0.003', heldUsd: '0' },
      refunded: String(20_000 - 3_000),
    });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before - 3000n);
  });
});
