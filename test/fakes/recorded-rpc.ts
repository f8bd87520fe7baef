// A JSON-RPC node for the recorded world: answers each method (eth_call by its 4-byte selector) with an
// answer recorded from a real node (test/fixtures/upstream/evm-rpc__*.json, captured from the local EDR
// node by test/market/onchain/capture-fixtures.ts), under the request's id. Batches are answered item by item.
import { toFunctionSelector } from 'viem';
import { recorded } from '../fixtures.ts';
import type { FakeHandler, FakeReply } from './fake-upstream.ts';
import { feeHistoryWithMedianColumn } from './fee-history.ts';

const BY_METHOD: Record<string, string> = {
  eth_blockNumber: 'evm-rpc__eth_blockNumber.json',
  eth_getBalance: 'evm-rpc__eth_getBalance.json',
  eth_getTransactionCount: 'evm-rpc__eth_getTransactionCount.json',
  eth_getBlockByNumber: 'evm-rpc__eth_getBlockByNumber.json',
  eth_getTransactionByHash: 'evm-rpc__eth_getTransactionByHash.json',
  eth_getTransactionReceipt: 'evm-rpc__eth_getTransactionReceipt.json',
  // The token risk check's reads (test/risk/chain/capture-fixtures.ts): a token's code and an empty proxy slot.
  eth_getCode: 'evm-rpc__eth_getCode_token.json',
  eth_getStorageAt: 'evm-rpc__eth_getStorageAt_zero.json',
};

const BY_SELECTOR: Record<string, string> = {
  [toFunctionSelector('balanceOf(address)')]: 'evm-rpc__eth_call_balanceOf.json',
  [toFunctionSelector('decimals()')]: 'evm-rpc__eth_call_decimals.json',
  [toFunctionSelector('symbol()')]: 'evm-rpc__eth_call_symbol.json',
  [toFunctionSelector('resolveWithGateways(bytes,bytes,string[])')]: 'evm-rpc__eth_call_resolveWithGateways.json',
  [toFunctionSelector('owner()')]: 'evm-rpc__eth_call_owner.json',
  [toFunctionSelector('simulate(address,address,address,address,uint256)')]: 'evm-rpc__eth_call_simulate.json',
};

/** The recorded token's owner (evm-rpc__eth_call_owner.json's address word). */
const RECORDED_OWNER = `0x${recorded<{ result: string }>('evm-rpc__eth_call_owner.json').result.slice(-40)}`.toLowerCase();

interface RpcRequest {
  id?: unknown;
  method?: string;
  params?: unknown[];
}

function answer(req: RpcRequest): unknown {
  // /v1/gas without ETHERSCAN_API_KEY: the recorded mainnet fee history (see fee-history.ts for its constructed median column).
  if (req.method === 'eth_feeHistory') return { ...feeHistoryWithMedianColumn(), id: req.id };
  const call = req.params?.[0] as { data?: string } | undefined;
  // The recorded owner is an account without code (Hardhat's first account): its code is the EOA's empty answer.
  if (req.method === 'eth_getCode' && String(req.params?.[0]).toLowerCase() === RECORDED_OWNER) return { ...recorded<Record<string, unknown>>('evm-rpc__eth_getCode_eoa.json'), id: req.id };
  const file = req.method === 'eth_call' ? BY_SELECTOR[String(call?.data).slice(0, 10)] : BY_METHOD[String(req.method)];
  if (!file) return { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: `the recorded world has no answer for ${req.method}` } };
  return { ...recorded<Record<string, unknown>>(file), id: req.id };
}

export const recordedJsonRpc: FakeHandler = (req): FakeReply => {
  const body = JSON.parse(req.body) as RpcRequest | RpcRequest[];
  return { body: Array.isArray(body) ? body.map(answer) : answer(body) };
};
