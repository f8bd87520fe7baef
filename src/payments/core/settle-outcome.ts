// What became of a settlement the facilitator did not confirm, found out from the chain, never guessed; and the
// hooks that answer a retry of a payment whose transfer already landed (resume.ts) without settling it again.
//
// A settle the facilitator could not be heard about (no answer within X402_SETTLE_TIMEOUT_MS or by validBefore,
// a dropped connection, a 5xx), or refused because the authorization is used or about to expire (another
// attempt of the same authorization may have moved the money: a crash, then a retry), is decided by the chain,
// asked until the authorization is used or can no longer be (X402_RPC_URL, chain.ts):
//
//   used, by a transfer to pay_to → `settled`, and this call is answered (the SDK's `recovered`), unless the
//                                   same authorization already answered another request (then 402: one
//                                   transfer, one answer)
//   never usable any more         → `settle_failed`: nothing was charged (402, NOT_CHARGED)
//   the chain cannot tell         → `unknown` (503 + Retry-After: send the same payment again, never a new one)
import type { x402ResourceServer } from '@x402/core/server';
import { FacilitatorTimeoutError, getFacilitatorResponseError } from '@x402/core/server';
import type { SettleFailureContext, SettleResultContext } from '@x402/core/types';
import { checksumEvmAddress, looksLikeEvmAddress } from '../../params/evm-address.ts';
import type { PaymentRecords } from '../../db/payments.ts';
import type { PaymentMetrics } from '../../metrics/metrics.ts';
import { attemptOf } from './attempt.ts';
import type { PaymentLog } from './log.ts';
import { authorizationRef, CHAIN_GRACE_MS, type ChainVerdict } from './outcome.ts';
import type { PaymentSchemes } from './scheme.ts';
import { FacilitatorUnavailableError } from './facilitator.ts';
import type { ServerReceipts } from './offer-receipt.ts';

/** What settling's hooks record with, and where they ask the chain. */
export interface SettleOutcomeOptions {
  records: PaymentRecords;
  metrics: PaymentMetrics;
  log: PaymentLog;
  /** The schemes offered: a payload's authorization, what a call was charged, a refund, and the chain asked when a settle's outcome was not heard (a scheme without one: not asked; `unknown`). */
  schemes: PaymentSchemes;
  /** Aborted when the server closes: a wait for the chain ends (the row stays `unknown`, reconciled at the next start). */
  signal?: AbortSignal;
  /** Signed receipts (X402_SIGNING_KEY): a call recovered from the chain gets its receipt too. */
  receipts?: Pick<ServerReceipts, 'recovered'>;
}

/** The reason the SDK is given when the ledger could not record a verified payment (the gate answers 503). */
export const LEDGER_UNAVAILABLE = 'ledger_unavailable';

/** Facilitator refusals that say (or may say) the authorization was used, or expires with another settle in flight. */
export const AUTHORIZATION_IN_USE = /nonce|valid_before|simulation_failed|transaction_failed|duplicate_settlement|settlement_pending/;

/** How far back (ms) the transaction of a settle that was just sent can be. */
const SETTLE_SEARCH_BACK_MS = 10 * 60_000;

/** One spelling of an address in the ledger (the SDK's results differ: batch-settlement lowercases the payer). */
export function address(value: string | undefined | null): string | null {
  if (!value) return null;
  return looksLikeEvmAddress(value) ? checksumEvmAddress(value) : value;
}

type Recovered = {
  recovered: true;
  result: { success: true; transaction: string; network: `${string}:${string}`; payer?: string; amount: string; extensions?: Record<string, unknown> };
};

/** What the call was charged, in atomic units: what its scheme reads from the settle result (batch-settlement's `extra.chargedAmount`, exact's amount settled), else the price. */
export function chargedAmount(ctx: Pick<SettleResultContext, 'result' | 'requirements'>, schemes: PaymentSchemes): string {
  return schemes.of(ctx.requirements)?.chargedAmount?.(ctx.result) ?? ctx.requirements.amount;
}

/** The onAfterSettle hook: the transfer is done (a voucher's: charged, claimed and settled later with others). */
export async function settled(ctx: SettleResultContext, opts: SettleOutcomeOptions): Promise<void> {
  if (opts.schemes.isRefund(ctx.paymentPayload.payload)) return;
  opts.metrics.payment('settled', ctx.requirements.network);
  const attempt = attemptOf(ctx);
  if (attempt) attempt.settlement = 'settled';
  const id = attempt?.recordId;
  if (!id) return;
  // A voucher's transaction is empty: it is claimed and settled later, with others (x402_batch_events).
  void opts.records.recordSettled(id, { txHash: ctx.result.transaction || null, settledAmount: chargedAmount(ctx, opts.schemes), payer: address(ctx.result.payer), answered: true });
}

