// /v1/chain-block and /v1/chain-tx against a local EDR node (test/market/onchain/world.ts): blocks and
// transactions the world mined, a pending transaction (automine off), caching by finality, and the
// node stopped. Every asserted value is one the test's own transactions or node settings fixed.
import type { FastifyInstance } from 'fastify';
import { getAddress, parseEther, type Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, TEST_KEY, TEST_KEY_ENV } from '../../helpers.ts';
import { ALICE, GAS_PRICE, NODE, onchainEnv, SENDER, startOnchainWorld, TRANSFER_TIMESTAMP, type OnchainWorld } from './world.ts';

let w: OnchainWorld;
let app: FastifyInstance;
let stopped = false;
const get = (url: string, on = app) => on.inject({ url, headers: TEST_KEY });
const json = async (url: string, on = app) => (await get(url, on)).json();

beforeAll(async () => {
  w = await startOnchainWorld();
  // Head data not cached at all here, so every test sees the node as it is; finalized data for an hour.
  ({ app } = await makeApp({ ...TEST_KEY_ENV, ...onchainEnv(w, { CACHE_TTL_CHAIN_HEAD_S: '0', CACHE_TTL_CHAIN_FINAL_S: '3600' }) }));
}, 60_000);
afterAll(async () => {
  await app?.close();
  if (!stopped) await w?.close();
});

/** "0.000000001" gwei → 1n wei: the exact inverse of the gwei strings, to check them against wei. */
function gweiToWei(gwei: string): bigint {
  const [whole, frac = ''] = gwei.split('.');
  return BigInt(whole!) * 10n ** 9n + BigInt(frac.padEnd(9, '0'));
}

describe('GET /v1/chain-block', () => {
  it('the block of the 1.5 ETH transfer: the timestamp, fee recipient and gas limit the test set, one 21 000-gas transaction', async () => {
    const mined = await w.chain.publicClient.getBlock({ blockNumber: w.transfer.block });
    const res = await get(`/v1/chain-block?block=${w.transfer.block}`);
    expect(res.statusCode, res.body).toBe(200);
    const { data, meta } = res.json();
    expect(data).toEqual({
      chain: 'ethereum',
      number: Number(w.transfer.block),
      hash: mined.hash,
      timestamp: '2030-03-17T17:46:40.000Z', // TRANSFER_TIMESTAMP 1 900 000 000 s
      miner: getAddress(NODE.coinbase),
      transaction_count: 1, // automine: one transaction per block
      gas_used: 21_000, // a plain transfer to an account without code
      gas_limit: 30_000_000,
      base_fee_per_gas_wei: String(mined.baseFeePerGas),
      base_fee_per_gas_gwei: expect.any(String),
    });
    expect(TRANSFER_TIMESTAMP).toBe(1_900_000_000);
    expect(gweiToWei(data.base_fee_per_gas_gwei)).toBe(mined.baseFeePerGas);
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'rpc:ethereum' })]);
  });

  it('genesis: the 1 gwei initial base fee, no transactions', async () => {
    const { data } = await json('/v1/chain-block?block=0&chain=base');
    expect(data).toMatchObject({ chain: 'base', number: 0, transaction_count: 0, gas_used: 0, gas_limit: 30_000_000, base_fee_per_gas_wei: '1000000000', base_fee_per_gas_gwei: '1' });
  });

  it('latest (the default), safe and finalized: the head the test mined (EDR finalizes at once)', async () => {
    const head = Number(await w.chain.publicClient.getBlockNumber());
    for (const qs of ['', '?block=latest', '?block=SAFE', '?block=finalized']) {
      expect((await json(`/v1/chain-block${qs}`)).data.number).toBe(head);
    }
  });

  it('404 beyond the head', async () => {
    const res = await get('/v1/chain-block?block=99999999');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'ethereum has no block 99999999 (beyond the head)', source: 'rpc:ethereum' });
  });

  it.each([
    ['?block=-1', /^query parameter 'block' must be latest, safe, finalized, or a block number/],
    ['?block=pending', /^query parameter 'block' must be latest/],
    ['?block=0x10', /^query parameter 'block' must be latest/],
    ['?block=1.5', /^query parameter 'block' must be latest/],
    ['?block=99999999999999999', /^query parameter 'block' must be latest/],
    ['?chain=bsc', /^query parameter 'chain' must be one of/],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/chain-block${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
  });
});

