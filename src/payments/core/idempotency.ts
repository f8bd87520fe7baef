// Idempotent paid retries: the x402 `payment-identifier` extension (specs/extensions/payment_identifier.md
// in coinbase/x402). Every 402 declares it, optional. A client that sends an id with its payment, and
// sends the same payment again after a timeout, gets the first answer again instead of paying twice:
//
//   new id                                → processed normally; a success is stored under the id
//   same id, same payload, finished       → the stored answer (status, headers with PAYMENT-RESPONSE, body),
//                                            no facilitator call, no second settlement
//   same id, same payload, still running  → waits for the first to finish, then gets its answer (or, if the
//                                            first ended with nothing taken, is processed itself)
//   same id, same payload, holder gone    → (a crash: its claim's lease lapsed) processed itself; whether the
//                                            first attempt's transfer landed is then found out from the chain
//   same id, another request              → 409 naming both (an id belongs to the method, route and query it
//                                            was first sent with)
//   same id, another payload              → 409 Conflict
//   an id that breaks the format          → 400
//   no id, when the declaration requires one → 400 (the declaration here is optional; the check follows it)
//
// The id is looked up *before* the facilitator is asked to verify (a settled authorization no longer
// verifies, so a plain replay would lose the answer). Only successes are stored. A request that ends with
// nothing taken gives its id up, so a retry may pay; one that ends while money may have moved (its
// settlement's outcome unknown) keeps it: only the same payment may come back for it.
//
// A claim's lease is renewed while its request runs and never reaches past the payment's authorization
// (validBefore): once that has passed, whether the transfer landed is the chain's to say, and a retry of the
// same payment can always ask.
import { randomUUID } from 'node:crypto';
import type { PaymentPayload } from '@x402/core/types';
import { declarePaymentIdentifierExtension, isPaymentIdentifierRequired, PAYMENT_IDENTIFIER, validatePaymentIdentifier, type PaymentIdentifierValidationResult } from '@x402/extensions/payment-identifier';
import type { PaymentLog } from './log.ts';
import { CLAIM_LEASE_MS, type PaymentIdStore, type StoredResponse } from '../../db/payment-ids.ts';
import { AppError, BadRequestError } from '../../lib/errors.ts';
import { decodePaymentHeader } from './header-codec.ts';
import { moneyMayHaveMoved, payloadHash, type PaymentAttempt } from './attempt.ts';

/** The extension as every route's 402 declares it: optional for the client. */
export const PAYMENT_IDENTIFIER_DECLARATION = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };

/** Whether the 402s require an id: the check below follows the declaration, so the two cannot disagree. */
export const PAYMENT_IDENTIFIER_REQUIRED = isPaymentIdentifierRequired(PAYMENT_IDENTIFIER_DECLARATION[PAYMENT_IDENTIFIER]);

/**
 * Headers of a stored answer that a replay repeats (PAYMENT-RESPONSE with its receipt, and the Content-Digest that
 * receipt binds: the body is the same bytes); the rest (request id, security headers) are the new request's own.
 */
const REPLAYED_HEADERS = ['content-type', 'payment-response', 'cache-control', 'content-digest'];

/** How often a waiting retry looks at the store (it also wakes at once when the first request ran here). */
const POLL_MS = 100;

export type IdempotencyDecision =
  /** Process the payment (this request holds the id's claim, or sent no id). */
  | { kind: 'process' }
  /** Answer with what the first request with this id and payload answered. */
  | { kind: 'replay'; response: StoredResponse };

/** The request a payment is for, and how long its claim may last. */
export interface ClaimBounds {
  /** Method, matched route and sorted query, e.g. `GET /v1/price?symbol=BTC`. */
  request: string;
  /** The lease never reaches past this (epoch ms): the authorization's validBefore. */
  leaseCap: number;
  /** A retry waits for a running twin until then (epoch ms): the longest the twin can take. */
  waitUntil: number;
}

