// The on-chain routes against a fake JSON-RPC node serving recorded answers (captured from the local
// EDR node), edited into what older chains and misbehaving nodes send: fields a block or receipt lacks
// are null, never guessed; inconsistent or unreadable answers and node errors are 502/503 naming rpc:<chain>.
import { toFunctionSelector } from 'viem';
import { describe, expect, it } from 'vitest';
import type { FakeReply, SeenRequest } from '../../fakes/fake-upstream.ts';
import { recordedJsonRpc } from '../../fakes/recorded-rpc.ts';
import { recorded } from '../../fixtures.ts';
import { PAST_DEADLINE_MS, TEST_DEADLINE_MS, TEST_KEY, TEST_KEY_ENV, useFakeUpstreamApp } from '../../helpers.ts';

const { fake, get } = useFakeUpstreamApp((url) => ({ ...TEST_KEY_ENV, RPC_URL_ETHEREUM: url }), { headers: TEST_KEY });

const HASH = recorded('evm-rpc__eth_getTransactionByHash.json').result.hash as string;
const ALICE = '0x60AE81f75f8c397e09d6881da13e0954DbeB8c61'; // the address in the recorded answers
const TOKEN = '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512';

type Answer = (params: unknown[]) => unknown;

/** The recorded node, with some methods (or eth_call selectors) answered otherwise: `result`s or whole replies. */
function node(overrides: Record<string, Answer>) {
  fake.route('POST /', (req: SeenRequest): FakeReply => {
    const body = JSON.parse(req.body) as { id: number; method: string; params: unknown[] };
    const key = body.method === 'eth_call' ? String((body.params[0] as { data: string }).data).slice(0, 10) : body.method;
    const override = overrides[key];
    if (!override) return recordedJsonRpc(req) as FakeReply;
    const out = override(body.params);
    return { body: out !== null && typeof out === 'object' && 'reply' in out ? { jsonrpc: '2.0', id: body.id, ...(out as { reply: object }).reply } : { jsonrpc: '2.0', id: body.id, result: out } };
  });
}

const result = (file: string) => recorded(file).result;

describe('fields the node does not give are null', () => {
  it('a block before London has no base fee', async () => {
    const block = result('evm-rpc__eth_getBlockByNumber.json');
    delete block.baseFeePerGas;
    node({ eth_getBlockByNumber: () => block });
    const { data } = (await get('/v1/chain-block?block=28')).json();
    // Recorded: number 0x1c = 28, gasUsed 0x5208 = 21 000, gasLimit 0x1c9c380 = 30 000 000, timestamp 0x713fb300 = 1 900 000 000 s.
    expect(data).toMatchObject({ number: 28, gas_used: 21_000, gas_limit: 30_000_000, timestamp: '2030-03-17T17:46:40.000Z', base_fee_per_gas_wei: null, base_fee_per_gas_gwei: null });
  });

  it('the recorded base fee 0x17a11d4 = 24 777 172 wei = 0.024777172 gwei', async () => {
    // 0x17a11d4 = 16^6 + 7·16^5 + 10·16^4 + 16^3 + 16^2 + 13·16 + 4 = 16 777 216 + 7 340 032 + 655 360 + 4 096 + 256 + 208 + 4.
    node({});
    const { data } = (await get('/v1/chain-block')).json();
    expect(data).toMatchObject({ base_fee_per_gas_wei: '24777172', base_fee_per_gas_gwei: '0.024777172' });
  });

  it('a pre-Byzantium receipt has no status; an older node may omit effectiveGasPrice', async () => {
    const receipt = result('evm-rpc__eth_getTransactionReceipt.json');
    delete receipt.status;
    delete receipt.effectiveGasPrice;
    node({ eth_getTransactionReceipt: () => receipt });
    const { data } = (await get(`/v1/chain-tx?hash=${HASH}`)).json();
    // Recorded: value 0x14d1120d7b160000 = 1.5 × 10^18 wei, nonce 0, block 0x1c = 28.
    expect(data).toMatchObject({ status: null, block_number: 28, value_wei: '1500000000000000000', value: '1.5', nonce: 0, gas_used: 21_000, effective_gas_price_wei: null, effective_gas_price_gwei: null, log_count: 0 });
  });

  it('a contract creation has no recipient', async () => {
    const tx = result('evm-rpc__eth_getTransactionByHash.json');
    tx.to = null;
    node({ eth_getTransactionByHash: () => tx });
    expect((await get(`/v1/chain-tx?hash=${HASH}`)).json().data.to).toBeNull();
  });
});