describe('GET /v1/chain-tx', () => {
  it('a successful transfer: 1.5 ETH from SENDER to ALICE, nonce 0, 21 000 gas at the 3 gwei the test paid', async () => {
    const res = await get(`/v1/chain-tx?hash=${w.transfer.hash.toUpperCase().replace('0X', '0x')}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      chain: 'ethereum',
      hash: w.transfer.hash,
      status: 'success',
      block_number: Number(w.transfer.block),
      from: SENDER.address,
      to: ALICE.address,
      value_wei: '1500000000000000000',
      value: '1.5',
      nonce: 0,
      gas_used: 21_000,
      effective_gas_price_wei: '3000000000', // a legacy transaction pays its gasPrice: GAS_PRICE
      effective_gas_price_gwei: '3',
      log_count: 0,
    });
    expect(GAS_PRICE).toBe(3_000_000_000n);
  });

  it('a reverted call: status reverted, nonce 2, no value, the gas the node charged', async () => {
    const receipt = await w.chain.publicClient.getTransactionReceipt({ hash: w.reverted.hash });
    const { data } = await json(`/v1/chain-tx?hash=${w.reverted.hash}`);
    expect(data).toMatchObject({ status: 'reverted', block_number: Number(w.reverted.block), from: SENDER.address, to: getAddress(w.usdc), value_wei: '0', value: '0', nonce: 2, log_count: 0 });
    expect(data.gas_used).toBe(Number(receipt.gasUsed));
    expect(data.gas_used).toBeLessThan(100_000); // the manual gas limit
  });

  it('an ERC-20 transfer emits one log', async () => {
    const { data } = await json(`/v1/chain-tx?hash=${w.tokenTransfer.hash}&chain=polygon`);
    expect(data).toMatchObject({ chain: 'polygon', status: 'success', to: getAddress(w.usdc), log_count: 1 });
  });

  it('404 for a hash the node does not know', async () => {
    const unknown = `0x${'ab'.repeat(32)}`;
    const res = await get(`/v1/chain-tx?hash=${unknown}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: `ethereum has no transaction ${unknown}`, source: 'rpc:ethereum' });
  });

  it.each([
    ['', /^query parameter 'hash' is required: a transaction hash/],
    ['?hash=0x1234', /^query parameter 'hash' must be a transaction hash \(0x and 64 hex digits\)$/],
    [`?hash=${'ab'.repeat(32)}`, /^query parameter 'hash' must be a transaction hash/],
    [`?hash=0x${'g'.repeat(64)}`, /^query parameter 'hash' must be a transaction hash/],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/chain-tx${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
  });
});

describe('a pending transaction (automine off)', () => {
  it('is pending, with the pending nonce one above the confirmed one; once mined, a success', async () => {
    await w.rpc('evm_setAutomine', [false]);
    let hash: Hash;
    try {
      hash = await w.wallet(SENDER).sendTransaction({ account: SENDER, chain: w.chain.chain, to: ALICE.address, value: parseEther('0.1'), gas: 21_000n, gasPrice: GAS_PRICE, type: 'legacy' });
      const pending = await json(`/v1/chain-tx?hash=${hash}`);
      expect(pending.data).toEqual({
        chain: 'ethereum', hash, status: 'pending', block_number: null, from: SENDER.address, to: ALICE.address, value_wei: '100000000000000000', value: '0.1',
        nonce: 3, gas_used: null, effective_gas_price_wei: null, effective_gas_price_gwei: null, log_count: null,
      });
      // SENDER's three mined transactions, plus this one waiting.
      expect((await json(`/v1/chain-nonce?address=${SENDER.address}`)).data).toMatchObject({ confirmed: 3, pending: 4 });
      // Not cached while pending (CACHE_TTL_CHAIN_HEAD_S=0 here): asked again, it is still the node's answer.
      expect((await json(`/v1/chain-tx?hash=${hash}`)).meta.sources.every((s: { cached: boolean }) => !s.cached)).toBe(true);
      await w.rpc('evm_mine');
    } finally {
      await w.rpc('evm_setAutomine', [true]);
    }
    const head = Number(await w.chain.publicClient.getBlockNumber());
    expect((await json(`/v1/chain-tx?hash=${hash}`)).data).toMatchObject({ status: 'success', block_number: head, gas_used: 21_000, effective_gas_price_wei: '3000000000', log_count: 0 });
    expect((await json(`/v1/chain-nonce?address=${SENDER.address}`)).data).toMatchObject({ confirmed: 4, pending: 4 });
  });
});

