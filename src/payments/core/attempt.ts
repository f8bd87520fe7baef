// One paid request's payment as it goes: what it is for, what it carries, and what became of it. Each field has
// one writer, named beside it; everything else only reads it:
//
//   request, entry, payloadHash, authorization   made with the attempt from the payment header (newAttempt, by the
//                                                request adapter: the core reads no request of its own)
//   paymentId, claimOwner, answerStored          the payment identifier's claim (idempotency.ts)
//   firstSeen                                    the authorization's claim (authorization-claim.ts)
//   replay                                       the ticket of a payment its scheme recognises retries of (verify.ts)
//   verifyRefusal, recordId, recordFailure       the facilitator's verify and its record (record-attempts.ts)
//   resume                                       a retry of a payment whose first attempt never answered (verify.ts)
//   settleSent                                   the settle was sent (settle.ts)
//   settlement                                   what the settle came to (settle-outcome.ts)
import { hash } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import type { HTTPAdapter } from '@x402/core/server';
import type { CatalogEntry } from '../../catalog/route.ts';
import type { ReplayTicket } from './replay.ts';
import type { PaymentAuthorization } from './authorization.ts';

/** What the payments core knows of the request it decides (the request adapter read it: request-adapter.ts). */
export interface PaidRequest {
  /** The request's id (its log lines, its ledger row). */
  readonly id: string;
  readonly method: string;
  /** `<METHOD> <matched route's URL>[?<query, sorted>]`: what a payment identifier is bound to. */
  readonly line: string;
  /** PAYMENT-SIGNATURE as sent (x402 v2's payment header), if any. */
  readonly paymentHeader: string | undefined;
  /** Whether x402 v1's X-PAYMENT was sent (refused, never read). */
  readonly v1Header: boolean;
  /** The SDK's view of the request (`hidePayment`: with no payment header, for a challenge). */
  adapter(hidePayment: boolean): HTTPAdapter;
}

/** What a settle came to: `settled`; `refused` (the facilitator refused: nothing moved); `not_landed` (the chain shows it never can); `unknown` (money may have moved). */
export type Settlement = 'settled' | 'refused' | 'not_landed' | 'unknown';

/** One paid request's payment, as far as it has got. */
export interface PaymentAttempt {
  readonly request: PaidRequest;
  /** The route the request matched: the payment is for it, whatever the request line said. */
  readonly entry: CatalogEntry;
  /** The payment payload, decoded (undefined: no payment header, or one that cannot be decoded). */
  readonly payload: PaymentPayload | undefined;
  /** SHA-256 (hex) of the payment payload, canonical JSON: what ties an identifier and a record to one payload. */
  readonly payloadHash: string | undefined;
  /** The one-time authorization the payment carries, read by its scheme (an EIP-3009 authorization, a signed transaction). */
  readonly authorization: PaymentAuthorization | undefined;
  /** The x402 payment-identifier the client sent, while this request holds its claim, and the claim's holder token. */
  paymentId: string | undefined;
  claimOwner: string | undefined;
  /** A payment whose scheme recognises its retries (replay.ts): its ticket, closed when the request ends. */
  replay: ReplayTicket | undefined;
  /** The answer was stored under the payment identifier (a retry gets it again). */
  answerStored: boolean;
  /**
   * Its authorization was claimed new to the ledger: no earlier request of it may have moved money, so its scheme
   * may verify it locally (a retry of one already seen goes to the facilitator, whose refusal resume.ts reads).
   */
  firstSeen: boolean;
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

/** The attempts made here: what an SDK hook's context is checked against (attemptOf). */
const ATTEMPTS = new WeakSet<PaymentAttempt>();

/**
 * The attempt of a request paying for `entry` with `payload` (undefined: no payment header, or one that cannot be
 * decoded), carrying `authorization` (its scheme's reading of the payload).
 */
export function newAttempt(request: PaidRequest, entry: CatalogEntry, payload?: PaymentPayload, authorization?: PaymentAuthorization): PaymentAttempt {
  const attempt: PaymentAttempt = {
    request,
    entry,
    payload,
    payloadHash: payload ? payloadHash(payload) : undefined,
    authorization,
    paymentId: undefined,
    claimOwner: undefined,
    replay: undefined,
    answerStored: false,
    firstSeen: false,
    verifyRefusal: undefined,
    recordId: undefined,
    recordFailure: undefined,
    resume: undefined,
    settleSent: false,
    settlement: undefined,
  };
  ATTEMPTS.add(attempt);
  return attempt;
}

/** The attempt behind an SDK hook's context (its transport context carries the request's adapter), if any. */
export function attemptOf(context: { transportContext?: unknown }): PaymentAttempt | undefined {
  const adapter = (context.transportContext as { request?: { adapter?: { attempt?: unknown } } } | undefined)?.request?.adapter;
  const attempt = adapter?.attempt as PaymentAttempt | undefined;
  return attempt && ATTEMPTS.has(attempt) ? attempt : undefined;
}

/** Whether this attempt may have taken the payer's money (then its payment identifier is never given to another payment). */
export function moneyMayHaveMoved(attempt: PaymentAttempt): boolean {
  if (attempt.resume) return true;
  return attempt.settleSent && attempt.settlement !== 'refused' && attempt.settlement !== 'not_landed';
}

/** SHA-256 of a value's canonical JSON (keys sorted at every level), hex; one call of Node's one-shot hash, no hasher object per payment. */
export function payloadHash(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'hex');
}

/**
 * The value's JSON with every object's keys sorted. Written by JSON.stringify over a copy whose keys were inserted in
 * sorted order: one pass of the native serializer, where building the text key by key made a paid call's 1.5 KB
 * payload cost 35 KB of garbage. A key the copy cannot hold in its place (one that looks like an array index, which
 * JavaScript enumerates first, or `__proto__`) sends the value to the key-by-key writer, which gives the same text.
 */
export function canonicalJson(value: unknown): string {
  try {
    return JSON.stringify(sortedCopy(value)) ?? 'null';
  } catch (err) {
    if (err !== UNPLACEABLE) throw err;
    return keyByKey(value);
  }
}

const UNPLACEABLE = new Error('a key a sorted copy cannot hold in its place');
const INDEX_LIKE = /^(?:0|[1-9]\d*)$/;

function sortedCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(sortedCopy);
  const keys = sortedInPlace(Object.keys(value));
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (k === '__proto__' || INDEX_LIKE.test(k)) throw UNPLACEABLE;
    out[k] = sortedCopy((value as Record<string, unknown>)[k]);
  }
  return out;
}

/** `keys` sorted as Array.prototype.sort sorts strings (by UTF-16 code units), in place: a payload's objects have a few keys each, and the built-in sort's work arrays were a third of this hash's garbage. */
function sortedInPlace(keys: string[]): string[] {
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = k;
  }
  return keys;
}

function keyByKey(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(keyByKey).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${keyByKey((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
