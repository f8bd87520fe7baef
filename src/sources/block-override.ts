// Calls run in a later block than the chain's latest, the two standard ways: eth_simulateV1 (execution-apis;
// geth, reth, Nethermind, Erigon, many hosted RPCs), whose blocks carry `blockOverrides` and keep the state of
// the calls before them, and eth_call's fourth parameter, its block overrides (geth, reth, Erigon). The token
// check asks eth_simulateV1 first; eth_call's override is its fallback for a single block (a node that lacks the
// method answers an error). A node can ignore a parameter it does not know: the simulator reports the block it
// ran in, and a block that is not the one asked for is no answer (block-override users check it).
import type { SimCall } from './token-restrictions-abi.ts';

export type BlockOverrideMethod = 'eth_simulateV1' | 'eth_call';

export interface LaterBlock {
  number: bigint;
  time: bigint;
}

const hex = (n: bigint) => `0x${n.toString(16)}`;
const blockOverrides = (b: LaterBlock) => ({ number: hex(b.number), time: hex(b.time) });

/** eth_simulateV1's params: one call per block, the state override applied in the first; `base` the block to build on. */
export function simulateV1Params(blocks: readonly { block: LaterBlock; call: SimCall }[], overrides: object, base: bigint): unknown[] {
  return [
    {
      blockStateCalls: blocks.map(({ block, call }, i) => ({
        blockOverrides: blockOverrides(block),
        ...(i === 0 ? { stateOverrides: overrides } : {}),
        calls: [call],
      })),
      validation: false,
    },
    hex(base),
  ];
}

/** eth_call's params with its block override (the fourth parameter). */
export const callWithBlockParams = (call: SimCall, overrides: object, base: bigint, block: LaterBlock): unknown[] => [call, hex(base), overrides, blockOverrides(block)];

/** A call's outcome in an eth_simulateV1 answer: its return data, or that it reverted. */
export type SimulatedCall = { ok: true; returnData: string } | { ok: false; returnData: string };

/** Each block's single call from an eth_simulateV1 result; null when the result is not that shape. */
export function readSimulateV1(result: unknown, blocks: number): SimulatedCall[] | null {
  if (!Array.isArray(result) || result.length !== blocks) return null;
  const calls: SimulatedCall[] = [];
  for (const block of result as unknown[]) {
    const call = (block as { calls?: unknown[] })?.calls?.[0] as { status?: unknown; returnData?: unknown } | undefined;
    if (call === undefined || typeof call.returnData !== 'string' || (call.status !== '0x1' && call.status !== '0x0')) return null;
    calls.push({ ok: call.status === '0x1', returnData: call.returnData });
  }
  return calls;
}
