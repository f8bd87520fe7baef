// Every x402 payment attempt that reaches the facilitator is one row of the payments ledger, written from
// the SDK's own hooks, whatever the scheme:
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
// retries them in the background (src/db/payments.ts).
//
// batch-settlement: a row is one paid call, as with exact. Its settle result is not exact's: `amount` is the
// deposit (the call that opens a channel) or empty (a voucher, which has no transaction of its own), and the
// call's charge is `extra.chargedAmount`. A refund of the unused deposit is no paid call: it has no row here
// (x402_batch_events records it, with the deposit, claims and settlements).
import type { x402ResourceServer } from '@x402/core/server';
import type { SettleResultContext } from '@x402/core/types';
import type { FastifyBaseLogger } from 'fastify';
import type { PaymentLedger } from '../db/payments.ts';
import type { PaymentMetrics } from '../metrics/metrics.ts';
import { attemptOf, payloadHash } from './attempt.ts';
import type { AuthorizationChain } from './chain.ts';
import { address, installResumeHooks, LEDGER_UNAVAILABLE, settleFailure } from './settle-outcome.ts';

export { LEDGER_UNAVAILABLE } from './settle-outcome.ts';

export interface LedgerHookOptions {
  ledger: PaymentLedger;
  metrics: PaymentMetrics;
  /** How the facilitator is named in the ledger (`coinbase-cdp`, or its URL's origin). */
  facilitator: string;
  log: FastifyBaseLogger;
  /** A batch-settlement refund (given when batch settlement is on: its predicate comes with the scheme, viem and all). */
  isRefund?: (payload: unknown) => boolean;
  /** The public base URL: the ledger's resource_url is the matched route's URL under it. */
  publicBaseUrl: string;
  /** The payment network's chain, asked when a settle's outcome was not heard (undefined: not asked; `unknown`). */
  chain?: AuthorizationChain;
  /** Aborted when the server closes: a wait for the chain ends (the row stays `unknown`, reconciled at the next start). */
  signal?: AbortSignal;
}

/** The EIP-3009 authorization of an `exact` EVM payload, for reconciling an `unknown` row on chain. */
function authorizationOf(payload: unknown): { nonce: string | null; validBefore: Date | null } {
  const auth = (payload as { authorization?: { nonce?: unknown; validBefore?: unknown } } | null)?.authorization;
  const before = Number(auth?.validBefore);
  return { nonce: typeof auth?.nonce === 'string' ? auth.nonce : null, validBefore: Number.isFinite(before) && before > 0 ? new Date(before * 1000) : null };
}

const ATOMIC = /^\d+$/;

/** What the call was charged, in atomic units: batch-settlement's `extra.chargedAmount` (its `amount` is a deposit, or empty), else the amount settled, else the price. */
export function chargedAmount(ctx: Pick<SettleResultContext, 'result' | 'requirements'>): string {
  const charged = (ctx.result.extra as { chargedAmount?: unknown } | undefined)?.chargedAmount;
  if (typeof charged === 'string' && ATOMIC.test(charged)) return charged;
  if (ctx.requirements.scheme === 'exact' && ctx.result.amount && ATOMIC.test(ctx.result.amount)) return ctx.result.amount;
  return ctx.requirements.amount;
}

/** A batch-settlement refund: the payer takes its unused deposit back; no call is paid for. */
function refundTest(opts: LedgerHookOptions) {
  return (ctx: { paymentPayload: { payload: unknown } }): boolean => opts.isRefund?.(ctx.paymentPayload.payload) ?? false;
}

export function recordPaymentsInLedger(resourceServer: x402ResourceServer, opts: LedgerHookOptions): void {
  const isRefund = refundTest(opts);
  const { ledger, metrics, log } = opts;

  resourceServer.onAfterVerify(async (ctx) => {
    const attempt = attemptOf(ctx);
    if (!ctx.result.isValid) {
      metrics.payment('rejected');
      if (attempt) attempt.verifyRefusal = ctx.result.invalidReason ?? 'invalid';
      return;
    }
    if (!attempt || isRefund(ctx)) return;
    // A retry of a payment whose transfer landed: the first attempt's row stands for it.
    if (attempt.resume) {
      attempt.ledgerId = attempt.resume.ledgerId;
      return;
    }
    const { req, entry } = attempt;
    const payload = ctx.paymentPayload;
    attempt.payloadHash ??= payloadHash(payload);
    const auth = authorizationOf(payload.payload);
    try {
      attempt.ledgerId = await ledger.recordVerified({
        requestId: req.id,
        route: entry.url,
        // What the server knows: the matched route's URL, never the payload's (the payer wrote that).
        resourceUrl: `${opts.publicBaseUrl}${entry.url}`,
        scheme: ctx.requirements.scheme,
        network: ctx.requirements.network,
        asset: ctx.requirements.asset,
        amountRequired: ctx.requirements.amount,
        payTo: ctx.requirements.payTo,
        payer: address(ctx.result.payer),
        payloadHash: attempt.payloadHash,
        paymentIdentifier: attempt.paymentId ?? null,
        authorizationNonce: auth.nonce,
        validBefore: auth.validBefore,
        facilitator: opts.facilitator,
      });
      metrics.payment('verified');
    } catch (err) {
      // No payment is taken that cannot be recorded: abort (the SDK cancels it), and the gate answers 503.
      attempt.ledgerFailure = err;
      log.error({ err: String((err as Error)?.message ?? err), route: entry.url }, 'x402: the verified payment could not be recorded in the ledger; refused before settlement');
      return { abort: true, reason: LEDGER_UNAVAILABLE, message: 'the payments ledger is unavailable' };
    }
  });

  installResumeHooks(resourceServer, opts);

  resourceServer.onAfterSettle(async (ctx) => {
    if (isRefund(ctx)) return;
    metrics.payment('settled');
    const attempt = attemptOf(ctx);
    if (attempt) attempt.settle = 'settled';
    const id = attempt?.ledgerId;
    if (!id) return;
    // A voucher's transaction is empty: it is claimed and settled later, with others (x402_batch_events).
    void ledger.recordSettled(id, { txHash: ctx.result.transaction || null, settledAmount: chargedAmount(ctx), payer: address(ctx.result.payer), answered: true });
  });

  // Refused, or not heard from: the chain may say the transfer landed after all (settle-outcome.ts).
  resourceServer.onSettleFailure((ctx) => settleFailure(ctx, opts));

  resourceServer.onVerifiedPaymentCanceled(async (ctx) => {
    const attempt = attemptOf(ctx);
    // A retry of a landed payment is never cancelled: its money moved with the first attempt.
    if (attempt?.resume) return;
    metrics.payment('cancelled');
    if (!attempt?.ledgerId) return;
    const why = ctx.responseStatus ? `${ctx.reason}: ${ctx.responseStatus}` : ctx.reason;
    void ledger.recordCancelled(attempt.ledgerId, why);
  });
}