describe('caching by finality', () => {
  const cachedFlags = async (url: string, n: number, on = app) => {
    const flags: boolean[] = [];
    for (let i = 0; i < n; i++) flags.push((await json(url, on)).meta.sources.every((s: { cached: boolean }) => s.cached));
    return flags;
  };

  it('a finalized block is kept (CACHE_TTL_CHAIN_FINAL_S) once its finality is known; the head is not (TTL 0 here)', async () => {
    // A fresh app: nothing learned about finality yet.
    const { app: fresh } = await makeApp({ ...TEST_KEY_ENV, ...onchainEnv(w, { CACHE_TTL_CHAIN_HEAD_S: '0', CACHE_TTL_CHAIN_FINAL_S: '3600' }) });
    try {
      // 1st: finality unknown → head TTL (0), and the finalized block is learned; 2nd: final → stored for an hour; 3rd: from the cache.
      expect(await cachedFlags('/v1/chain-block?block=1', 3, fresh)).toEqual([false, false, true]);
      // Another finalized block is stored at its first ask now that finality is known.
      expect(await cachedFlags('/v1/chain-block?block=2', 2, fresh)).toEqual([false, true]);
      expect(await cachedFlags('/v1/chain-block?block=latest', 2, fresh)).toEqual([false, false]);
      // A transaction: its block is learned at the first ask, so it is stored from the second on.
      expect(await cachedFlags(`/v1/chain-tx?hash=${w.tokenTransfer.hash}`, 3, fresh)).toEqual([false, false, true]);
    } finally {
      await fresh.close();
    }
  });

  it('the head is cached briefly when CACHE_TTL_CHAIN_HEAD_S allows: a new block shows only after it', async () => {
    const { app: briefly } = await makeApp({ ...TEST_KEY_ENV, ...onchainEnv(w, { CACHE_TTL_CHAIN_HEAD_S: '60' }) });
    try {
      const first = await json('/v1/chain-block', briefly);
      await w.rpc('evm_mine');
      const second = await json('/v1/chain-block', briefly);
      expect(second.data.number).toBe(first.data.number);
      expect(second.meta.sources[0].cached).toBe(true);
      // Balances stay live whatever the TTLs: the same app reads the new head at once.
      expect((await json(`/v1/chain-balance?address=${ALICE.address}`, briefly)).data.block_number).toBe(first.data.number + 1);
    } finally {
      await briefly.close();
    }
  });
});

describe('the node stopped', () => {
  it('502 naming rpc:<chain> for live reads and uncached lookups; a cached finalized block still answers', async () => {
    await get('/v1/chain-block?block=1&chain=base'); // a finalized block (EDR finalizes at once): now in the cache
    await w.close();
    stopped = true;
    for (const [url, source] of [
      [`/v1/chain-balance?address=${ALICE.address}`, 'rpc:ethereum'],
      [`/v1/chain-nonce?address=${ALICE.address}&chain=base`, 'rpc:base'],
      [`/v1/chain-token-balance?address=${ALICE.address}&token=${w.usdc}&chain=polygon`, 'rpc:polygon'],
      ['/v1/chain-block', 'rpc:ethereum'],
      [`/v1/chain-tx?hash=${w.transfer.hash}`, 'rpc:ethereum'],
      ['/v1/chain-ens?name=alice.eth', 'rpc:ethereum'],
      ['/v1/chain-balance?address=alice.eth&chain=base', 'rpc:ethereum'],
    ] as const) {
      app.services.guard.reset(); // each call on its own, not behind a breaker the previous ones opened
      const res = await get(url);
      expect(res.statusCode, url).toBe(502);
      expect(res.json(), url).toEqual({ error: `${source} could not be reached (ECONNREFUSED)`, source });
    }
    const kept = await get('/v1/chain-block?block=1&chain=base');
    expect(kept.statusCode).toBe(200);
    expect(kept.json().meta.sources[0].cached).toBe(true);
  });

  it('503 with Retry-After once the breaker of rpc:<chain> opens after repeated failures', async () => {
    app.services.guard.reset();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await get('/v1/chain-block?chain=polygon')).statusCode);
    expect(statuses.at(0)).toBe(502);
    const last = await get('/v1/chain-block?chain=polygon');
    expect(last.statusCode).toBe(503);
    expect(last.json()).toMatchObject({ source: 'rpc:polygon' });
    expect(last.headers['retry-after']).toBeDefined();
  });
});
