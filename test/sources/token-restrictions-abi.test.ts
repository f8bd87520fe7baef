// The restriction calls of the token simulator (src/sources/token-restrictions-abi.ts), encoded and decoded by
// hand, against viem with the ABI compiled from src/sources/token-simulator.sol; the block-override request
// shapes (eth_simulateV1, eth_call's fourth parameter); and the batching transport (rpc-batch.ts).
import { decodeFunctionResult, encodeAbiParameters, encodeFunctionData, encodeFunctionResult, type Abi } from 'viem';
import { describe, expect, it } from 'vitest';
import { compileTokenSimulator } from '../../scripts/compile-token-simulator.ts';
import { callWithBlockParams, readSimulateV1, simulateV1Params } from '../../src/sources/block-override.ts';
import { batchingRpc, type RpcRequest } from '../../src/sources/rpc-batch.ts';
import { JSON_RPC_BATCH } from '../../src/upstream/json-rpc.ts';
import {
  cooldownCalls,
  decodeBool,
  decodeHolderSells,
  decodeLimits,
  decodeSimulateLater,
  holderSellsCall,
  limitsCall,
  RESTRICTIONS_FUNDS,
  restrictionOverrides,
  simulateLaterCall,
} from '../../src/sources/token-restrictions-abi.ts';
import { SIMULATION_MAX_IN, SIMULATOR } from '../../src/sources/token-simulator.ts';

