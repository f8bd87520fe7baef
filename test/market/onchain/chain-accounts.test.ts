// /v1/chain-balance, /v1/chain-token-balance, /v1/chain-nonce and /v1/chain-ens against a local EDR
// node (test/market/onchain/world.ts): every asserted value is one the world's transactions put there.
import type { FastifyInstance } from 'fastify';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, TEST_KEY, TEST_KEY_ENV } from '../../helpers.ts';
import { ALICE, FUNDER, MALLORY, NOBODY, onchainEnv, SENDER, startOnchainWorld, type OnchainWorld } from './world.ts';

let w: OnchainWorld;
let app: FastifyInstance;
const get = (url: string) => app.inject({ url, headers: TEST_KEY });

beforeAll(async () => {
  w = await startOnchainWorld();
  ({ app } = await makeApp({ ...TEST_KEY_ENV, ...onchainEnv(w) }));
}, 60_000);
afterAll(async () => {
  await app?.close();
  await w?.close();
});

/** ALICE's address with the case of its first letter flipped: a wrong EIP-55 checksum. */
function wrongChecksum(address: string): string {
  const i = [...address].findIndex((ch, k) => k > 1 && /[a-fA-F]/.test(ch));
  const ch = address[i]!;
  return address.slice(0, i) + (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase()) + address.slice(i + 1);
}

describe('GET /v1/chain-balance', () => {
  it('answers the 1.5 ETH the world sent to ALICE, at the head block', async () => {
    const head = Number(await w.chain.publicClient.getBlockNumber());
    const res = await get(`/v1/chain-balance?address=${ALICE.address.toLowerCase()}`);
    expect(res.statusCode, res.body).toBe(200);
    const { data, meta } = res.json();
    // 1.5 ETH = 1.5 × 10^18 wei; no transaction was mined since `head` was read.
    expect(data).toEqual({ chain: 'ethereum', address: ALICE.address, ens_name: null, balance_wei: '1500000000000000000', balance: '1.5', symbol: 'ETH', block_number: head });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'rpc:ethereum', cached: false })]);
  });

  it('takes an ENS name (resolved on Ethereum) and shows both; the chain by id or any case', async () => {
    for (const chain of ['base', 'BASE', '8453']) {
      const res = await get(`/v1/chain-balance?address=Alice.ETH&chain=${chain}`);
      expect(res.statusCode, res.body).toBe(200);
      const { data, meta } = res.json();
      expect(data).toMatchObject({ chain: 'base', address: ALICE.address, ens_name: 'alice.eth', balance_wei: '1500000000000000000', symbol: 'ETH' });
      expect(meta.sources.map((s: { provider: string }) => s.provider)).toEqual(['rpc:ethereum', 'rpc:base']);
    }
  });

  it('reads an `address` with a dot as an ENS name even when it starts with 0x (no address has a dot)', async () => {
    const res = await get('/v1/chain-balance?address=0x.eth');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ address: NOBODY.address, ens_name: '0x.eth', balance_wei: '250000000000000000' });
  });

  it('names the native coin POL on polygon', async () => {
    const { data } = (await get(`/v1/chain-balance?address=${NOBODY.address}&chain=137`)).json();
    // NOBODY received 0.25 ETH-equivalent units from SENDER on the one local node.
    expect(data).toMatchObject({ chain: 'polygon', balance_wei: '250000000000000000', balance: '0.25', symbol: 'POL' });
  });

  it('is live: a new transfer shows at once', async () => {
    const before = (await get(`/v1/chain-balance?address=${MALLORY.address}`)).json().data;
    expect(before.balance_wei).toBe('0');
    const hash = await w.wallet(FUNDER).sendTransaction({ account: FUNDER, chain: w.chain.chain, to: MALLORY.address, value: 7n });
    await w.chain.publicClient.waitForTransactionReceipt({ hash });
    const res = (await get(`/v1/chain-balance?address=${MALLORY.address}`)).json();
    expect(res.data).toMatchObject({ balance_wei: '7', balance: '0.000000000000000007', block_number: before.block_number + 1 });
    expect(res.meta.sources[0].cached).toBe(false);
  });

  it('accepts all-upper-case digits and a 0X prefix, answering the checksummed form', async () => {
    const upper = `0X${ALICE.address.slice(2).toUpperCase()}`;
    const res = await get(`/v1/chain-balance?address=${upper}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.address).toBe(ALICE.address);
  });

  it('404 for a name without an ETH address record or without a resolver', async () => {
    for (const name of ['noaddr.eth', 'unregistered.eth']) {
      const res = await get(`/v1/chain-balance?address=${name}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: `the ENS name ${name} has no ETH address record`, source: 'rpc:ethereum' });
    }
  });

  it.each([
    ['', /^query parameter 'address' is required: a 0x address .* or an ENS name/],
    ['?address=0x1234', /^query parameter 'address' must be a 0x address/],
    ['?address=not-a-name', /^query parameter 'address' must be a 0x address/],
    ['?address=a..eth', /^query parameter 'address' must be a 0x address/],
    [`?address=${wrongChecksum(ALICE.address)}`, /^query parameter 'address' has a wrong EIP-55 checksum/],
    [`?address=${ALICE.address}&chain=solana`, /^query parameter 'chain' must be one of ethereum, base, arbitrum, optimism, polygon \(case-insensitive\) or a chain id \(1, 8453, 42161, 10, 137\)$/],
    [`?address=${ALICE.address}&chain=56`, /^query parameter 'chain' must be one of/],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/chain-balance${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
  });

  it('502 naming the chain when its RPC cannot be reached (arbitrum points at a closed port)', async () => {
    const res = await get(`/v1/chain-balance?address=${ALICE.address}&chain=arbitrum`);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'rpc:arbitrum could not be reached (ECONNREFUSED)', source: 'rpc:arbitrum' });
  });
});

