// Reading the payments ledger, and the writes that are not one attempt's own outcome: an operator's
// resolution (`npm run payments -- resolve`), what the chain said about a row (src/payments/reconciler.ts),
// and the claim of a payment's answer by a retry (src/payments/resume.ts).
import { AppError } from '../lib/errors.ts';
import { escapeControl } from '../lib/control-chars.ts';
import type { Database, Queryable } from './database.ts';
import { isUniqueViolation, writeOutcome } from './payment-outcome.ts';
import type { PaymentFilter, PaymentOutcome, PaymentRecord, PaymentStatus, PaymentSummaryRow } from './payments.ts';

const RECORD_COLUMNS = `id, request_id, route, resource_url, scheme, network, asset, amount_required::text AS amount_required, pay_to, payer,
  payload_hash, payment_identifier, authorization_nonce, valid_before, status, tx_hash, settled_amount::text AS settled_amount, facilitator,
  error_reason, verified_at, updated_at, finished_at, answered_at, chain_checked_at, chain_state`;

type TimeColumns = 'valid_before' | 'verified_at' | 'updated_at' | 'finished_at' | 'answered_at' | 'chain_checked_at';
type RawRecord = Omit<PaymentRecord, TimeColumns> & { [K in TimeColumns]: Date | null };

const iso = (d: Date | null) => d?.toISOString() ?? null;

function record(r: RawRecord): PaymentRecord {
  return {
    ...r,
    valid_before: iso(r.valid_before),
    verified_at: r.verified_at!.toISOString(),
    updated_at: r.updated_at!.toISOString(),
    finished_at: iso(r.finished_at),
    answered_at: iso(r.answered_at),
    chain_checked_at: iso(r.chain_checked_at),
  };
}

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
