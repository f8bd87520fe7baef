// The few ABI shapes the token evidence reads, encoded and decoded by hand (fixed types, no viem on the read
// path: see token-simulator.ts); test/sources/evm-evidence-parts.test.ts checks each selector against viem.

/** A JSON-RPC answer: a result, or an error the node answered with (a revert is such an answer). */
export type RpcAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };
/**
 * One JSON-RPC call; throws an UpstreamError when the node could not be read. Calls made together go out as
 * one batch (rpc-batch.ts); `alone` sends one by itself (a read whose answer may be large).
 */
export type RpcCall = (method: string, params: unknown[], options?: { alone?: boolean }) => Promise<RpcAnswer>;

export const SELECTORS = {
  factory: '0xc45a0155', // factory()
  getPair: '0xe6a43905', // getPair(address,address)
  getReserves: '0x0902f1ac', // getReserves()
  totalSupply: '0x18160ddd', // totalSupply()
  balanceOf: '0x70a08231', // balanceOf(address)
  decimals: '0x313ce567', // decimals()
  name: '0x06fdde03', // name()
  symbol: '0x95d89b41', // symbol()
  getThreshold: '0xe75235b8', // getThreshold() (Safe)
  getOwners: '0xa0e67e2b', // getOwners() (Safe)
  getMinDelay: '0xf27a0c92', // getMinDelay() (OpenZeppelin TimelockController)
} as const;

export const word = (hex: string) => hex.replace(/^0x/, '').toLowerCase().padStart(64, '0');

/** eth_call params for `to` with `selector` and address/uint arguments, at the latest block. */
export const callParams = (to: string, selector: string, ...args: (string | bigint)[]) => [
  { to, data: selector + args.map((a) => word(typeof a === 'bigint' ? a.toString(16) : a)).join('') },
  'latest',
];

/** The call's return data, or null when it reverted (an error answer) or returned nothing. */
export async function callData(rpc: RpcCall, to: string, selector: string, ...args: (string | bigint)[]): Promise<string | null> {
  const answer: RpcAnswer = await rpc('eth_call', callParams(to, selector, ...args));
  if ('error' in answer || typeof answer.result !== 'string' || !/^0x[0-9a-fA-F]*$/.test(answer.result) || answer.result === '0x') return null;
  return answer.result.toLowerCase();
}

/** The n-th 32-byte word of return data as an unsigned integer, or null when the data is shorter. */
export function uintAt(data: string | null, n = 0): bigint | null {
  if (data === null) return null;
  const hex = data.replace(/^0x/, '');
  if (hex.length < (n + 1) * 64) return null;
  return BigInt(`0x${hex.slice(n * 64, (n + 1) * 64)}`);
}

/** The n-th word as an address (its upper 12 bytes zero), or null. */
export function addressAt(data: string | null, n = 0): string | null {
  const v = uintAt(data, n);
  if (v === null || v >> 160n !== 0n) return null;
  return `0x${v.toString(16).padStart(40, '0')}`;
}

/** A `string` return value (ABI dynamic), or a `bytes32` one (old tokens such as MKR), as text; null otherwise. */
export function stringAt(data: string | null): string | null {
  if (data === null) return null;
  const hex = data.replace(/^0x/, '');
  const offset = uintAt(data, 0);
  if (offset === 32n && hex.length >= 128) {
    const length = Number(uintAt(data, 1));
    if (hex.length < 128 + length * 2) return null;
    return clean(Buffer.from(hex.slice(128, 128 + length * 2), 'hex').toString('utf8'));
  }
  if (hex.length === 64) return clean(Buffer.from(hex, 'hex').toString('utf8').replace(/\0+$/, ''));
  return null;
}

/** A dynamic array's length (its first word the offset), or null. */
export function arrayLengthAt(data: string | null): bigint | null {
  const offset = uintAt(data, 0);
  if (offset === null || offset % 32n !== 0n) return null;
  return uintAt(data, Number(offset / 32n));
}

const clean = (text: string) => text.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 100);