describe('GET /v1/chain-token-balance', () => {
  it('reads balanceOf, decimals and symbol: 1_500_000 units of a 6-decimal token = 1.5 USDC', async () => {
    const res = await get(`/v1/chain-token-balance?address=alice.eth&token=${w.usdc.toLowerCase()}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      chain: 'ethereum', address: ALICE.address, ens_name: 'alice.eth', token: getAddress(w.usdc), symbol: 'USDC', decimals: 6, balance_raw: '1500000', balance: '1.5',
    });
  });

  it('reads a bytes32 symbol as text (MKR) and 18 decimals: 2.5 × 10^18 units = 2.5', async () => {
    const { data } = (await get(`/v1/chain-token-balance?address=${ALICE.address}&token=${w.mkr}&chain=base`)).json();
    expect(data).toMatchObject({ chain: 'base', symbol: 'MKR', decimals: 18, balance_raw: '2500000000000000000', balance: '2.5' });
  });

  it('answers 0 for an address that holds none', async () => {
    const { data } = (await get(`/v1/chain-token-balance?address=${MALLORY.address}&token=${w.usdc}`)).json();
    expect(data).toMatchObject({ balance_raw: '0', balance: '0' });
  });

  it('404 for a contract that is not an ERC-20 (the ENS registry)', async () => {
    const res = await get(`/v1/chain-token-balance?address=${ALICE.address}&token=${w.registry}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: expect.stringMatching(new RegExp(`^token ${getAddress(w.registry)} on ethereum is not an ERC-20 contract: (balanceOf|decimals|symbol)\\(\\) reverted$`)),
      source: 'rpc:ethereum',
    });
  });

  it('404 for a contract whose decimals() is beyond uint8 (40000), before anything is formatted', async () => {
    // ALICE holds 1 unit: formatting it with 40000 decimals took about 0.7 s of the event loop (viem's formatUnits is quadratic).
    const res = await get(`/v1/chain-token-balance?address=${ALICE.address}&token=${w.odd.hugeDecimals}`);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toEqual({
      error: `token ${getAddress(w.odd.hugeDecimals)} on ethereum is not an ERC-20 token: decimals() returned 40000, outside uint8 (0-255)`,
      source: 'rpc:ethereum',
    });
  });

  it('serves decimals 255, the largest uint8: 1 unit = 10^-255', async () => {
    const { data } = (await get(`/v1/chain-token-balance?address=${ALICE.address}&token=${w.odd.maxDecimals}`)).json();
    expect(data).toMatchObject({ symbol: 'MAX', decimals: 255, balance_raw: '1', balance: `0.${'0'.repeat(254)}1` });
  });

  it('answers a symbol() of NUL padding as null', async () => {
    const { data } = (await get(`/v1/chain-token-balance?address=${ALICE.address}&token=${w.odd.nulSymbol}`)).json();
    expect(data).toMatchObject({ symbol: null, decimals: 18, balance_raw: '0', balance: '0' });
  });

  it('404 for an address with no code', async () => {
    const res = await get(`/v1/chain-token-balance?address=${ALICE.address}&token=${NOBODY.address}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: `token ${NOBODY.address} is not a contract on ethereum (no code at that address)`, source: 'rpc:ethereum' });
  });

  it.each([
    [`?address=${ALICE.address}`, /^query parameter 'token' is required: a 0x address/],
    [`?address=${ALICE.address}&token=usdc.eth`, /^query parameter 'token' must be a 0x address/],
    [`?address=${ALICE.address}&token=${wrongChecksum(ALICE.address)}`, /^query parameter 'token' has a wrong EIP-55 checksum/],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/chain-token-balance${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
  });
});

describe('GET /v1/chain-nonce', () => {
  it('counts the transactions the world sent from SENDER (confirmed = pending when none waits)', async () => {
    // SENDER sent 1.5 ETH, 0.25 ETH and the reverted USDC transfer (a reverted transaction uses its nonce too): 3.
    const { data } = (await get(`/v1/chain-nonce?address=${SENDER.address}`)).json();
    expect(data).toEqual({ chain: 'ethereum', address: SENDER.address, ens_name: null, confirmed: 3, pending: 3 });
  });

  it('0 and 0 for an address that never sent one, given by name', async () => {
    const { data } = (await get('/v1/chain-nonce?address=alice.eth')).json();
    expect(data).toEqual({ chain: 'ethereum', address: ALICE.address, ens_name: 'alice.eth', confirmed: 0, pending: 0 });
  });
});

describe('GET /v1/chain-ens', () => {
  it('name → address', async () => {
    const res = await get('/v1/chain-ens?name=ALICE.eth');
    expect(res.statusCode, res.body).toBe(200);
    const { data, meta } = res.json();
    expect(data).toEqual({ lookup: 'name_to_address', name: 'alice.eth', address: ALICE.address });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'rpc:ethereum', cached: false })]);
  });

  it('takes a name that starts like an address (0x.eth, valid ENSIP-15): `name` takes names only', async () => {
    for (const name of ['0x.eth', '0X.ETH']) {
      const res = await get(`/v1/chain-ens?name=${name}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ lookup: 'name_to_address', name: '0x.eth', address: NOBODY.address });
    }
  });

  it('address → primary name (reverse record, verified forward)', async () => {
    const { data } = (await get(`/v1/chain-ens?address=${ALICE.address.toLowerCase()}`)).json();
    expect(data).toEqual({ lookup: 'address_to_name', name: 'alice.eth', address: ALICE.address });
  });

  it('404 for a reverse record whose name resolves to someone else (MALLORY claims alice.eth)', async () => {
    const res = await get(`/v1/chain-ens?address=${MALLORY.address}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: `${MALLORY.address} has no primary ENS name (no reverse record, or its name does not resolve back to this address)`,
      source: 'rpc:ethereum',
    });
  });

  it('404 for an address without a reverse record, and for a name without an address', async () => {
    expect((await get(`/v1/chain-ens?address=${NOBODY.address}`)).statusCode).toBe(404);
    const res = await get('/v1/chain-ens?name=noaddr.eth');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'the ENS name noaddr.eth has no ETH address record', source: 'rpc:ethereum' });
  });

  it('502 saying so for a name resolved off-chain (CCIP-Read), which is not followed', async () => {
    const res = await get('/v1/chain-ens?name=offchain.eth');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: 'the ENS name offchain.eth is resolved off-chain (CCIP-Read, EIP-3668), which this server does not follow', source: 'rpc:ethereum' });
  });

  it.each([
    ['', /^give exactly one of the query parameters 'name' \(an ENS name\) or 'address' \(a 0x address\)$/],
    [`?name=alice.eth&address=${ALICE.address}`, /^give exactly one of/],
    ['?name=0xabc', /^query parameter 'name' must be an ENS name/],
    ['?name=alice', /^query parameter 'name' must be an ENS name/],
    ['?address=alice.eth', /^query parameter 'address' must be a 0x address/],
    [`?address=${wrongChecksum(ALICE.address)}`, /^query parameter 'address' has a wrong EIP-55 checksum/],
  ])('400 for %s', async (qs, message) => {
    const res = await get(`/v1/chain-ens${qs}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(message);
  });
});
