// The payment-identifier decisions of the gate (src/payments/core/idempotency.ts) on their own, over an
// in-memory store: the paths the end-to-end tests (x402-idempotency.test.ts) cannot reach on a real
// chain in reasonable time — an identifier the server requires but the payment lacks, and a first
// request still running when a retry's wait ends.
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { describe, expect, it } from 'vitest';
import { newAttempt, type PaymentAttempt } from '../../src/payments/core/attempt.ts';
import { PAYMENT_IDENTIFIER_DECLARATION, PaymentIdempotency, type ClaimBounds } from '../../src/payments/core/idempotency.ts';
import type { ClaimRequest, PaymentIdClaim, PaymentIdStore, StoredResponse } from '../../src/db/payment-ids.ts';
import { memoryLog } from '../db-helpers.ts';

/** What SqlPaymentIdStore does, in a Map (no expiry). */
class MemoryStore implements PaymentIdStore {
  readonly ids = new Map<string, { hash: string; request: string; owner: string; leaseUntil: number; response?: StoredResponse }>();
  readonly renewals: number[] = [];
  async begin(id: string, c: ClaimRequest): Promise<PaymentIdClaim> {
    const held = this.ids.get(id);
    const lapsed = held && !held.response && held.leaseUntil <= Date.now() && held.hash === c.payloadHash && held.request === c.request;
    if (!held || lapsed) {
      this.ids.set(id, { hash: c.payloadHash, request: c.request, owner: c.owner, leaseUntil: c.leaseUntil });
      return { state: 'new' };
    }
    const samePayload = held.hash === c.payloadHash;
    return held.response
      ? { state: 'done', samePayload, request: held.request, response: held.response }
      : { state: 'in_flight', samePayload, request: held.request, leaseLive: held.leaseUntil > Date.now() };
  }
  async renew(id: string, owner: string, leaseUntil: number): Promise<void> {
    const held = this.ids.get(id);
    if (held?.owner === owner && !held.response) {
      held.leaseUntil = leaseUntil;
      this.renewals.push(leaseUntil);
    }
  }
  async complete(id: string, response: StoredResponse): Promise<void> {
    this.ids.get(id)!.response = response;
  }
  async abandon(id: string, owner: string): Promise<void> {
    const held = this.ids.get(id);
    if (held && !held.response && held.owner === owner) this.ids.delete(id);
  }
  async keep(id: string, owner: string): Promise<void> {
    const held = this.ids.get(id);
    if (held && !held.response && held.owner === owner) held.leaseUntil = Date.now();
  }
}

/** The request a test payment is for, and claim bounds far ahead (or as given). */
const bounds = (over: Partial<ClaimBounds> = {}): ClaimBounds => ({ request: 'GET /v1/price?symbol=BTC', leaseCap: Date.now() + 60_000, waitUntil: Date.now() + 60_000, ...over });

const attempt = (): PaymentAttempt => newAttempt({} as never, {} as never);

/** A payment header as a client sends it (the payload's contents do not matter here), with `id` when given. */
function header(id?: string, nonce = '0x01'): string {
  const extensions = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
  const payload: PaymentPayload = {
    x402Version: 2,
    accepted: { scheme: 'exact', network: 'eip155:8453', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount: '1000', payTo: '0x1111111111111111111111111111111111111111', maxTimeoutSeconds: 60, extra: {} },
    payload: { signature: '0xabcd', authorization: { nonce } },
    extensions: id ? appendPaymentIdentifierToExtensions(extensions, id) : {},
  };
  return encodePaymentSignatureHeader(payload);
}

