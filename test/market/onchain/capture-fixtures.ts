// Captures the JSON-RPC answers the on-chain route examples need from a real node implementation (the
// local Hardhat EDR node of test/market/onchain/world.ts), as recorded fixtures for the recorded world
// (test/fakes/recorded-world.ts): test/fixtures/upstream/evm-rpc__<what>.json, with a .source.txt.
// Run by hand when the world changes: node --import tsx test/market/onchain/capture-fixtures.ts
import { writeFileSync } from 'node:fs';
import { encodeFunctionData, erc20Abi, namehash, toHex } from 'viem';
import { packetToBytes } from 'viem/ens';
import { RECORDED_DIR } from '../../fixtures.ts';
import { ALICE, startOnchainWorld } from './world.ts';

const w = await startOnchainWorld();
const hardhat = (await import('hardhat/package.json', { with: { type: 'json' } })).default.version;

async function capture(name: string, method: string, params: unknown[], what: string): Promise<void> {
  const request = { jsonrpc: '2.0', id: 1, method, params };
  const res = await fetch(w.chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  const body = await res.json();
  writeFileSync(`${RECORDED_DIR}evm-rpc__${name}.json`, `${JSON.stringify(body, null, 2)}\n`);
  writeFileSync(
    `${RECORDED_DIR}evm-rpc__${name}.source.txt`,
    [
      `Source: captured for this repository from a local Hardhat ${hardhat} (EDR) node, HTTP ${res.status}, by test/market/onchain/capture-fixtures.ts`,
      `on ${new Date().toISOString().slice(0, 10)}: the chain test/market/onchain/world.ts builds (chain id 31337, every value set by its transactions).`,
      `What: ${what}`,
      `Request: POST <rpc> ${JSON.stringify(request)}`,
      'Format: Ethereum JSON-RPC (github.com/ethereum/execution-apis): quantities are hex strings, an unknown block or transaction is result null.',
      '',
    ].join('\n'),
  );
}

const call = (to: string, data: string) => [{ to, data }, 'latest'];
const head = toHex(await w.chain.publicClient.getBlockNumber());

await capture('eth_blockNumber', 'eth_blockNumber', [], 'the head block number');
await capture('eth_getBalance', 'eth_getBalance', [ALICE.address, head], "ALICE's balance at the head: the 1.5 ETH the world sent");
await capture('eth_getTransactionCount', 'eth_getTransactionCount', [ALICE.address, 'latest'], "ALICE's nonce (she sent nothing)");
await capture('eth_getBlockByNumber', 'eth_getBlockByNumber', [toHex(w.transfer.block), false], 'the block of the 1.5 ETH transfer, transactions as hashes');
await capture('eth_getBlockByNumber_null', 'eth_getBlockByNumber', ['0x5f5e0ff', false], 'a block beyond the head (99999999): result null');
await capture('eth_getTransactionByHash', 'eth_getTransactionByHash', [w.transfer.hash], 'the 1.5 ETH transfer (legacy, 3 gwei)');
await capture('eth_getTransactionReceipt', 'eth_getTransactionReceipt', [w.transfer.hash], 'the receipt of the 1.5 ETH transfer');
await capture('eth_getTransactionReceipt_token_transfer', 'eth_getTransactionReceipt', [w.tokenTransfer.hash], 'the receipt of an ERC-20 transfer (one Transfer log)');
await capture('eth_call_balanceOf', 'eth_call', call(w.usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [ALICE.address] })), "TestUSDC balanceOf(ALICE): 1_500_000");
await capture('eth_call_decimals', 'eth_call', call(w.usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'decimals' })), 'TestUSDC decimals(): 6');
await capture('eth_call_symbol', 'eth_call', call(w.usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'symbol' })), 'TestUSDC symbol(): "USDC"');
await capture(
  'eth_call_resolveWithGateways',
  'eth_call',
  call(
    w.universalResolver,
    encodeFunctionData({
      abi: [{ name: 'resolveWithGateways', type: 'function', stateMutability: 'view', inputs: [{ type: 'bytes' }, { type: 'bytes' }, { type: 'string[]' }], outputs: [{ type: 'bytes' }, { type: 'address' }] }],
      functionName: 'resolveWithGateways',
      args: [
        toHex(packetToBytes('alice.eth')),
        encodeFunctionData({ abi: [{ name: 'addr', type: 'function', stateMutability: 'view', inputs: [{ type: 'bytes32' }], outputs: [{ type: 'address' }] }], functionName: 'addr', args: [namehash('alice.eth')] }),
        ['x-batch-gateway:true'],
      ],
    }),
  ),
  'the Universal Resolver (test contract) resolving alice.eth to ALICE, as viem getEnsAddress asks it',
);
await w.close();
console.log('captured into', RECORDED_DIR);
process.exit(0);
