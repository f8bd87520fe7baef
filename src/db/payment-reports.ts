// The operator's reports of the payment records: the rows (`npm run payments -- list`), their summary by day,
// route and status (`summary`), and the resolution by hand of an attempt whose outcome was not known (`resolve`).
import { AppError } from '../lib/errors.ts';
import { escapeControl } from '../lib/control-chars.ts';
import type { Database, Queryable } from './database.ts';
import { isUniqueViolation, writeOutcome } from './payment-outcome.ts';
import { record, RECORD_COLUMNS, type PaymentFilter, type PaymentOutcome, type PaymentRecord, type PaymentStatus, type PaymentSummaryRow, type RawRecord } from './payment-rows.ts';

export async function listPayments(db: Queryable, f: PaymentFilter): Promise<PaymentRecord[]> {
  const rows = await db.query<RawRecord>(
    `SELECT ${RECORD_COLUMNS} FROM payments
     WHERE ($1::timestamptz IS NULL OR verified_at >= $1) AND ($2::timestamptz IS NULL OR verified_at < $2) AND ($3::text IS NULL OR status = $3)
     ORDER BY verified_at DESC, id LIMIT $4`,
    [f.since ?? null, f.until ?? null, f.status ?? null, f.limit ?? 100],
  );
  return rows.map(record);
}

export async function summarizePayments(db: Queryable, f: Pick<PaymentFilter, 'since' | 'until'>): Promise<PaymentSummaryRow[]> {
  return db.query<PaymentSummaryRow>(
    `SELECT to_char(verified_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, route, status, asset, count(*)::integer AS count,
       sum(amount_required)::text AS amount_required, coalesce(sum(settled_amount), 0)::text AS amount_settled
     FROM payments
     WHERE ($1::timestamptz IS NULL OR verified_at >= $1) AND ($2::timestamptz IS NULL OR verified_at < $2)
     GROUP BY 1, route, status, asset ORDER BY 1 DESC, route, status, asset`,
    [f.since ?? null, f.until ?? null],
  );
}

/** An operator's verdict on an attempt whose outcome was not known. */
export type Resolution =
  | { status: 'settled'; txHash: string; settledAmount?: string }
  | Extract<PaymentOutcome, { status: 'settle_failed' }>
  | Extract<PaymentOutcome, { status: 'cancelled' }>;

/**
 * Reconciliation by hand (`npm run payments -- resolve`): gives an `unknown` attempt (or a `verified`
 * one left behind by a process that stopped mid-call) its final status. A settled resolution without
 * an amount takes the amount required. Throws a 404 for an unknown id, a 409 for a final row, and a 409
 * for a transfer already counted: a transaction recorded on another row, or an authorization already
 * settled on another row.
 */
export async function resolvePayment(db: Database, id: string, r: Resolution, now = new Date()): Promise<{ id: string; previous: PaymentStatus; status: PaymentStatus }> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ status: PaymentStatus; amount_required: string }>('SELECT status, amount_required::text AS amount_required FROM payments WHERE id = $1 FOR UPDATE', [id]);
    if (!row) throw new AppError(404, `no payment ${id} in the ledger`);
    if (row.status !== 'unknown' && row.status !== 'verified') throw new AppError(409, `payment ${id} is already ${row.status}`);
    const txHash = 'txHash' in r ? r.txHash : undefined;
    if (txHash) {
      const [other] = await tx.query<{ id: string; status: PaymentStatus }>('SELECT id, status FROM payments WHERE lower(tx_hash) = lower($1) AND id <> $2 LIMIT 1', [txHash, id]);
      if (other) throw new AppError(409, `transaction ${escapeControl(txHash)} is already recorded on payment ${other.id} (${other.status}): one transfer is counted once`);
    }
    const outcome: PaymentOutcome = r.status === 'settled' ? { ...r, settledAmount: r.settledAmount ?? row.amount_required } : r;
    try {
      // Not writeOutcome's duplicate handling: an operator is told, not overruled.
      await writeOutcome(tx, id, outcome.status === 'settled' ? { ...outcome, strict: true } : outcome, now);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw new AppError(409, `payment ${id}'s authorization is already settled on another payment: one transfer is counted once`);
    }
    return { id, previous: row.status, status: r.status };
  });
}
