// What a chain says about one payment's authorization, whatever the scheme reads it with (an EVM token's
// authorizationState, a Solana transaction's signature status): how an outcome the facilitator did not tell (a
// timeout, a dropped connection, a crash, a restart) is found out, never guessed. A scheme that can be asked
// gives an OutcomeReader (PaymentScheme.outcomes); settle-outcome.ts, resume.ts and reconciler.ts ask it.
//
//   landed          the transfer of the amount from the payer to pay_to is on chain (its transaction, when found)
//   used_elsewhere  the authorization was used, but not to pay this call
//   not_landed      unused, and the chain is past validBefore: it can never land
//   pending         unused, validBefore still ahead: it may still land
//   unreachable     the chain could not be asked

/** One payment's authorization, with what its transfer must have been to pay for the call. */
export interface AuthorizationRef {
  asset: string;
  payer: string;
  /** The authorization's unique part (PaymentAuthorization.nonce). */
  nonce: string;
  payTo: string;
  /** Atomic units. */
  amount: string;
  /** Unix seconds. */
  validBefore: number;
  /** When the payment was verified (epoch ms): its transfer cannot be older, so the search for it starts there. */
  since: number;
}

export type ChainVerdict = { kind: 'landed'; txHash: string | null; state: string } | { kind: 'not_landed' | 'pending' | 'used_elsewhere' | 'unreachable'; state: string };

/** Where a scheme's outcomes are read: asked once (never throws), or until final. */
export interface OutcomeReader {
  check(ref: AuthorizationRef): Promise<ChainVerdict>;
  /** Asks until the verdict is final or `untilMs` (epoch ms) passes; the last verdict either way. */
  watch(ref: AuthorizationRef, untilMs: number, signal?: AbortSignal): Promise<ChainVerdict>;
}

/**
 * How long past validBefore the chain is waited for to show a block at or after it (blocks come every few
 * seconds; a node may lag): until then an unused authorization may still land.
 */
export const CHAIN_GRACE_MS = 15_000;

/** The authorization of a payment, with the requirements it paid (asset, payTo, amount). */
export function authorizationRef(
  requirements: { asset: string; payTo: string; amount: string },
  auth: { payer: string; nonce: string; validBefore: number },
  since: number,
): AuthorizationRef {
  return { asset: requirements.asset, payTo: requirements.payTo, amount: requirements.amount, payer: auth.payer, nonce: auth.nonce, validBefore: auth.validBefore, since };
}

/** A verdict that will not change any more. */
export const isFinal = (v: ChainVerdict) => v.kind === 'landed' || v.kind === 'not_landed' || v.kind === 'used_elsewhere';

/** Asks `check` until the verdict is final or `untilMs` passes (every `pollMs`), or `signal` aborts. */
export async function watchUntilFinal(check: () => Promise<ChainVerdict>, untilMs: number, pollMs: number, signal?: AbortSignal): Promise<ChainVerdict> {
  for (;;) {
    const verdict = await check();
    const left = untilMs - Date.now();
    if (isFinal(verdict) || left <= 0 || signal?.aborted) return verdict;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(pollMs, left));
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
