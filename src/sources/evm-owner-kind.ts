// What kind of account the owner is: an externally owned account (no code), a Safe (getThreshold() and
// getOwners() answer: Safe's OwnerManager, github.com/safe-global/safe-smart-account), a timelock
// (getMinDelay() answers: OpenZeppelin's TimelockController), or another contract. One round of four reads.
import { arrayLengthAt, callData, SELECTORS, uintAt, type RpcCall } from './evm-abi.ts';

export type OwnerKind = 'eoa' | 'contract' | 'safe' | 'timelock';

export interface OwnerKindEvidence {
  /** null when the owner's code could not be read. */
  kind: OwnerKind | null;
  /** A Safe's confirmations needed, and how many owners it has; null for any other kind. */
  threshold: number | null;
  owners: number | null;
  /** A timelock's minimum delay in seconds; null for any other kind. */
  min_delay_s: number | null;
}

/** EIP-7702: an externally owned account that delegates to code keeps its key; its code is 0xef0100 + an address. */
const DELEGATED_EOA = /^0xef0100[0-9a-f]{40}$/;

const small = (v: bigint | null) => (v === null || v > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(v));

export async function readOwnerKind(rpc: RpcCall, owner: string): Promise<OwnerKindEvidence> {
  const [code, threshold, owners, minDelay] = await Promise.all([
    rpc('eth_getCode', [owner, 'latest']),
    callData(rpc, owner, SELECTORS.getThreshold),
    callData(rpc, owner, SELECTORS.getOwners),
    callData(rpc, owner, SELECTORS.getMinDelay),
  ]);
  const none = { threshold: null, owners: null, min_delay_s: null };
  if ('error' in code || typeof code.result !== 'string') return { kind: null, ...none };
  const hex = code.result.toLowerCase();
  if (hex === '0x' || DELEGATED_EOA.test(hex)) return { kind: 'eoa', ...none };
  const t = small(uintAt(threshold));
  const n = small(arrayLengthAt(owners));
  if (t !== null && n !== null && t >= 1) return { kind: 'safe', threshold: t, owners: n, min_delay_s: null };
  const delay = small(uintAt(minDelay));
  if (delay !== null) return { kind: 'timelock', ...none, min_delay_s: delay };
  return { kind: 'contract', ...none };
}
