// GET /v1/gas: eth_feeHistory on RPC_URL_ETHEREUM without ETHERSCAN_API_KEY, Etherscan's gas oracle with one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, type FakeReply } from '../fakes/fake-upstream.ts';
import { upstreamFailures, type FailureCase } from '../fakes/failures.ts';
import { feeHistoryWithMedianColumn } from '../fakes/fee-history.ts';
import { recorded } from '../fixtures.ts';
import { makeApp, useFakeUpstreamApp, type TestApp } from '../helpers.ts';

const ORACLE = '/v2/api';

describe('GET /v1/gas without ETHERSCAN_API_KEY (eth_feeHistory)', () => {
  const { fake, get } = useFakeUpstreamApp((url) => ({ RPC_URL_ETHEREUM: url, ETHERSCAN_BASE_URL: url }));
  const serve = (reply: FakeReply) => fake.route('POST /', reply);

  it('derives safe/propose/fast from the fee history, free and without credentials', async () => {
    serve({ body: feeHistoryWithMedianColumn() });
    const res = await get('/v1/gas');
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // Next base fee: last baseFeePerGas 0x359f85b3 = 0.899646899 gwei.
    // Median tips over the 4 (non-empty) blocks, gwei:
    //   p25 (recorded) 0.079, 0.060211641, 2, 0.05           → (0.060211641 + 0.079) / 2 = 0.0696058205
    //   p50 (constructed) 0.5, 1, 2, 0.5                     → (0.5 + 1) / 2 = 0.75
    //   p75 (recorded) 0.790873196, 1.297587536, 2, 1        → (1 + 1.297587536) / 2 = 1.148793768
    // safe = 0.899646899 + 0.0696058205 = 0.9692527195; propose = + 0.75 = 1.649646899; fast = + 1.148793768 = 2.048440667.
    expect(data).toEqual({
      safe_gwei: 0.9692527195,
      propose_gwei: 1.649646899,
      fast_gwei: 2.048440667,
      base_fee_gwei: 0.899646899,
      block: 22_367_941,
      method: 'eth_feeHistory',
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'rpc:ethereum', cached: false })]);
    // One JSON-RPC call: the last 20 blocks (0x14), percentiles 25/50/75; Etherscan is not asked.
    expect(fake.requests).toHaveLength(1);
    expect(JSON.parse(fake.requests[0]!.body)).toMatchObject({ jsonrpc: '2.0', method: 'eth_feeHistory', params: ['0x14', 'latest', [25, 50, 75]] });
  });

  it('reuses the fee history for CACHE_TTL_GAS_S', async () => {
    serve({ body: feeHistoryWithMedianColumn() });
    await get('/v1/gas');
    const { meta } = (await get('/v1/gas')).json();
    expect(meta.sources[0].cached).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('answers null tiers (and the base fee) when every block of the window was empty', async () => {
    const answer = feeHistoryWithMedianColumn();
    answer.result.gasUsedRatio = [0, 0, 0, 0];
    serve({ body: answer });
    const { data } = (await get('/v1/gas')).json();
    expect(data).toEqual({ safe_gwei: null, propose_gwei: null, fast_gwei: null, base_fee_gwei: 0.899646899, block: 22_367_941, method: 'eth_feeHistory' });
  });

  it.each<FailureCase>([
    ...upstreamFailures('rpc:ethereum', { malformed: '{"jsonrpc":"2.0","result":{' }),
    // The recorded answer itself was asked for [25, 75]: two columns where three were asked is not an answer to this call.
    ['reward rows of the wrong width', { body: recorded('ethrpc__eth_feeHistory_mainnet.json') }, 'rpc:ethereum returned 2 reward percentiles for block 0, 3 were asked'],
    [
      'inconsistent arrays',
      { body: { jsonrpc: '2.0', id: 1, result: { ...feeHistoryWithMedianColumn().result, baseFeePerGas: ['0x1'] } } },
      'rpc:ethereum returned an unexpected eth_feeHistory result',
    ],
    ['a JSON-RPC error', { body: { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'header not found' } } }, 'rpc:ethereum error: JSON-RPC error -32000 (header not found)'],
    ['a node rate limit', { status: 429, body: 'Too Many Requests' }, 'rpc:ethereum is rate limiting this server (HTTP 429)', 503],
  ])('answers 502/503 naming rpc:ethereum on %s', async (_name, reply, message, status = 502) => {
    serve(reply);
    const res = await get('/v1/gas');
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'rpc:ethereum' });
  });
});

