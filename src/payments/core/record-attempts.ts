// Every x402 payment attempt that reaches the facilitator is one payment record (a row of `payments`,
// src/db/payments.ts), written from the SDK's own hooks, whatever the scheme:
//   onAfterVerify            → `verified` (before the handler runs; a ledger that cannot take the row
//                              aborts the payment: nothing is settled that is not recorded)
//   onAfterSettle            → `settled` (transaction, amount), answered
//   onSettleFailure          → `settle_failed` when the facilitator refused; when it could not be heard from,
//                              or refused because the authorization is used, what the chain says
//                              (settle-outcome.ts): `settled` (and the call answered), `settle_failed`, or
//                              `unknown`
//   onVerifiedPaymentCanceled → `cancelled` (the handler failed, or the verify hook aborted)
//
// A retry of a payment whose transfer already landed (resume.ts) keeps the first attempt's row (settle-outcome.ts).
// Each outcome is counted in the metrics too. The final-status writes never fail a paid answer: the ledger
// retries them in the background (src/db/retry-queue.ts).
//
// batch-settlement: a row is one paid call, as with exact. Its settle result is not exact's: `amount` is the
// deposit (the call that opens a channel) or empty (a voucher, which has no transaction of its own), and the
// call's charge is `extra.chargedAmount`. A refund of the unused deposit is no paid call: it has no row here
// (x402_batch_events records it, with the deposit, claims and settlements).
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { VerifiedPayment as VerifiedPaymentRow } from '../../db/payment-rows.ts';
import { attemptOf, payloadHash, type PaymentAttempt } from './attempt.ts';
import { identifierOf } from './idempotency.ts';
import { address, installResumeHooks, LEDGER_UNAVAILABLE, settled, settleFailure, type SettleOutcomeOptions } from './settle-outcome.ts';

export { LEDGER_UNAVAILABLE } from './settle-outcome.ts';

export interface AttemptRecordOptions extends SettleOutcomeOptions {
  /** How the facilitator is named in the record (`coinbase-cdp`, or its URL's origin). */
  facilitator: string;
  /** The public base URL: the record's resource_url is the matched route's URL under it. */
  publicBaseUrl: string;
}

/** A batch-settlement refund: the payer takes its unused deposit back; no call is paid for. */
function refundTest(opts: AttemptRecordOptions) {
  return (ctx: { paymentPayload: { payload: unknown } }): boolean => opts.schemes.isRefund(ctx.paymentPayload.payload);
}

/** The `verified` row of `attempt`, paying with `payload` what `requirements` ask, by `payer`. */
export function verifiedRow(
  attempt: PaymentAttempt,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  payer: string | undefined,
  opts: Pick<AttemptRecordOptions, 'schemes' | 'publicBaseUrl' | 'facilitator'>,
): VerifiedPaymentRow {
  const { request, entry } = attempt;
  // The payment's authorization (its scheme's reading), for reconciling an `unknown` row on chain.
  const auth = attempt.authorization ?? opts.schemes.authorizationOf(payload);
  return {
    requestId: request.id,
    route: entry.url,
    // What the server knows: the matched route's URL, never the payload's (the payer wrote that).
    resourceUrl: `${opts.publicBaseUrl}${entry.url}`,
    scheme: requirements.scheme,
    network: requirements.network,
    asset: requirements.asset,
    amountRequired: requirements.amount,
    payTo: requirements.payTo,
    payer: address(payer),
    payloadHash: attempt.payloadHash ?? payloadHash(payload),
    paymentIdentifier: attempt.paymentId ?? identifierOf(payload).id,
    authorizationNonce: auth?.nonce ?? null,
    validBefore: auth ? new Date(auth.validBefore * 1000) : null,
    facilitator: opts.facilitator,
  };
}

export function recordPaymentAttempts(resourceServer: x402ResourceServer, opts: AttemptRecordOptions): void {
  const isRefund = refundTest(opts);
  const { records, metrics, log } = opts;

  resourceServer.onAfterVerify(async (ctx) => {
    const attempt = attemptOf(ctx);
    if (attempt) attempt.verifyRefusal = ctx.result.isValid ? undefined : (ctx.result.invalidReason ?? 'invalid');
    if (!ctx.result.isValid) {
      metrics.payment('rejected', ctx.requirements.network);
      return;
    }
    if (!attempt || isRefund(ctx)) return;
    // A retry of a payment whose transfer landed: the first attempt's row stands for it.
    if (attempt.resume?.kind === 'landed') {
      attempt.recordId = attempt.resume.recordId;
      return;
    }
    const payload = ctx.paymentPayload;
    const row = verifiedRow(attempt, payload as PaymentPayload, ctx.requirements, ctx.result.payer, opts);
    try {
      // A voucher's row is written behind (it moves no money by itself); any other is written before the handler runs.
      attempt.recordId = opts.schemes.of(ctx.requirements)?.offChain?.(payload.payload) ? records.recordVerifiedBehind(row) : await records.recordVerified(row);
      metrics.payment('verified', ctx.requirements.network);
    } catch (err) {
      // No payment is taken that cannot be recorded: abort (the SDK cancels it), and the gate answers 503.
      attempt.recordFailure = err;
      log.error({ err: String((err as Error)?.message ?? err), route: attempt.entry.url }, 'x402: the verified payment could not be recorded in the ledger; refused before settlement');
      return { abort: true, reason: LEDGER_UNAVAILABLE, message: 'the payments ledger is unavailable' };
    }
  });

  installResumeHooks(resourceServer, opts);

  // Settled, refused or not heard from: settle-outcome.ts records it (asking the chain when it must).
  resourceServer.onAfterSettle((ctx) => settled(ctx, opts));
  resourceServer.onSettleFailure((ctx) => settleFailure(ctx, opts));

  resourceServer.onVerifiedPaymentCanceled(async (ctx) => {
    const attempt = attemptOf(ctx);
    // A retry of a landed payment is never cancelled: its money moved with the first attempt.
    if (attempt?.resume) return;
    metrics.payment('cancelled', ctx.requirements.network);
    if (!attempt?.recordId) return;
    const why = ctx.responseStatus ? `${ctx.reason}: ${ctx.responseStatus}` : ctx.reason;
    void records.recordCancelled(attempt.recordId, why);
  });
}
