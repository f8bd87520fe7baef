// How a payment's row moves to its final status (SQL only; PaymentRecords in payments.ts retries these writes).
//
// One EIP-3009 authorization moves money once, and the ledger counts it once: the database holds one
// `settled` row per (network, payer, authorization nonce) (migration 7's unique index). A second row for the
// same authorization (a crash between verify and settle, then the same authorization verified again under a
// new row) that is about to be written `settled` becomes `cancelled` instead, its reason naming the row that
// holds the settlement.
import { escapeControl, escapeControlOrNull } from '../lib/control-chars.ts';
import type { Queryable } from './database.ts';
import type { PaymentOutcome, PaymentStatus } from './payment-rows.ts';

/** From which statuses each outcome may be written. */
export const ALLOWED_FROM: Record<PaymentOutcome['status'], readonly PaymentStatus[]> = {
  settled: ['verified', 'unknown'],
  settle_failed: ['verified', 'unknown'],
  cancelled: ['verified', 'unknown'],
  unknown: ['verified'],
};

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';

export const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === UNIQUE_VIOLATION;

/**
 * Moves a row to its final status when its current status allows; true when a row changed. A `settled`
 * outcome that the paid answer went out with (`answered`) also marks a row that is already settled (the
 * chain was read before the facilitator's answer was recorded) as answered.
 */
export async function writeOutcome(db: Queryable, id: string, o: PaymentOutcome, now: Date): Promise<boolean> {
  try {
    return await update(db, id, o, now);
  } catch (err) {
    if (o.status !== 'settled' || o.strict || !isUniqueViolation(err)) throw err;
    return markDuplicate(db, id, o, now);
  }
}

async function update(db: Queryable, id: string, o: PaymentOutcome, now: Date): Promise<boolean> {
  const txHash = 'txHash' in o ? (o.txHash ?? null) : null;
  const settledAmount = o.status === 'settled' ? o.settledAmount : null;
  const payer = o.status === 'settled' ? (o.payer ?? null) : null;
  const reason = o.status === 'cancelled' ? o.reason : o.status === 'settled' ? null : o.errorReason;
  const answered = o.status === 'settled' && o.answered === true;
  const from = ALLOWED_FROM[o.status].map((s) => `'${s}'`).join(', ');
  const rows = await db.query(
    `UPDATE payments SET status = $2, tx_hash = coalesce($3, tx_hash), settled_amount = $4, payer = coalesce($5, payer),
       error_reason = $6, updated_at = $7, finished_at = CASE WHEN $2 = 'unknown' THEN NULL ELSE coalesce(finished_at, $7) END,
       answered_at = CASE WHEN $8 THEN coalesce(answered_at, $7) ELSE answered_at END,
       chain_checked_at = CASE WHEN $9::text IS NULL THEN chain_checked_at ELSE $7 END, chain_state = coalesce($9, chain_state)
     WHERE id = $1 AND (status IN (${from}) OR ($2 = 'settled' AND status = 'settled' AND $8 AND answered_at IS NULL)) RETURNING id`,
    [id, o.status, txHash, settledAmount, payer, escapeControlOrNull(reason), now, answered, escapeControlOrNull(o.chain)],
  );
  return rows.length > 0;
}

/** The authorization is already settled on another row: this one is cancelled, naming it. */
async function markDuplicate(db: Queryable, id: string, o: Extract<PaymentOutcome, { status: 'settled' }>, now: Date): Promise<boolean> {
  const [holder] = await db.query<{ id: string; tx_hash: string | null }>(
    `SELECT q.id, q.tx_hash FROM payments p JOIN payments q ON q.network = p.network AND q.payer = coalesce($2, p.payer)
       AND q.authorization_nonce = p.authorization_nonce AND q.status = 'settled' AND q.id <> p.id
     WHERE p.id = $1 LIMIT 1`,
    [id, o.payer ?? null],
  );
  const tx = holder?.tx_hash ?? o.txHash;
  const reason = `duplicate: this authorization is settled on payment ${holder?.id ?? '(another row)'}${tx ? ` (tx ${tx})` : ''}; one transfer, counted once`;
  const rows = await db.query(
    `UPDATE payments SET status = 'cancelled', settled_amount = NULL, payer = coalesce($2, payer), error_reason = $3, updated_at = $4,
       finished_at = coalesce(finished_at, $4), answered_at = CASE WHEN $5 THEN coalesce(answered_at, $4) ELSE answered_at END,
       chain_checked_at = CASE WHEN $6::text IS NULL THEN chain_checked_at ELSE $4 END, chain_state = coalesce($6, chain_state)
     WHERE id = $1 AND status IN ('verified', 'unknown') RETURNING id`,
    [id, o.payer ?? null, escapeControl(reason), now, o.answered === true, escapeControlOrNull(o.chain)],
  );
  return rows.length > 0;
}