export interface IdempotencyOptions {
  store: PaymentIdStore;
  log: PaymentLog;
  /** A payment without an id is refused (400); PAYMENT_IDENTIFIER_REQUIRED by default. */
  required?: boolean;
  /** A claim's lease (ms), renewed every third of it; CLAIM_LEASE_MS by default. */
  leaseMs?: number;
}

interface Held {
  done: Promise<void>;
  finish: () => void;
  heartbeat: NodeJS.Timeout;
}

export class PaymentIdempotency {
  /** Requests of this process holding a claim: a same-process retry waits for it without polling. */
  private readonly running = new Map<string, Held>();

  constructor(private readonly opts: IdempotencyOptions) {}

  private get leaseMs(): number {
    return this.opts.leaseMs ?? CLAIM_LEASE_MS;
  }

  /**
   * Reads the payment header's identifier and decides: process, or replay a stored answer. Throws a 400
   * for a malformed id, a 409 for a conflicting reuse or a first request that is still running.
   */
  async decide(attempt: PaymentAttempt, header: string, bounds: ClaimBounds): Promise<IdempotencyDecision> {
    let payload: PaymentPayload;
    try {
      payload = decodePaymentHeader(header);
    } catch {
      return { kind: 'process' }; // the gate answers a header it cannot decode
    }
    const id = this.check(payload);
    const hash = attempt.payloadHash ?? payloadHash(payload);
    if (!id) return { kind: 'process' };

    const owner = randomUUID();
    for (;;) {
      const now = Date.now();
      const claim = await this.opts.store.begin(id, { payloadHash: hash, request: bounds.request, owner, leaseUntil: Math.min(now + this.leaseMs, bounds.leaseCap) });
      if (claim.state === 'new') {
        attempt.paymentId = id;
        attempt.claimOwner = owner;
        this.hold(id, owner, bounds.leaseCap);
        return { kind: 'process' };
      }
      if (claim.request !== null && claim.request !== bounds.request) {
        throw new AppError(409, `payment identifier ${id} was used for ${claim.request}; this request is ${bounds.request}: an identifier belongs to one request (nothing was served or charged; use a new identifier for a new payment)`);
      }
      if (!claim.samePayload) {
        throw new AppError(409, `payment identifier ${id} was already used with another payment; use a new identifier for a new payment`);
      }
      if (claim.state === 'done') return { kind: 'replay', response: claim.response };
      // The same payment is being processed right now (a retry sent before the first answer came back): wait for it.
      const left = bounds.waitUntil - now;
      if (left <= 0) {
        throw new AppError(409, `a payment with identifier ${id} is still being processed; retry with the same payment to get its answer`, undefined, { retryAfterS: 1 });
      }
      await this.settleOrPoll(id, Math.min(left, POLL_MS));
    }
  }

  /** The payment's identifier (null: none); throws the 400 for a malformed one, or for none when one is required. */
  check(payload: PaymentPayload): string | null {
    const { id, validation } = identifierOf(payload);
    if (!validation.valid) {
      throw new BadRequestError(`the payment's ${PAYMENT_IDENTIFIER} extension is invalid: ${(validation.errors ?? []).join('; ') || 'its id must be 16-128 characters of A-Z, a-z, 0-9, - and _'}`);
    }
    if (!id && (this.opts.required ?? PAYMENT_IDENTIFIER_REQUIRED)) {
      throw new BadRequestError(`this server requires the ${PAYMENT_IDENTIFIER} extension: the payment must carry an id (16-128 characters of A-Z, a-z, 0-9, - and _) in extensions["${PAYMENT_IDENTIFIER}"].info.id`);
    }
    return id;
  }

