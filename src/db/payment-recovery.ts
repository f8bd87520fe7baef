// What the payments module reads and writes of a row besides its outcome, to find out what became of a payment:
// the rows the chain may decide (src/payments/core/reconciler.ts) and what the chain said about one it could not
// decide yet; the row of a payment whose answer never went out, and the claim of that answer by its retry
// (src/payments/core/resume.ts).
import { escapeControl } from '../lib/control-chars.ts';
import type { Queryable } from './database.ts';
import { record, RECORD_COLUMNS, type PaymentRecord, type RawRecord } from './payment-rows.ts';

/**
 * Rows whose outcome the chain may tell (an `exact` EIP-3009 authorization on `network`, left `verified` or
 * `unknown`), oldest first; each at most once per `recheckMs` (when the chain last said it could not tell yet).
 */
export async function unfinishedPayments(db: Queryable, network: string, now: Date, recheckMs: number, limit: number): Promise<PaymentRecord[]> {
  const rows = await db.query<RawRecord>(
    `SELECT ${RECORD_COLUMNS} FROM payments
     WHERE status IN ('verified', 'unknown') AND scheme = 'exact' AND network = $1 AND payer IS NOT NULL
       AND authorization_nonce IS NOT NULL AND valid_before IS NOT NULL AND (chain_checked_at IS NULL OR chain_checked_at <= $2)
     ORDER BY verified_at, id LIMIT $3`,
    [network, new Date(now.getTime() - recheckMs), limit],
  );
  return rows.map(record);
}

/**
 * The row of a payment (by its payload's hash) whose answer has not gone out, when no row of the same
 * authorization has answered it either: what a retry of that very payment may be answered from.
 */
export async function unansweredPayment(db: Queryable, payloadHash: string): Promise<PaymentRecord | undefined> {
  const [row] = await db.query<RawRecord>(
    `SELECT ${RECORD_COLUMNS} FROM payments p
     WHERE payload_hash = $1 AND scheme = 'exact' AND status IN ('verified', 'unknown', 'settled') AND answered_at IS NULL
       AND payer IS NOT NULL AND authorization_nonce IS NOT NULL AND NOT EXISTS (
         SELECT 1 FROM payments q WHERE q.network = p.network AND q.payer = p.payer AND q.authorization_nonce = p.authorization_nonce
           AND q.answered_at IS NOT NULL)
     ORDER BY (status = 'settled') DESC, verified_at DESC LIMIT 1`,
    [payloadHash],
  );
  return row && record(row);
}

/** Marks a settled payment's answer as gone out, unless it (or another row of its authorization) already has; true when this call did. */
export async function claimAnswer(db: Queryable, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE payments p SET answered_at = $2 WHERE id = $1 AND answered_at IS NULL AND NOT EXISTS (
       SELECT 1 FROM payments q WHERE q.id <> p.id AND q.network = p.network AND q.payer = p.payer
         AND q.authorization_nonce = p.authorization_nonce AND q.answered_at IS NOT NULL) RETURNING id`,
    [id, now],
  );
  return rows.length > 0;
}

/** What the chain said about a row it could not decide yet (the authorization unused and still valid, or the node unreachable). */
export async function noteChainState(db: Queryable, id: string, state: string, now: Date): Promise<void> {
  await db.query('UPDATE payments SET chain_checked_at = $2, chain_state = $3 WHERE id = $1', [id, now, escapeControl(state)]);
}
