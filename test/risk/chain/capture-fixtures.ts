// Captures the JSON-RPC answers the token risk example needs from a real node implementation (the local
// Hardhat EDR node of test/risk/chain/world.ts), as recorded fixtures for the recorded world
// (test/fakes/recorded-rpc.ts): test/fixtures/upstream/evm-rpc__<what>.json, with a .source.txt. The token
// read is the world's plain token (code, an empty EIP-1967 slot, owner(), and the trade simulation through
// Uniswap V2). Run by hand when the world or the simulator changes: node --import tsx test/risk/chain/capture-fixtures.ts
import { writeFileSync } from 'node:fs';
import { SLOTS } from '../../../src/sources/evm-token-evidence.ts';
import { simulationParams } from '../../../src/sources/token-simulator.ts';
import { RECORDED_DIR } from '../../fixtures.ts';
import { startRiskChainWorld } from './world.ts';

const w = await startRiskChainWorld();
const hardhat = (await import('hardhat/package.json', { with: { type: 'json' } })).default.version;

async function capture(name: string, method: string, params: unknown[], what: string): Promise<void> {
  const request = { jsonrpc: '2.0', id: 1, method, params };
  const res = await fetch(w.chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  const body = await res.json();
  writeFileSync(`${RECORDED_DIR}evm-rpc__${name}.json`, `${JSON.stringify(body, null, 2)}\n`);
  const shown = JSON.stringify(request).replace(/"0x[0-9a-f]{2000,}"/gi, '"<the simulator runtime code, src/sources/token-simulator-code.ts>"');
  writeFileSync(
    `${RECORDED_DIR}evm-rpc__${name}.source.txt`,
    [
      `Source: captured for this repository from a local Hardhat ${hardhat} (EDR) node, HTTP ${res.status}, by test/risk/chain/capture-fixtures.ts`,
      `on ${new Date().toISOString().slice(0, 10)}: the chain test/risk/chain/world.ts builds (chain id 31337; Uniswap V2 from its npm packages, test tokens).`,
      `What: ${what}`,
      `Request: POST <rpc> ${shown}`,
      'Format: Ethereum JSON-RPC (github.com/ethereum/execution-apis); eth_call with a third parameter is the state-override form (geth, EDR).',
      '',
    ].join('\n'),
  );
}

const token = w.tokens.plain;
await capture('eth_getCode_token', 'eth_getCode', [token, 'latest'], "the plain test token's runtime code");
await capture('eth_getStorageAt_zero', 'eth_getStorageAt', [token, SLOTS.implementation, 'latest'], "the plain token's EIP-1967 implementation slot: zero (not a proxy)");
await capture('eth_call_owner', 'eth_call', [{ to: token, data: '0x8da5cb5b' }, 'latest'], "the plain token's owner(): the deployer");
await capture('eth_call_simulate', 'eth_call', simulationParams(w.router, w.weth, token), 'the buy-transfer-sell simulation of the plain token through Uniswap V2 Router02: no tax, sell ok');
await w.close();
console.log('captured into', RECORDED_DIR);
process.exit(0);