/** The onSettleFailure hook: records the outcome, recovering the call when the chain shows its transfer landed. */
export async function settleFailure(ctx: SettleFailureContext, opts: SettleOutcomeOptions): Promise<Recovered | undefined> {
  if (opts.schemes.isRefund(ctx.paymentPayload.payload)) return undefined;
  const { records, metrics } = opts;
  const attempt = attemptOf(ctx);
  const id = attempt?.recordId;
  const fe = getFacilitatorResponseError(ctx.error);
  const reason = String((ctx.error as { errorReason?: unknown })?.errorReason ?? ctx.error?.message ?? 'settlement failed');
  // A facilitator that could not be heard from may still have sent the transfer; one that could not even be
  // connected to was never sent the settle (nothing moved: 503, try again later, as a verify that failed so).
  const unheard = (fe instanceof FacilitatorUnavailableError && !fe.notSent) || fe instanceof FacilitatorTimeoutError;
  // Unheard, or an authorization about to expire: waited for until the chain is sure; a used one: asked once.
  const verdict = unheard || AUTHORIZATION_IN_USE.test(reason) ? await askChain(ctx, opts, unheard || /valid_before|settlement_pending/.test(reason)) : undefined;

  if (verdict?.kind === 'landed') {
    const payer = address((attempt?.authorization ?? opts.schemes.authorizationOf(ctx.paymentPayload))?.payer);
    // The row of this attempt (or, if another row holds the authorization's settlement, its duplicate).
    const answerable = id ? await claim(id, verdict, payer, ctx.requirements.amount, opts) : true;
    if (answerable) {
      metrics.payment('settled', ctx.requirements.network);
      if (attempt) attempt.settlement = 'settled';
      const result = { success: true as const, transaction: verdict.txHash ?? '', network: ctx.requirements.network, payer: payer ?? undefined, amount: ctx.requirements.amount };
      // The SDK returns a recovered settlement as it is, without its extensions' enrichment: the receipt is added here.
      const extensions = await opts.receipts?.recovered(ctx, result);
      return { recovered: true, result: extensions ? { ...result, extensions } : result };
    }
    // Another request of the same authorization was answered: this one is refused, as the facilitator refused it.
    metrics.payment('settle_failed', ctx.requirements.network);
    if (attempt) attempt.settlement = 'refused';
    return undefined;
  }
  if (verdict?.kind === 'not_landed' || verdict?.kind === 'used_elsewhere') {
    metrics.payment('settle_failed', ctx.requirements.network);
    if (attempt) attempt.settlement = 'not_landed';
    if (id) void records.recordSettleFailed(id, { errorReason: `${reason}; the transfer never landed: nothing was charged`, chain: verdict.state });
    return undefined;
  }
  // Refused, and the chain does not contradict it (unused and still valid, or not asked): nothing moved.
  if (!unheard && verdict?.kind !== 'unreachable') {
    metrics.payment('settle_failed', ctx.requirements.network);
    if (attempt) attempt.settlement = 'refused';
    if (id) void records.recordSettleFailed(id, { errorReason: reason });
    return undefined;
  }
  metrics.payment('unknown', ctx.requirements.network);
  if (attempt) attempt.settlement = 'unknown';
  if (id) void records.recordUnknown(id, { errorReason: reason, chain: verdict?.state });
  return undefined;
}

/** Records the landed transfer on the row, and claims the call's answer for it (false: its authorization answered another request). */
async function claim(id: string, verdict: Extract<ChainVerdict, { kind: 'landed' }>, payer: string | null, amount: string, opts: SettleOutcomeOptions): Promise<boolean> {
  await opts.records.recordSettled(id, { txHash: verdict.txHash, settledAmount: amount, payer, chain: verdict.state });
  try {
    return await opts.records.claimAnswer(id);
  } catch (err) {
    // The money moved: when the ledger cannot say whether it was answered, the payer gets the answer.
    opts.log.error({ err: String((err as Error)?.message ?? err), payment: id }, 'x402: a landed payment could not be checked for an earlier answer; answered');
    return true;
  }
}

/** What the chain says of a settlement of a scheme with an authorization; with `wait`, asked until it is final (or validBefore + grace). */
async function askChain(ctx: SettleFailureContext, opts: SettleOutcomeOptions, wait: boolean): Promise<ChainVerdict | undefined> {
  const scheme = opts.schemes.of(ctx.requirements);
  const auth = scheme?.authorizationOf?.(ctx.paymentPayload);
  const chain = scheme?.outcomes;
  if (!chain || !auth) return undefined;
  const ref = authorizationRef(ctx.requirements, auth, Date.now() - SETTLE_SEARCH_BACK_MS);
  const verdict = await chain.watch(ref, wait ? auth.validBefore * 1000 + CHAIN_GRACE_MS : 0, opts.signal);
  opts.log.warn({ verdict: verdict.kind, chain: verdict.state }, 'x402: a settlement the facilitator did not confirm; the chain was asked');
  return verdict;
}

/** A retry of a payment whose transfer landed: neither verified (the first attempt was) nor settled again. */
export function installResumeHooks(resourceServer: x402ResourceServer, opts: Pick<SettleOutcomeOptions, 'records'>): void {
  resourceServer.onBeforeVerify(async (ctx) => {
    const resume = attemptOf(ctx)?.resume;
    if (resume?.kind === 'landed') return { skip: true, result: { isValid: true, payer: resume.payer } };
  });

  // Its answer is claimed first (one retry answers it); the first transfer is its receipt.
  resourceServer.onBeforeSettle(async (ctx) => {
    const resume = attemptOf(ctx)?.resume;
    if (resume?.kind !== 'landed') return;
    let claimed: boolean;
    try {
      claimed = await opts.records.claimAnswer(resume.recordId);
    } catch {
      return { abort: true, reason: LEDGER_UNAVAILABLE, message: 'the payments ledger is unavailable' };
    }
    if (!claimed) return { abort: true, reason: 'payment_already_answered', message: 'this payment was already answered' };
    return { skip: true, result: { success: true, transaction: resume.txHash ?? '', network: ctx.requirements.network, payer: resume.payer } };
  });
}
