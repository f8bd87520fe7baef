// A payment its scheme admits and settles itself (PaymentScheme.lane): a repeat batch-settlement voucher, today.
// The SDK's way costs a repeat call most of its server time: it decodes the payment again, builds the route's whole
// 402 (every scheme's requirements, the Bazaar declaration) to match the payment against, checks the extensions,
// runs its verify and settle hook chains and encodes PAYMENT-RESPONSE, about a millisecond of CPU a call on this
// project's machine, beside the scheme's own work (a signature check and two updates of the channel's state).
//
// A lane takes only a payment the SDK has, in effect, already checked: equal in every part to one the SDK accepted
// for the same route, but for the parts that change per call, which the scheme checks exactly as the SDK would.
// It never refuses: anything else goes to the SDK (verify.ts), which answers it as before. What the SDK's hooks
// would record, this records the same way: the `verified` row (written behind, as for any voucher), then `settled`
// with the charge, or `cancelled` when the handler fails, or `settle_failed` when the charge could not be committed.
//
// Not used with X402_SIGNING_KEY: a receipt is an extension's enrichment of the settle response, which only the
// SDK makes (fastify.ts).
import type { PaymentPayload, SettleResponse } from '@x402/core/types';
import type { PaymentRecords } from '../../db/payments.ts';
import type { PaymentMetrics } from '../../metrics/metrics.ts';
import type { PaymentAttempt } from './attempt.ts';
import type { PaymentLog } from './log.ts';
import { verifiedRow } from './record-attempts.ts';
import type { LaneAdmission, PaymentSchemes } from './scheme.ts';
import { address, chargedAmount } from './settle-outcome.ts';

export interface LaneOptions {
  schemes: PaymentSchemes;
  records: PaymentRecords;
  metrics: PaymentMetrics;
  log: PaymentLog;
  publicBaseUrl: string;
  /** How the payment records name the facilitator. */
  facilitator: string;
}

/** A payment granted by its scheme's lane (verify.ts), settled by it (settle.ts). */
export interface LanePayment {
  readonly type: 'lane';
  readonly payload: PaymentPayload;
  readonly admission: LaneAdmission;
}

/** The lane's grant of `attempt`, recorded as `verified`; undefined: the SDK decides it. */
export async function admitByLane(attempt: PaymentAttempt, opts: LaneOptions): Promise<LanePayment | undefined> {
  const payload = attempt.payload;
  const lane = payload && opts.schemes.laneOf(payload);
  const admission = lane && (await lane.admit(payload, attempt.entry.url));
  if (!admission) return undefined;
  const { requirements } = admission;
  try {
    const row = verifiedRow(attempt, payload, requirements, admission.payer, opts);
    // As record-attempts.ts records it: a payment that moves no money by itself is written behind.
    attempt.recordId = opts.schemes.of(requirements)?.offChain?.(payload.payload) ? opts.records.recordVerifiedBehind(row) : await opts.records.recordVerified(row);
  } catch (err) {
    // No payment is taken that cannot be recorded: the reservation is given up, and the gate answers 503.
    attempt.recordFailure = err;
    await admission.release();
    opts.log.error({ err: String((err as Error)?.message ?? err), route: attempt.entry.url }, 'x402: the verified payment could not be recorded in the ledger; refused before settlement');
    throw err;
  }
  opts.metrics.payment('verified', requirements.network);
  return { type: 'lane', payload, admission };
}

/** The handler failed: nothing is charged, the reservation is given up. */
export async function releaseLane(paid: LanePayment, attempt: PaymentAttempt | undefined, status: number, opts: LaneOptions): Promise<void> {
  await paid.admission.release();
  opts.metrics.payment('cancelled', paid.admission.requirements.network);
  if (attempt?.recordId) void opts.records.recordCancelled(attempt.recordId, `handler_failed: ${status}`);
}

/**
 * Commits the charge of an answered call: its settle response, `settled` (PAYMENT-RESPONSE carries it) or `refused`
 * (the charge could not be committed: nothing was charged). Throws when the channel's state could not be read or
 * written (the caller answers 503: send the same payment again).
 */
export async function commitLane(paid: LanePayment, attempt: PaymentAttempt | undefined, opts: LaneOptions): Promise<{ settled: SettleResponse } | { refused: SettleResponse }> {
  const { requirements } = paid.admission;
  const result = await paid.admission.commit();
  const id = attempt?.recordId;
  if (!result.success) {
    if (attempt) attempt.settlement = 'refused';
    opts.metrics.payment('settle_failed', requirements.network);
    if (id) void opts.records.recordSettleFailed(id, { errorReason: result.errorReason ?? 'settlement failed' });
    return { refused: result };
  }
  if (attempt) attempt.settlement = 'settled';
  opts.metrics.payment('settled', requirements.network);
  if (id) void opts.records.recordSettled(id, { txHash: result.transaction || null, settledAmount: chargedAmount({ result, requirements }, opts.schemes), payer: address(result.payer), answered: true });
  return { settled: result };
}
