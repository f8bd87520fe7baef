// Signing a batch-settlement voucher ahead: the signature of the voucher a channel's next call will send is made in
// the background while the current call's request is on the wire, and kept; when the scheme asks to sign exactly
// that typed data, the kept signature is returned at once, so signing (1-2 ms of JavaScript per voucher, most of it
// hashing the typed data) leaves the next call's path. A signature is a pure function of the key and the typed data
// (RFC 6979), so a kept one is the very signature signing anew would give; a prediction that misses costs one
// unused signature, nothing more: the scheme signs what it needs. Kept entries are keyed by a canonical text of the
// typed data (not its EIP-712 hash, which costs as much as the signature), one per slot (a channel: a newer
// prediction replaces its older one) and at most `capacity` slots, the oldest dropped first.
import type { ClientEvmSigner } from '@x402/evm';

export type TypedData = Parameters<ClientEvmSigner['signTypedData']>[0];
type Sign = (typedData: TypedData) => Promise<`0x${string}`>;

interface Kept {
  key: string;
  signature: Promise<`0x${string}`>;
}

export class PresigningSigner {
  private readonly kept = new Map<string, Kept>();
  /** Signatures made ahead, and those of them a later signTypedData was answered with (for tests and the docs' figures). */
  readonly counts = { presigned: 0, used: 0 };

  constructor(
    private readonly sign: Sign,
    private readonly capacity = 4,
  ) {}

  /** The kept signature of exactly this typed data, at once; else signs it now. */
  signTypedData(typedData: TypedData): Promise<`0x${string}`> {
    const key = typedDataKey(typedData);
    for (const [slot, kept] of this.kept) {
      if (kept.key !== key) continue;
      this.kept.delete(slot);
      this.counts.used++;
      // A background signature that failed is made again here, where its error reaches the caller.
      return kept.signature.catch(() => this.sign(typedData));
    }
    return this.sign(typedData);
  }

  /**
   * Signs `typedData` in the background (in a later turn of the event loop: what the caller is doing now, such as
   * sending a request, goes first) and keeps the signature in `slot`, replacing what the slot held.
   */
  presign(slot: string, typedData: TypedData): void {
    const key = typedDataKey(typedData);
    if (this.kept.get(slot)?.key === key) return;
    const signature = new Promise<`0x${string}`>((resolve, reject) => setImmediate(() => this.sign(typedData).then(resolve, reject)));
    signature.catch(() => undefined); // unused, its failure is nobody's: signTypedData signs anew
    this.kept.delete(slot);
    this.kept.set(slot, { key, signature });
    this.counts.presigned++;
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= this.capacity) break;
      this.kept.delete(oldest);
    }
  }

  /** Slots holding a kept signature. */
  get size(): number {
    return this.kept.size;
  }
}

/**
 * The typed data as canonical text: object keys sorted, bigints as `<digits>n`, arrays (the EIP-712 type lists) in
 * their order. Two typed data with the same text have the same EIP-712 hash, hence the same signature.
 */
export function typedDataKey(typedData: TypedData): string {
  return JSON.stringify(canonical(typedData));
}

function canonical(v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (Array.isArray(v)) return v.map(canonical);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, canonical(o[k])]),
  );
}
