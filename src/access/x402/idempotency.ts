// Idempotent paid retries: the x402 `payment-identifier` extension (specs/extensions/payment_identifier.md
// in coinbase/x402). Every 402 declares it, optional. A client that sends an id with its payment, and
// sends the same payment again after a timeout, gets the first answer again instead of paying twice:
//
//   new id                                → processed normally; a success is stored under the id
//   same id, same payload, finished       → the stored answer (status, headers with PAYMENT-RESPONSE, body),
//                                            no facilitator call, no second settlement
//   same id, same payload, still running  → waits for the first to finish, then gets its answer (or, if
//                                            the first failed and was not settled, is processed itself);
//                                            409 with Retry-After if it is still running at the wait's end
//   same id, another payload              → 409 Conflict
//   an id that breaks the format          → 400
//   no id, when the declaration requires one → 400 (the declaration here is optional; the check follows it)
//
// The id is looked up *before* the facilitator is asked to verify (a settled authorization no longer
// verifies, so a plain replay would lose the answer). Only successes are stored; a failed attempt gives
// its id up, so a retry may pay. The store is the ledger database (src/db/payment-ids.ts), or Redis when
// several instances share one.
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { declarePaymentIdentifierExtension, isPaymentIdentifierRequired, PAYMENT_IDENTIFIER, validatePaymentIdentifier, type PaymentIdentifierValidationResult } from '@x402/extensions/payment-identifier';
import type { FastifyBaseLogger } from 'fastify';
import type { PaymentIdStore, StoredResponse } from '../../db/payment-ids.ts';
import { AppError, BadRequestError } from '../../http/errors.ts';
import { payloadHash, type PaymentAttempt } from './adapter.ts';

/** The extension as every route's 402 declares it: optional for the client. */
export const PAYMENT_IDENTIFIER_DECLARATION = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };

/** Whether the 402s require an id: the check below follows the declaration, so the two cannot disagree. */
export const PAYMENT_IDENTIFIER_REQUIRED = isPaymentIdentifierRequired(PAYMENT_IDENTIFIER_DECLARATION[PAYMENT_IDENTIFIER]);

/** Headers of a stored answer that a replay repeats; the rest (request id, security headers) are the new request's own. */
const REPLAYED_HEADERS = ['content-type', 'payment-response', 'cache-control'];

/** How often a waiting retry looks at the store (it also wakes at once when the first request ran here). */
const POLL_MS = 100;

export type IdempotencyDecision =
  /** Process the payment (this request holds the id's claim, or sent no id). */
  | { kind: 'process' }
  /** Answer with what the first request with this id and payload answered. */
  | { kind: 'replay'; response: StoredResponse };

export interface IdempotencyOptions {
  store: PaymentIdStore;
  /** The longest a retry waits for a first request with its id still running (ms). */
  waitMs: number;
  log: FastifyBaseLogger;
  /** A payment without an id is refused (400); PAYMENT_IDENTIFIER_REQUIRED by default. */
  required?: boolean;
}

export class PaymentIdempotency {
  /** Requests of this process holding a claim: a same-process retry waits for it without polling. */
  private readonly running = new Map<string, { done: Promise<void>; finish: () => void }>();

  constructor(private readonly opts: IdempotencyOptions) {}

  /**
   * Reads the payment header's identifier and decides: process, or replay a stored answer. Throws a 400
   * for a malformed id, a 409 for a conflicting reuse or a first request that is still running.
   */
  async decide(attempt: PaymentAttempt, header: string): Promise<IdempotencyDecision> {
    let payload: PaymentPayload;
    try {
      payload = decodePaymentSignatureHeader(header);
    } catch {
      return { kind: 'process' }; // the gate answers a header it cannot decode
    }
    const { id, validation } = identifierOf(payload);
    if (!validation.valid) {
      throw new BadRequestError(`the payment's ${PAYMENT_IDENTIFIER} extension is invalid: ${(validation.errors ?? []).join('; ') || 'its id must be 16-128 characters of A-Z, a-z, 0-9, - and _'}`);
    }
    const hash = payloadHash(payload);
    attempt.payloadHash = hash;
    if (!id) {
      if (this.opts.required ?? PAYMENT_IDENTIFIER_REQUIRED) {
        throw new BadRequestError(`this server requires the ${PAYMENT_IDENTIFIER} extension: the payment must carry an id (16-128 characters of A-Z, a-z, 0-9, - and _) in extensions["${PAYMENT_IDENTIFIER}"].info.id`);
      }
      return { kind: 'process' };
    }

    const deadline = Date.now() + this.opts.waitMs;
    for (;;) {
      const claim = await this.opts.store.begin(id, hash);
      if (claim.state === 'new') {
        attempt.paymentId = id;
        this.hold(id);
        return { kind: 'process' };
      }
      if (!claim.samePayload) {
        throw new AppError(409, `payment identifier ${id} was already used with another payment; use a new identifier for a new payment`);
      }
      if (claim.state === 'done') return { kind: 'replay', response: claim.response };
      // The same payment is being processed right now (a retry sent before the first answer came back): wait for it.
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new AppError(409, `a payment with identifier ${id} is still being processed; retry with the same payment to get its answer`, undefined, { retryAfterS: 1 });
      }
      await this.settleOrPoll(id, Math.min(left, POLL_MS));
    }
  }

  /** Stores a successful paid answer under its identifier (a retry gets it again). Never fails the answer. */
  async complete(attempt: PaymentAttempt, status: number, headers: Record<string, unknown>, body: string): Promise<void> {
    const id = attempt.paymentId;
    if (!id) return;
    const kept: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) if (headers[name] != null) kept[name] = String(headers[name]);
    try {
      await this.opts.store.complete(id, { status, headers: kept, body });
      attempt.answerStored = true;
    } catch (err) {
      // The payer has its answer; only a later retry with this id would pay again (the claim lapses).
      this.opts.log.error({ err: String((err as Error)?.message ?? err), paymentId: id }, 'x402: a paid answer could not be stored under its payment identifier');
    } finally {
      this.release(id);
    }
  }

  /** The request ended without a stored success: give the id up so a retry may pay. */
  async abandon(attempt: PaymentAttempt): Promise<void> {
    const id = attempt.paymentId;
    if (!id || attempt.answerStored) return;
    attempt.paymentId = undefined;
    try {
      await this.opts.store.abandon(id);
    } catch (err) {
      // The claim lapses on its own (its lease); a retry meanwhile waits, then gets a 409 with Retry-After.
      this.opts.log.warn({ err: String((err as Error)?.message ?? err), paymentId: id }, 'x402: a payment identifier could not be released');
    } finally {
      this.release(id);
    }
  }

  private hold(id: string): void {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.running.set(id, { done, finish });
  }

  private release(id: string): void {
    const held = this.running.get(id);
    this.running.delete(id);
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
