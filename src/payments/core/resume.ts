// A retry of a payment whose first attempt never answered: the server crashed or restarted mid-settle, the
// facilitator's connection dropped, nobody heard the outcome. The facilitator then refuses the payment (its
// nonce is used, or its authorization expired), and the chain says what became of it:
//
//   the transfer landed      → the call is answered (200 with the route's data) without settling again, once:
//                              the first attempt's row takes the answer (one retry answers it)
//   it never landed, and can no longer (validBefore passed) → 402 saying nothing was charged
//   the chain cannot tell    → 503 + Retry-After: resend the same payment later, never a new one
//
// Only the very payment the ledger recorded qualifies (same payload hash: with a payment identifier, the id is
// part of it), and only while neither its row nor another row of its authorization has been answered: a
// payment read off the chain and replayed by someone else finds an answered row, and gets the refusal.
import type { PaymentRecord } from '../../db/payment-rows.ts';
import type { PaymentRecords } from '../../db/payments.ts';
import type { PaymentAttempt } from './attempt.ts';
import { authorizationRef, CHAIN_GRACE_MS, type ChainVerdict } from './outcome.ts';
import type { PaymentSchemes } from './scheme.ts';
import { AUTHORIZATION_IN_USE } from './settle-outcome.ts';

export type Resumption =
  /** No unanswered payment of ours: the facilitator's refusal stands. */
  | { kind: 'none' }
  /** The transfer landed: answer the call without settling. */
  | { kind: 'landed'; recordId: string; txHash: string | null; payer: string }
  /** It never landed and never can: nothing was charged. */
  | { kind: 'not_landed'; state: string }
  /** The chain could not tell. */
  | { kind: 'unknown'; state: string };

export interface ResumeDeps {
  records: PaymentRecords;
  /** Where each network's outcomes are read (its scheme's OutcomeReader). */
  schemes: Pick<PaymentSchemes, 'outcomesOn'>;
  signal?: AbortSignal;
}


/** Looks for the payment's unanswered row, and asks the chain what became of it. Database failures are thrown (503). */
export async function resumePayment(attempt: PaymentAttempt, deps: ResumeDeps): Promise<Resumption> {
  const auth = attempt.authorization;
  if (!auth || !attempt.payloadHash || !attempt.verifyRefusal || !AUTHORIZATION_IN_USE.test(attempt.verifyRefusal)) return { kind: 'none' };
  const row = await deps.records.unanswered(attempt.payloadHash);
  // The answer it paid for is its route's: the same payment sent to another route is not its retry.
  if (!row?.payer || row.route !== attempt.entry.url) return { kind: 'none' };
  if (row.status === 'settled') return { kind: 'landed', recordId: row.id, txHash: row.tx_hash, payer: row.payer };
  const chain = deps.schemes.outcomesOn(row.network);
  if (!chain) return { kind: 'unknown', state: `no RPC URL for ${row.network}: the chain cannot be asked` };
  const ref = authorizationRef({ asset: row.asset, payTo: row.pay_to, amount: row.amount_required }, auth, Date.parse(row.verified_at));
  // An authorization in its last seconds (the facilitator's "expired") may still land: wait until the chain is sure.
  const verdict = await chain.watch(ref, /valid_before/.test(attempt.verifyRefusal) ? auth.validBefore * 1000 + CHAIN_GRACE_MS : 0, deps.signal);
  return record(deps.records, row, verdict);
}

async function record(records: PaymentRecords, row: PaymentRecord, verdict: ChainVerdict): Promise<Resumption> {
  switch (verdict.kind) {
    case 'landed':
      await records.recordSettled(row.id, { txHash: verdict.txHash, settledAmount: row.amount_required, payer: row.payer, chain: verdict.state });
      return { kind: 'landed', recordId: row.id, txHash: verdict.txHash, payer: row.payer! };
    case 'not_landed':
    case 'used_elsewhere':
      await (row.status === 'unknown'
        ? records.recordSettleFailed(row.id, { errorReason: 'the transfer never landed: nothing was charged', chain: verdict.state })
        : records.recordCancelled(row.id, 'never settled: the authorization was not used in time; nothing was charged', verdict.state));
      return { kind: 'not_landed', state: verdict.state };
    case 'pending':
      // Refused by the facilitator for another reason while still usable: its refusal stands; the reconciler watches the row.
      await records.noteChain(row.id, verdict.state).catch(() => {});
      return { kind: 'none' };
    default:
      await records.noteChain(row.id, verdict.state).catch(() => {});
      return { kind: 'unknown', state: verdict.state };
  }
}
