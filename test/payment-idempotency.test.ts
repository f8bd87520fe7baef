// The payment-identifier decisions of the gate (src/access/x402/idempotency.ts) on their own, over an
// in-memory store: the paths the end-to-end tests (x402-idempotency.test.ts) cannot reach on a real
// chain in reasonable time — an identifier the server requires but the payment lacks, and a first
// request still running when a retry's wait ends.
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { describe, expect, it } from 'vitest';
import type { PaymentAttempt } from '../src/access/x402/adapter.ts';
import { PAYMENT_IDENTIFIER_DECLARATION, PaymentIdempotency } from '../src/access/x402/idempotency.ts';
import type { PaymentIdClaim, PaymentIdStore, StoredResponse } from '../src/db/payment-ids.ts';
import { memoryLog } from './db-helpers.ts';

/** What SqlPaymentIdStore does, in a Map (no lease, no expiry). */
class MemoryStore implements PaymentIdStore {
  readonly ids = new Map<string, { hash: string; response?: StoredResponse }>();
  async begin(id: string, payloadHash: string): Promise<PaymentIdClaim> {
    const held = this.ids.get(id);
    if (!held) {
      this.ids.set(id, { hash: payloadHash });
      return { state: 'new' };
    }
    const samePayload = held.hash === payloadHash;
    return held.response ? { state: 'done', samePayload, response: held.response } : { state: 'in_flight', samePayload };
  }
  async complete(id: string, response: StoredResponse): Promise<void> {
    this.ids.get(id)!.response = response;
  }
  async abandon(id: string): Promise<void> {
    if (!this.ids.get(id)?.response) this.ids.delete(id);
  }
}

const attempt = (): PaymentAttempt => ({ req: {} as never, entry: {} as never, payloadHash: undefined, paymentId: undefined, ledgerId: undefined, ledgerFailure: undefined, answerStored: false });

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
    const idempotency = new PaymentIdempotency({ store: new MemoryStore(), waitMs: 100, log: memoryLog() as never });
    await expect(idempotency.decide(attempt(), header())).resolves.toEqual({ kind: 'process' });
  });

  it('when the identifier is required, a payment without one → 400 naming the extension, before anything else', async () => {
    const store = new MemoryStore();
    const idempotency = new PaymentIdempotency({ store, waitMs: 100, log: memoryLog() as never, required: true });
    const err = await idempotency.decide(attempt(), header()).catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 400, message: expect.stringMatching(/^this server requires the payment-identifier extension/) });
    // With an id it is processed as usual.
    await expect(idempotency.decide(attempt(), header('pay_required_and_present_01'))).resolves.toEqual({ kind: 'process' });
    expect([...store.ids.keys()]).toEqual(['pay_required_and_present_01']);
  });

  it('a first request still running when the retry has waited its bound → 409 with Retry-After 1; once it is done the retry gets its answer', async () => {
    const store = new MemoryStore();
    const idempotency = new PaymentIdempotency({ store, waitMs: 300, log: memoryLog() as never });
    const id = 'pay_still_running_at_wait_end';
    const first = attempt();
    await expect(idempotency.decide(first, header(id))).resolves.toEqual({ kind: 'process' });

    const t0 = performance.now();
    const err = await idempotency.decide(attempt(), header(id)).catch((e: unknown) => e);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    expect(err).toMatchObject({ statusCode: 409, retryAfterS: 1, message: `a payment with identifier ${id} is still being processed; retry with the same payment to get its answer` });

    // Another payment under the id while the first runs: a conflict at once, without waiting.
    const conflict = await idempotency.decide(attempt(), header(id, '0x02')).catch((e: unknown) => e);
    expect(conflict).toMatchObject({ statusCode: 409, message: `payment identifier ${id} was already used with another payment; use a new identifier for a new payment` });

    // A retry that is waiting when the first finishes gets the first's answer.
    const waiting = idempotency.decide(attempt(), header(id));
    await new Promise((r) => setTimeout(r, 50));
    await idempotency.complete(first, 200, { 'content-type': 'application/json; charset=utf-8', 'payment-response': 'receipt', 'x-request-id': 'first' }, '{"data":1}');
    await expect(waiting).resolves.toEqual({ kind: 'replay', response: { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'payment-response': 'receipt' }, body: '{"data":1}' } });
  });
});