const abi = compileTokenSimulator().abi as Abi;
const m = { router: '0x7a250d5630b4cf539739df2c5dacb4c659f2488d', wrappedNative: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', token: '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c' };
const HOLDERS = ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8', '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'];
const OWNER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';

describe('the restriction calls, by hand, against viem', () => {
  it('encodes simulateLater, limits, holderSells, cooldownFirst and sellAll as viem does', () => {
    const data = (functionName: string, args: unknown[]) => encodeFunctionData({ abi, functionName, args });
    expect(simulateLaterCall(m)).toEqual({ from: SIMULATOR.caller, to: SIMULATOR.buyer, data: data('simulateLater', [m.router, m.wrappedNative, m.token, SIMULATOR.holder, SIMULATION_MAX_IN]) });
    expect(limitsCall(m, HOLDERS).data).toBe(data('limits', [m.router, m.wrappedNative, m.token, SIMULATOR.holder, HOLDERS]));
    expect(limitsCall(m, []).data).toBe(data('limits', [m.router, m.wrappedNative, m.token, SIMULATOR.holder, []]));
    expect(holderSellsCall(m, HOLDERS, OWNER, 99n * 10n ** 18n).data).toBe(data('holderSells', [m.router, m.wrappedNative, m.token, HOLDERS, OWNER, 99n * 10n ** 18n]));
    const [first, second] = cooldownCalls(m);
    expect(first).toEqual({ from: SIMULATOR.caller, to: SIMULATOR.buyer, data: data('cooldownFirst', [m.router, m.wrappedNative, m.token, SIMULATOR.holder, SIMULATION_MAX_IN]) });
    expect(second).toEqual({ from: SIMULATOR.caller, to: SIMULATOR.holder, data: data('sellAll', [m.router, m.wrappedNative, m.token]) });
  });

  it('decodes limits, holderSells, simulateLater and bools as viem encodes them', () => {
    const result = (functionName: string, r: unknown) => encodeFunctionResult({ abi, functionName, result: r as never });
    const limits = { depth: 5n, maxBuy: 4n, maxSell: 3n, sellCeiling: 5n, sellUnfunded: true, maxWallet: 2n, walletLimited: false, supply: 100n };
    expect(decodeLimits(result('limits', limits))).toEqual(limits);
    expect(decodeHolderSells(result('holderSells', [[HOLDERS[0], HOLDERS[1], '0x0000000000000000000000000000000000000000'], [true, false, false]]))).toEqual([
      { holder: HOLDERS[0], ok: true },
      { holder: HOLDERS[1], ok: false },
    ]);
    expect(decodeBool(result('sellAll', true))).toBe(true);
    expect(decodeBool(result('cooldownFirst', false))).toBe(false);
    expect(decodeBool('0x')).toBeNull();
    const sim = { pair: '0x00000000000000000000000000000000000000aa', buyIn: 1n, buyExpected: 2n, buyReceived: 2n, transferOk: true, transferReceived: 2n, sellOk: true, sellIn: 2n, sellExpected: 1n, sellReceived: 1n, failedStep: 0, revertData: '0x' };
    const outputs = (abi.find((x) => x.type === 'function' && x.name === 'simulateLater') as { outputs: readonly { type: string }[] }).outputs;
    const encoded = encodeAbiParameters(outputs as never, [sim, 369n, 1_700_003_600n] as never);
    const viem = decodeFunctionResult({ abi, functionName: 'simulateLater', data: encoded }) as [Record<string, unknown>, bigint, bigint];
    const ours = decodeSimulateLater(encoded)!;
    expect([ours.number, ours.time]).toEqual([viem[1], viem[2]]);
    expect(ours.result).toMatchObject({ buyIn: 1n, sellOk: true, failedStep: null, revertData: '0x' });
    expect(decodeLimits('0x1234')).toBeNull();
  });

  it('places the simulator at the buyer (funded for buys up to any pair), the holder and each candidate', () => {
    expect(restrictionOverrides('0x60', [HOLDERS[0]!.toUpperCase().replace('0X', '0x')])).toEqual({
      [HOLDERS[0]!]: { code: '0x60' },
      [SIMULATOR.holder]: { code: '0x60' },
      [SIMULATOR.buyer]: { code: '0x60', balance: `0x${RESTRICTIONS_FUNDS.toString(16)}` },
    });
  });
});

describe('block overrides', () => {
  const call = simulateLaterCall(m);
  it('eth_simulateV1: one call per block, the state override in the first, on the given base block', () => {
    expect(simulateV1Params([{ block: { number: 369n, time: 1000n }, call }, { block: { number: 370n, time: 1001n }, call }], { a: 1 }, 69n)).toEqual([
      {
        blockStateCalls: [
          { blockOverrides: { number: '0x171', time: '0x3e8' }, stateOverrides: { a: 1 }, calls: [call] },
          { blockOverrides: { number: '0x172', time: '0x3e9' }, calls: [call] },
        ],
        validation: false,
      },
      '0x45',
    ]);
    expect(readSimulateV1([{ calls: [{ status: '0x1', returnData: '0x01' }] }, { calls: [{ status: '0x0', returnData: '0x' }] }], 2)).toEqual([
      { ok: true, returnData: '0x01' },
      { ok: false, returnData: '0x' },
    ]);
    expect(readSimulateV1([{ calls: [] }], 1)).toBeNull();
    expect(readSimulateV1({}, 1)).toBeNull();
  });

  it("eth_call's block override is its fourth parameter", () => {
    expect(callWithBlockParams(call, { a: 1 }, 69n, { number: 369n, time: 1000n })).toEqual([call, '0x45', { a: 1 }, { number: '0x171', time: '0x3e8' }]);
  });
});

describe('batched JSON-RPC', () => {
  it('sends the calls of one turn as one batch, a call asked to go alone by itself, and matches answers by id', async () => {
    const sent: RpcRequest[][] = [];
    const rpc = batchingRpc('rpc:test', async (batch) => {
      sent.push(batch);
      return batch.map((c) => ({ jsonrpc: '2.0', id: c.id, result: c.method })).reverse();
    });
    const answers = await Promise.all([rpc('eth_a', []), Promise.resolve().then(() => rpc('eth_b', [])), rpc('eth_logs', [], { alone: true })]);
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: 1, result: 'eth_a' },
      { jsonrpc: '2.0', id: 3, result: 'eth_b' },
      { jsonrpc: '2.0', id: 2, result: 'eth_logs' },
    ]);
    expect(sent.map((b) => b.map((c) => c.method))).toEqual([['eth_logs'], ['eth_a', 'eth_b']]);
    expect(rpc.batches()).toBe(2);
    // The next turn's calls are a new batch.
    await rpc('eth_c', []);
    expect(sent).toHaveLength(3);
  });

  it('a batch that fails fails each of its calls; an answer missing from a batch fails its call only', async () => {
    const failing = batchingRpc('rpc:test', async () => {
      throw new Error('down');
    });
    await expect(Promise.all([failing('a', []), failing('b', [])])).rejects.toThrow('down');
    const partial = batchingRpc('rpc:test', async (batch) => [{ jsonrpc: '2.0', id: batch[0]!.id, result: '0x1' }]);
    const [a, b] = await Promise.allSettled([partial('eth_a', []), partial('eth_b', [])]);
    expect(a).toEqual({ status: 'fulfilled', value: { jsonrpc: '2.0', id: 1, result: '0x1' } });
    expect(b).toMatchObject({ status: 'rejected', reason: { message: 'rpc:test answered a batch without the answer to eth_b' } });
  });

  it("a batch's items are answers each (a missing method fails its call only); a rate limit or a single answer to a batch fails it", () => {
    const missing = { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'the method eth_simulateV1 does not exist/is not available' } };
    const revert = { jsonrpc: '2.0', id: 3, error: { code: 3, message: 'execution reverted' } };
    expect(JSON_RPC_BATCH.classify([{ jsonrpc: '2.0', id: 1, result: '0x1' }, missing, revert], 200)).toBeUndefined();
    expect(JSON_RPC_BATCH.classify([missing, { jsonrpc: '2.0', id: 4, error: { code: -32005, message: 'limit exceeded' } }], 200)).toMatchObject({ kind: 'rate_limited' });
    expect(JSON_RPC_BATCH.classify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } }, 200)).toEqual({
      kind: 'provider_error',
      detail: 'JSON-RPC error -32600 (batch requests are not supported)',
    });
  });
});
