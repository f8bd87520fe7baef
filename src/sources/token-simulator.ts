// The buy-and-sell simulation as one eth_call (token-simulator.sol): the request, and the reading of its
// answer into taxes. The ABI is encoded and decoded by hand (one function, fixed types) so that reading a
// token does not load viem; test/sources/token-simulator.test.ts checks both directions against viem.
import { TOKEN_SIMULATOR_RUNTIME } from './token-simulator-code.ts';

/** Where the simulator is placed (state override): addresses derived from fixed labels, keccak256(label)[12:]. */
export const SIMULATOR = {
  /** keccak256("marketgate token simulator buyer"): buys, and holds the wrapped native coin it spends. */
  buyer: '0xebc8486ff8be3706383f34f0db5654f8046af40f',
  /** keccak256("marketgate token simulator holder"): receives the transfer and sells. */
  holder: '0x0b089d35ac08424b46fd0c8ba89cd26bfc5e7abd',
  /** keccak256("marketgate token simulator caller"): the eth_call's sender. */
  caller: '0x1577065ab7d42996d3bbb91fea12e643d463ac5c',
} as const;

/** The largest buy, in the native coin's smallest unit: 0.01 of a coin (18 decimals on every chain covered). */
export const SIMULATION_MAX_IN = 10n ** 16n;

/** simulate(address,address,address,address,uint256) */
const SIMULATE = '0x8411530b';

const word = (hex: string) => hex.replace(/^0x/, '').toLowerCase().padStart(64, '0');

/** The eth_call params: the call, the block, and the state override that places and funds the simulator. */
export function simulationParams(router: string, wrappedNative: string, token: string): unknown[] {
  const data = SIMULATE + [router, wrappedNative, token, SIMULATOR.holder].map(word).join('') + word(SIMULATION_MAX_IN.toString(16));
  return [
    { from: SIMULATOR.caller, to: SIMULATOR.buyer, data },
    'latest',
    {
      [SIMULATOR.buyer]: { code: TOKEN_SIMULATOR_RUNTIME, balance: `0x${SIMULATION_MAX_IN.toString(16)}` },
      [SIMULATOR.holder]: { code: TOKEN_SIMULATOR_RUNTIME },
    },
  ];
}

/** The step of the simulation whose revert reason is shown (Result.failedStep). */
export type FailedStep = 'quote' | 'buy' | 'transfer' | 'sell';
const STEPS: Record<number, FailedStep> = { 1: 'quote', 2: 'buy', 3: 'transfer', 4: 'sell' };

/** simulate()'s Result, as the contract returns it. */
export interface SimulationResult {
  pair: string;
  buyIn: bigint;
  buyExpected: bigint;
  buyReceived: bigint;
  transferOk: boolean;
  transferReceived: bigint;
  sellOk: boolean;
  sellIn: bigint;
  sellExpected: bigint;
  sellReceived: bigint;
  failedStep: FailedStep | null;
  revertData: string;
}

/** Decodes simulate()'s return data (a tuple with one dynamic member); null when it is not that shape. */
export function decodeSimulation(hex: string): SimulationResult | null {
  const data = hex.replace(/^0x/, '');
  const at = (byte: number) => (byte * 2 + 64 <= data.length ? BigInt(`0x${data.slice(byte * 2, byte * 2 + 64)}`) : null);
  const base = at(0);
  if (base === null || base > BigInt(data.length / 2)) return null;
  const fields: bigint[] = [];
  for (let i = 0; i < 12; i++) {
    const v = at(Number(base) + i * 32);
    if (v === null) return null;
    fields.push(v);
  }
  const [pair, buyIn, buyExpected, buyReceived, transferOk, transferReceived, sellOk, sellIn, sellExpected, sellReceived, step, revertAt] = fields as [
    bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint,
  ];
  const bytesStart = Number(base + revertAt);
  const length = at(bytesStart);
  if (length === null || (bytesStart + 32 + Number(length)) * 2 > data.length) return null;
  return {
    pair: `0x${pair.toString(16).padStart(40, '0')}`,
    buyIn,
    buyExpected,
    buyReceived,
    transferOk: transferOk === 1n,
    transferReceived,
    sellOk: sellOk === 1n,
    sellIn,
    sellExpected,
    sellReceived,
    failedStep: STEPS[Number(step)] ?? null,
    revertData: `0x${data.slice((bytesStart + 32) * 2, (bytesStart + 32 + Number(length)) * 2)}`,
  };
}

/** Panic codes of Solidity (docs.soliditylang.org, "Panic via assert and Error via require"). */
const PANICS: Record<number, string> = {
  0x01: 'assertion failed',
  0x11: 'arithmetic overflow or underflow',
  0x12: 'division by zero',
  0x21: 'invalid enum value',
  0x22: 'invalid storage byte array',
  0x31: 'pop on an empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to an uninitialised function',
};

/** A revert's data in words: Error(string)'s message, a panic's meaning, or a custom error's selector. */
export function revertReason(hex: string): string {
  const data = hex.replace(/^0x/, '').toLowerCase();
  if (data === '') return 'reverted without a reason';
  const selector = data.slice(0, 8);
  if (selector === '08c379a0' && data.length >= 8 + 128) {
    const offset = Number(BigInt(`0x${data.slice(8, 72)}`));
    const length = Number(BigInt(`0x${data.slice(8 + offset * 2, 8 + offset * 2 + 64)}`));
    const text = Buffer.from(data.slice(8 + offset * 2 + 64, 8 + offset * 2 + 64 + length * 2), 'hex').toString('utf8');
    // A message is shown as text, trimmed: it comes from the token's code.
    return text.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200) || 'reverted with an empty message';
  }
  if (selector === '4e487b71' && data.length >= 8 + 64) {
    const code = Number(BigInt(`0x${data.slice(8, 72)}`));
    return `panic 0x${code.toString(16).padStart(2, '0')} (${PANICS[code] ?? 'unknown panic code'})`;
  }
  return data.length >= 8 ? `custom error 0x${selector}` : `reverted with ${data.length / 2} bytes of data`;
}

/** (expected − received) / expected in percent, to 0.01; null when nothing was expected. */
export function taxPct(expected: bigint, received: bigint): number | null {
  if (expected <= 0n) return null;
  return Math.round(Number(((expected - received) * 1_000_000n) / expected) / 100) / 100;
}
