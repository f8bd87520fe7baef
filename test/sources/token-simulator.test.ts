// The token simulator: its runtime code in src/ is its Solidity source compiled (recompiled here with solc),
// and the hand-written ABI encoding and decoding agree with viem's for its one function.
import { decodeFunctionResult, encodeAbiParameters, encodeErrorResult, encodeFunctionData, getAddress, keccak256, toHex, type Abi } from 'viem';
import { describe, expect, it } from 'vitest';
import { compileTokenSimulator } from '../../scripts/compile-token-simulator.ts';
import { TOKEN_SIMULATOR_RUNTIME } from '../../src/sources/token-simulator-code.ts';
import { decodeSimulation, revertReason, SIMULATION_MAX_IN, SIMULATOR, simulationParams, taxPct } from '../../src/sources/token-simulator.ts';

const compiled = compileTokenSimulator();
const abi = compiled.abi as Abi;
const ROUTER = '0x7a250d5630b4cf539739df2c5dacb4c659f2488d';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const TOKEN = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';

describe('the simulator code', () => {
  it('is src/sources/token-simulator.sol compiled (run scripts/compile-token-simulator.ts after editing the source)', () => {
    expect(compiled.compiler).toMatch(/^0\.8\.37\+/);
    expect(TOKEN_SIMULATOR_RUNTIME).toBe(compiled.runtime);
  });

  it('is placed at addresses derived from fixed labels, and funded with 0.01 of a coin', () => {
    for (const [role, label] of [['buyer', 'buyer'], ['holder', 'holder'], ['caller', 'caller']] as const) {
      expect(SIMULATOR[role]).toBe(getAddress(`0x${keccak256(toHex(`marketgate token simulator ${label}`)).slice(26)}`).toLowerCase());
    }
    const [, , overrides] = simulationParams(ROUTER, WETH, TOKEN) as [unknown, unknown, Record<string, { code: string; balance?: string }>];
    expect(overrides[SIMULATOR.buyer]).toEqual({ code: TOKEN_SIMULATOR_RUNTIME, balance: `0x${(10n ** 16n).toString(16)}` });
    expect(overrides[SIMULATOR.holder]).toEqual({ code: TOKEN_SIMULATOR_RUNTIME });
  });
});

describe('the ABI, by hand, against viem', () => {
  it('encodes simulate(router, wrapped, token, holder, maxIn) as viem does', () => {
    const [call, block] = simulationParams(ROUTER, WETH, TOKEN) as [{ from: string; to: string; data: string }, string];
    expect(block).toBe('latest');
    expect(call).toEqual({
      from: SIMULATOR.caller,
      to: SIMULATOR.buyer,
      data: encodeFunctionData({ abi, functionName: 'simulate', args: [ROUTER, WETH, TOKEN, SIMULATOR.holder, SIMULATION_MAX_IN] }),
    });
  });

  it('decodes the Result tuple (with its dynamic revert data) as viem does', () => {
    const revertData = encodeErrorResult({ abi: [{ type: 'error', name: 'Error', inputs: [{ type: 'string' }] }], errorName: 'Error', args: ['TransferHelper: TRANSFER_FROM_FAILED'] });
    const values = {
      pair: '0x00000000000000000000000000000000000000aa',
      buyIn: 10n ** 16n,
      buyExpected: 99_690_060_900_928_177_043n,
      buyReceived: 99_690_060_900_928_177_043n,
      transferOk: true,
      transferReceived: 99_690_060_900_928_177_043n,
      sellOk: false,
      sellIn: 99_690_060_900_928_177_043n,
      sellExpected: 0n,
      sellReceived: 0n,
      failedStep: 4,
      revertData,
    } as const;
    const outputs = (abi.find((x) => x.type === 'function' && x.name === 'simulate') as { outputs: readonly { type: string; components?: unknown }[] }).outputs;
    const encoded = encodeAbiParameters(outputs as never, [values] as never);
    const viem = decodeFunctionResult({ abi, functionName: 'simulate', data: encoded }) as Record<string, unknown>;
    const ours = decodeSimulation(encoded)!;
    expect(ours).toEqual({ ...viem, failedStep: 'sell', pair: (viem.pair as string).toLowerCase() });
    expect(revertReason(ours.revertData)).toBe('TransferHelper: TRANSFER_FROM_FAILED');
    // A truncated answer is not read.
    expect(decodeSimulation(encoded.slice(0, 300))).toBeNull();
    expect(decodeSimulation('0x')).toBeNull();
  });
});

describe('revert reasons and taxes', () => {
  it.each([
    ['0x', 'reverted without a reason'],
    [encodeErrorResult({ abi: [{ type: 'error', name: 'Error', inputs: [{ type: 'string' }] }], errorName: 'Error', args: ['sells are closed'] }), 'sells are closed'],
    [encodeErrorResult({ abi: [{ type: 'error', name: 'Panic', inputs: [{ type: 'uint256' }] }], errorName: 'Panic', args: [0x11n] }), 'panic 0x11 (arithmetic overflow or underflow)'],
    ['0xdeadbeef0000000000000000000000000000000000000000000000000000000000000001', 'custom error 0xdeadbeef'],
    ['0x1234', 'reverted with 2 bytes of data'],
  ])('%s → %s', (data, reason) => {
    expect(revertReason(data)).toBe(reason);
  });

  it('measures a tax as (expected − received) / expected, in percent to 0.01', () => {
    expect(taxPct(1000n, 900n)).toBe(10);
    expect(taxPct(3n, 2n)).toBe(33.33);
    expect(taxPct(1000n, 1000n)).toBe(0);
    expect(taxPct(1000n, 0n)).toBe(100);
    expect(taxPct(0n, 0n)).toBeNull();
  });
});