describe('recorded answers', () => {
  it('result null for a block beyond the head → 404', async () => {
    node({ eth_getBlockByNumber: () => result('evm-rpc__eth_getBlockByNumber_null.json') });
    const res = await get('/v1/chain-block?block=99999999');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'ethereum has no block 99999999 (beyond the head)', source: 'rpc:ethereum' });
  });

  it('the receipt of an ERC-20 transfer: one log', async () => {
    node({ eth_getTransactionReceipt: () => result('evm-rpc__eth_getTransactionReceipt_token_transfer.json') });
    expect((await get(`/v1/chain-tx?hash=${HASH}`)).json().data).toMatchObject({ status: 'success', log_count: 1 });
  });
});

describe('answers that cannot be used are 502 naming the chain', () => {
  it.each<[string, Record<string, Answer>, string, string]>([
    ['a block missing its hash', { eth_getBlockByNumber: () => ({ ...result('evm-rpc__eth_getBlockByNumber.json'), hash: undefined }) }, '/v1/chain-block', 'rpc:ethereum returned an unexpected response shape at result.hash'],
    ['a quantity that is not hex', { eth_getBlockByNumber: () => ({ ...result('evm-rpc__eth_getBlockByNumber.json'), gasUsed: '21000' }) }, '/v1/chain-block', 'rpc:ethereum returned an unexpected response shape at result.gasUsed'],
    ['a balance viem cannot read', { eth_getBalance: () => '0xzz' }, `/v1/chain-balance?address=${ALICE}`, 'rpc:ethereum returned an answer that could not be read'],
    ['a receipt without its transaction', { eth_getTransactionByHash: () => null }, `/v1/chain-tx?hash=${HASH}`, `rpc:ethereum has a receipt for ${HASH} but not the transaction (inconsistent answers)`],
    ['a mined transaction without a receipt yet', { eth_getTransactionReceipt: () => null }, `/v1/chain-tx?hash=${HASH}`, `rpc:ethereum has ${HASH} in block 28 but no receipt for it yet`],
    ['a node error', { eth_getBalance: () => ({ reply: { error: { code: -32000, message: 'header not found' } } }) }, `/v1/chain-balance?address=${ALICE}`, 'rpc:ethereum error: JSON-RPC error -32000 (header not found)'],
    ['no contract at the Universal Resolver', { [toFunctionSelector('resolveWithGateways(bytes,bytes,string[])')]: () => '0x' }, '/v1/chain-ens?name=alice.eth', 'the ENS Universal Resolver at 0xeEeEEEeE14D718C2B47D9923Deab1335E144EeEe returned no data (is there a contract?)'],
  ])('%s', async (_name, overrides, url, error) => {
    node(overrides);
    const res = await get(url);
    expect(res.statusCode, res.body).toBe(502);
    expect(res.json()).toEqual({ error, source: 'rpc:ethereum' });
  });

  it('503 with Retry-After when the node is limiting us (-32005)', async () => {
    node({ eth_getTransactionCount: () => ({ reply: { error: { code: -32005, message: 'limit exceeded' } } }) });
    const res = await get(`/v1/chain-nonce?address=${ALICE}`);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'rpc:ethereum is rate limiting this server (JSON-RPC error -32005 (limit exceeded))', source: 'rpc:ethereum' });
  });

  it('a node that does not answer in time', async () => {
    fake.route('POST /', { delayMs: PAST_DEADLINE_MS, body: {} });
    const res = await get(`/v1/chain-block?block=1`);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: `rpc:ethereum did not answer within ${TEST_DEADLINE_MS} ms`, source: 'rpc:ethereum' });
  });
});

describe('tokens', () => {
  it('the recorded USDC answers: balanceOf 0x16e360 = 1 500 000 units, 6 decimals → 1.5 USDC', async () => {
    node({});
    const { data } = (await get(`/v1/chain-token-balance?address=${ALICE}&token=${TOKEN}`)).json();
    expect(data).toEqual({ chain: 'ethereum', address: ALICE, ens_name: null, token: TOKEN, symbol: 'USDC', decimals: 6, balance_raw: '1500000', balance: '1.5' });
  });

  it('404 naming the function when only decimals() reverts', async () => {
    node({
      [toFunctionSelector('decimals()')]: () => ({ reply: { error: { code: 3, message: 'execution reverted', data: '0x' } } }),
      eth_getCode: () => '0x6080604052',
    });
    const res = await get(`/v1/chain-token-balance?address=${ALICE}&token=${TOKEN}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: `token ${TOKEN} on ethereum is not an ERC-20 contract: decimals() reverted`, source: 'rpc:ethereum' });
  });

  it('404 when a function returns nothing (no such function, no fallback that reverts)', async () => {
    node({ [toFunctionSelector('symbol()')]: () => '0x', eth_getCode: () => '0x6080604052' });
    const res = await get(`/v1/chain-token-balance?address=${ALICE}&token=${TOKEN}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe(`token ${TOKEN} on ethereum is not an ERC-20 contract: symbol() returned no data`);
  });
});