describe('payment identifier decisions', () => {
  it('the 402 declares the identifier optional, and so a payment without one is processed', async () => {
    expect(PAYMENT_IDENTIFIER_DECLARATION[PAYMENT_IDENTIFIER]).toMatchObject({ info: { required: false } });
    const idempotency = new PaymentIdempotency({ store: new MemoryStore(), log: memoryLog() as never });
    await expect(idempotency.decide(attempt(), header(), bounds())).resolves.toEqual({ kind: 'process' });
  });

  it('when the identifier is required, a payment without one → 400 naming the extension, before anything else', async () => {
    const store = new MemoryStore();
    const idempotency = new PaymentIdempotency({ store, log: memoryLog() as never, required: true });
    const err = await idempotency.decide(attempt(), header(), bounds()).catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 400, message: expect.stringMatching(/^this server requires the payment-identifier extension/) });
    // With an id it is processed as usual.
    await expect(idempotency.decide(attempt(), header('pay_required_and_present_01'), bounds())).resolves.toEqual({ kind: 'process' });
    expect([...store.ids.keys()]).toEqual(['pay_required_and_present_01']);
  });

  it('a first request still running when the retry has waited its bound → 409 with Retry-After 1; once it is done the retry gets its answer', async () => {
    const store = new MemoryStore();
    const idempotency = new PaymentIdempotency({ store, log: memoryLog() as never });
    const id = 'pay_still_running_at_wait_end';
    const first = attempt();
    await expect(idempotency.decide(first, header(id), bounds())).resolves.toEqual({ kind: 'process' });

    const t0 = performance.now();
    const err = await idempotency.decide(attempt(), header(id), bounds({ waitUntil: Date.now() + 300 })).catch((e: unknown) => e);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    expect(err).toMatchObject({ statusCode: 409, retryAfterS: 1, message: `a payment with identifier ${id} is still being processed; retry with the same payment to get its answer` });

    // Another payment under the id while the first runs: a conflict at once, without waiting.
    const conflict = await idempotency.decide(attempt(), header(id, '0x02'), bounds()).catch((e: unknown) => e);
    expect(conflict).toMatchObject({ statusCode: 409, message: `payment identifier ${id} was already used with another payment; use a new identifier for a new payment` });

    // A retry that is waiting when the first finishes gets the first's answer.
    const waiting = idempotency.decide(attempt(), header(id), bounds());
    await new Promise((r) => setTimeout(r, 50));
    await idempotency.complete(first, 200, { 'content-type': 'application/json; charset=utf-8', 'payment-response': 'receipt', 'x-request-id': 'first' }, '{"data":1}');
    await expect(waiting).resolves.toEqual({ kind: 'replay', response: { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'payment-response': 'receipt' }, body: '{"data":1}' } });
  });

  it('an identifier belongs to its request: the same payment for another route or query → 409 naming both, nothing replayed', async () => {
    const store = new MemoryStore();
    const idempotency = new PaymentIdempotency({ store, log: memoryLog() as never });
    const id = 'pay_bound_to_its_request_01';
    const first = attempt();
    await idempotency.decide(first, header(id), bounds({ request: 'GET /v1/market-clock' }));
    await idempotency.complete(first, 200, { 'content-type': 'application/json; charset=utf-8' }, '{"data":"clock"}');
    const err = await idempotency.decide(attempt(), header(id), bounds({ request: 'GET /v1/price?symbol=BTC' })).catch((e: unknown) => e);
    expect(err).toMatchObject({
      statusCode: 409,
      message: `payment identifier ${id} was used for GET /v1/market-clock; this request is GET /v1/price?symbol=BTC: an identifier belongs to one request (nothing was served or charged; use a new identifier for a new payment)`,
    });
    // Its own request still gets its answer.
    await expect(idempotency.decide(attempt(), header(id), bounds({ request: 'GET /v1/market-clock' }))).resolves.toMatchObject({ kind: 'replay' });
  });

  it("a claim's lease is renewed while its request runs, never past the authorization's validBefore", async () => {
    const store = new MemoryStore();
    const idempotency = new PaymentIdempotency({ store, log: memoryLog() as never, leaseMs: 60 });
    const running = attempt();
    const cap = Date.now() + 60_000;
    await idempotency.decide(running, header('pay_lease_renewed_00001'), bounds({ leaseCap: cap }));
    const first = store.ids.get('pay_lease_renewed_00001')!.leaseUntil;
    await expect.poll(() => store.renewals.length, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    expect(store.ids.get('pay_lease_renewed_00001')!.leaseUntil).toBeGreaterThan(first);
    await idempotency.finish(running);
    const renewed = store.renewals.length;

    // An authorization that ends before the lease would: the lease ends with it, and is never renewed past it.
    const ending = attempt();
    const soon = Date.now() + 30;
    await idempotency.decide(ending, header('pay_lease_capped_000001'), bounds({ leaseCap: soon }));
    expect(store.ids.get('pay_lease_capped_000001')!.leaseUntil).toBe(soon);
    await new Promise((r) => setTimeout(r, 200));
    expect(store.renewals.slice(renewed).every((until) => until <= soon)).toBe(true);
    expect(store.ids.get('pay_lease_capped_000001')!.leaseUntil).toBe(soon);
    await idempotency.finish(ending);
  });

  it('a request that ended with nothing taken gives its id up; one whose money may have moved keeps it for the same payment only', async () => {
    const store = new MemoryStore();
    const idempotency = new PaymentIdempotency({ store, log: memoryLog() as never });
    const refused = attempt();
    await idempotency.decide(refused, header('pay_nothing_was_taken_001'), bounds());
    refused.settleSent = true;
    refused.settlement = 'refused';
    await idempotency.finish(refused);
    await expect(idempotency.decide(attempt(), header('pay_nothing_was_taken_001', '0x02'), bounds())).resolves.toEqual({ kind: 'process' });

    const uncertain = attempt();
    const id = 'pay_outcome_uncertain_0001';
    await idempotency.decide(uncertain, header(id), bounds());
    uncertain.settleSent = true;
    uncertain.settlement = 'unknown';
    await idempotency.finish(uncertain);
    // Another payment never gets it: the first may have been charged.
    const err = await idempotency.decide(attempt(), header(id, '0x02'), bounds()).catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 409, message: `payment identifier ${id} was already used with another payment; use a new identifier for a new payment` });
    // The same payment takes it over at once (its outcome is then read from the chain).
    await expect(idempotency.decide(attempt(), header(id), bounds())).resolves.toEqual({ kind: 'process' });
  });
});
