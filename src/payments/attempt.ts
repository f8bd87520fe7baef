// One paid request's payment as it goes: what it is for, what it carries, and what became of it. Each field has
// one writer, named beside it; everything else only reads it:
//
//   request, entry, payloadHash, authorization   made with the attempt from the payment header (newAttempt)
//   paymentId, claimOwner, answerStored          the payment identifier's claim (idempotency.ts)
//   verifyRefusal, recordId, recordFailure       the facilitator's verify and its record (record-attempts.ts)
//   resume                                       a retry of a payment whose first attempt never answered (verify.ts)
//   settleSent                                   the settle was sent (settle.ts)
//   settlement                                   what the settle came to (settle-outcome.ts)
import { createHash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import type { FastifyRequest } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import { eip3009Of, type Eip3009Authorization } from './authorization.ts';

/** What a settle came to: `settled`; `refused` (the facilitator refused: nothing moved); `not_landed` (the chain shows it never can); `unknown` (money may have moved). */
export type Settlement = 'settled' | 'refused' | 'not_landed' | 'unknown';

/** One paid request's payment, as far as it has got. */
export interface PaymentAttempt {
  readonly request: FastifyRequest;
  /** The route the request matched: the payment is for it, whatever the request line said. */
  readonly entry: CatalogEntry;
  /** SHA-256 (hex) of the payment payload, canonical JSON: what ties an identifier and a record to one payload. */
  readonly payloadHash: string | undefined;
  /** The `exact` payment's EIP-3009 authorization, when it carries one. */
  readonly authorization: Eip3009Authorization | undefined;
  /** The x402 payment-identifier the client sent, while this request holds its claim, and the claim's holder token. */
  paymentId: string | undefined;
  claimOwner: string | undefined;
  /** The answer was stored under the payment identifier (a retry gets it again). */
  answerStored: boolean;
  /** Why the facilitator refused to verify the payment (its invalidReason); undefined once verified. */
  verifyRefusal: string | undefined;
  /** The payment record written when the facilitator verified the payment (a resumed payment's: its first attempt's). */
  recordId: string | undefined;
  /** Set when the verified payment could not be recorded: the call is refused before anything is settled. */
  recordFailure: unknown;
  /**
   * A retry of a payment whose first attempt never answered: its transfer landed (its record and transaction:
   * answered without settling again), or the chain could not tell (money may have moved).
   */
  resume: { kind: 'landed'; recordId: string; txHash: string | null; payer: string } | { kind: 'unknown' } | undefined;
  /** The settle was sent: from then on money may move. */
  settleSent: boolean;
  /** What the settle came to, once known. */
  settlement: Settlement | undefined;
}

/** The attempt of a request paying for `entry` with `payload` (undefined: no payment header, or one that cannot be decoded). */
export function newAttempt(request: FastifyRequest, entry: CatalogEntry, payload?: PaymentPayload): PaymentAttempt {
  return {
    request,
    entry,
    payloadHash: payload ? payloadHash(payload) : undefined,
    authorization: payload?.accepted?.scheme === 'exact' ? eip3009Of(payload) : undefined,
    paymentId: undefined,
    claimOwner: undefined,
    answerStored: false,
    verifyRefusal: undefined,
    recordId: undefined,
    recordFailure: undefined,
    resume: undefined,
    settleSent: false,
    settlement: undefined,
  };
}

/** Whether this attempt may have taken the payer's money (then its payment identifier is never given to another payment). */
export function moneyMayHaveMoved(attempt: PaymentAttempt): boolean {
  if (attempt.resume) return true;
  return attempt.settleSent && attempt.settlement !== 'refused' && attempt.settlement !== 'not_landed';
}

/** SHA-256 of a value's canonical JSON (keys sorted at every level), hex. */
export function payloadHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