describe('GET /v1/gas with ETHERSCAN_API_KEY (Etherscan gas oracle)', () => {
  const fake = new FakeUpstream();
  let t: TestApp;
  beforeAll(async () => {
    await fake.start();
    t = await makeApp({ ETHERSCAN_BASE_URL: fake.url, ETHERSCAN_API_KEY: 'etherscan-test-key', RPC_URL_ETHEREUM: fake.url });
  });
  afterAll(async () => {
    await t.app.close();
    await fake.stop();
  });
  const get = async (reply: FakeReply) => {
    fake.reset();
    t.app.services.cache.clear();
    t.app.services.guard.reset();
    fake.route(`GET ${ORACLE}`, reply);
    return t.app.inject({ url: '/v1/gas' });
  };

  it("serves Etherscan's figures as they are, with the key in the query", async () => {
    const res = await get({ body: recorded('etherscan__gasoracle.json') });
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    // The documented example: SafeGasPrice "0.496839934", ProposeGasPrice "0.496840168", FastGasPrice "0.55411917",
    // suggestBaseFee "0.496839934", LastBlock "23467872".
    expect(data).toEqual({
      safe_gwei: 0.496839934,
      propose_gwei: 0.496840168,
      fast_gwei: 0.55411917,
      base_fee_gwei: 0.496839934,
      block: 23_467_872,
      method: 'etherscan_gas_oracle',
    });
    expect(meta.sources).toEqual([expect.objectContaining({ provider: 'etherscan' })]);
    const [call] = fake.calls(ORACLE);
    expect(Object.fromEntries(call!.query)).toEqual({ chainid: '1', module: 'gastracker', action: 'gasoracle', apikey: 'etherscan-test-key' });
    // No fallback to the node.
    expect(fake.calls('/')).toHaveLength(0);
  });

  it('leaves base_fee_gwei null when Etherscan does not give suggestBaseFee', async () => {
    const body = recorded('etherscan__gasoracle.json');
    delete body.result.suggestBaseFee;
    const { data } = (await get({ body })).json();
    expect(data).toMatchObject({ base_fee_gwei: null, safe_gwei: 0.496839934 });
  });

  it.each<FailureCase>([
    ['status "0" (HTTP 200): invalid key', { body: { status: '0', message: 'NOTOK', result: 'Invalid API Key' } }, 'etherscan error: NOTOK: Invalid API Key'],
    [
      'status "0" (HTTP 200): deprecated V1',
      { body: { status: '0', message: 'NOTOK', result: 'You are using a deprecated V1 endpoint, switch to Etherscan API V2.' } },
      'etherscan error: NOTOK: You are using a deprecated V1 endpoint, switch to Etherscan API V2.',
    ],
    [
      'status "0" (HTTP 200): its rate limit',
      { body: recorded('etherscan__error_rate_limit.json') },
      'etherscan is rate limiting this server (NOTOK: Max rate limit reached, please use API Key for higher rate limit)',
      503,
    ],
    ...upstreamFailures('etherscan', { malformed: '{"status":"1","result":{' }),
    ['a price that is not a number', { body: { status: '1', message: 'OK', result: { ...recorded('etherscan__gasoracle.json').result, FastGasPrice: '' } } }, 'etherscan returned an unexpected response shape at result.FastGasPrice'],
  ])('answers 502/503 naming etherscan on %s', async (_name, reply, message, status = 502) => {
    const res = await get(reply);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: message, source: 'etherscan' });
    expect(fake.calls('/')).toHaveLength(0);
  });
});