  /** Stores a successful paid answer under its identifier (a retry gets it again). Never fails the answer. */
  async complete(attempt: PaymentAttempt, status: number, headers: Record<string, unknown>, body: string): Promise<void> {
    const id = attempt.paymentId;
    if (!id) return;
    try {
      await this.opts.store.complete(id, storedResponse(status, headers, body));
      attempt.answerStored = true;
    } catch (err) {
      // The payer has its answer. The claim stays (see finish): a retry of the same payment is answered from the chain.
      this.opts.log.error({ err: String((err as Error)?.message ?? err), paymentId: id }, 'x402: a paid answer could not be stored under its payment identifier');
    }
  }

  /**
   * The request is over. Without a stored answer: nothing taken → the id is given up, so a retry may pay; money
   * may have moved → the id is kept, its lease ended, for the same payment to come back to (the chain decides).
   */
  async finish(attempt: PaymentAttempt): Promise<void> {
    const id = attempt.paymentId;
    const owner = attempt.claimOwner;
    if (!id || !owner) return;
    attempt.paymentId = undefined;
    try {
      if (attempt.answerStored) return;
      if (moneyMayHaveMoved(attempt)) await this.opts.store.keep(id, owner);
      else await this.opts.store.abandon(id, owner);
    } catch (err) {
      // The claim lapses on its own (its lease): a retry of the same payment then takes it over.
      this.opts.log.warn({ err: String((err as Error)?.message ?? err), paymentId: id }, 'x402: a payment identifier could not be released');
    } finally {
      this.release(id);
    }
  }

  private hold(id: string, owner: string, leaseCap: number): void {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    // Renewed while the request runs (a settlement may wait for the chain), never past the authorization.
    const heartbeat = setInterval(() => {
      const until = Math.min(Date.now() + this.leaseMs, leaseCap);
      if (until <= Date.now()) return clearInterval(heartbeat);
      this.opts.store.renew(id, owner, until).catch((err) => this.opts.log.warn({ err: String((err as Error)?.message ?? err), paymentId: id }, 'x402: a payment identifier\'s lease could not be renewed'));
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    heartbeat.unref();
    this.running.set(id, { done, finish, heartbeat });
  }

  private release(id: string): void {
    const held = this.running.get(id);
    this.running.delete(id);
    if (held) clearInterval(held.heartbeat);
    held?.finish();
  }

  /** Waits until the first request (if it runs here) finishes, or `ms` pass (another instance: poll). */
  private async settleOrPoll(id: string, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const wait = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([wait, this.running.get(id)?.done ?? wait]);
    clearTimeout(timer);
  }
}

/** An answer as a retry gets it again: its status, the headers a replay repeats, and its body. */
export function storedResponse(status: number, headers: Record<string, unknown>, body: string): StoredResponse {
  const kept: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) if (headers[name] != null) kept[name] = String(headers[name]);
  return { status, headers: kept, body };
}

/**
 * The payment's identifier, checked as the SDK's extractAndValidatePaymentIdentifier checks it, minus one
 * step: validating the id against the JSON Schema the payload echoes back (clients copy the 402's
 * declaration, schema included, into every payment). The SDK compiles that schema with a new Ajv on every
 * call — 90 to 210 ms of CPU per paid request on a loaded 2-core machine, blocking every other request
 * meanwhile — and every rule the schema states (a boolean `required`; an id of 16-128 characters of A-Z,
 * a-z, 0-9, - and _) is one the SDK checks by hand before it anyway.
 */
export function identifierOf(payload: PaymentPayload): { id: string | null; validation: PaymentIdentifierValidationResult } {
  const extension = payload.extensions?.[PAYMENT_IDENTIFIER];
  if (!extension) return { id: null, validation: { valid: true } };
  const { schema: _echoed, ...declared } = (typeof extension === 'object' ? extension : {}) as Record<string, unknown>;
  const validation = validatePaymentIdentifier(typeof extension === 'object' ? declared : extension);
  if (!validation.valid) return { id: null, validation };
  return { id: (declared.info as { id?: string }).id ?? null, validation };
}
