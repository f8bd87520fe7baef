// The `payments` table's rows and what is written to them: one row per x402 payment attempt that reached the
// facilitator, its status, the outcome that ends it, the row as read back, and the summary of many.

export const PAYMENT_STATUSES = ['verified', 'settled', 'settle_failed', 'cancelled', 'unknown'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** What the gate knows once the facilitator has verified a payment, before the handler runs. */
export interface VerifiedPayment {
  /** The HTTP request's id (x-request-id). */
  requestId: string;
  /** The route as declared, e.g. `/v1/price`. */
  route: string;
  /** The x402 resource URL the payment was for. */
  resourceUrl: string;
  scheme: string;
  /** CAIP-2, e.g. `eip155:8453`. */
  network: string;
  /** Token contract address. */
  asset: string;
  /** Amount required, in the token's atomic units (a decimal string: 1000 = $0.001 of USDC). */
  amountRequired: string;
  payTo: string;
  /** The payer's address, as the facilitator's verification names it. */
  payer: string | null;
  /** SHA-256 (hex) of the payment payload as received. */
  payloadHash: string;
  /** The x402 payment-identifier extension's id, when the client sent one. */
  paymentIdentifier?: string | null;
  /** EIP-3009 authorization nonce and validBefore, for reconciling an `unknown` on chain. */
  authorizationNonce?: string | null;
  validBefore?: Date | null;
  /** Which facilitator verified it (`coinbase-cdp` or its URL). */
  facilitator: string;
}

/**
 * How an attempt ended. `chain`: what the chain said, when it was asked. `answered`: the paid answer went out
 * with this settlement. `strict`: a settlement the database refuses as a second one of its authorization is an
 * error (an operator's resolution), not a row marked duplicate.
 */
export type PaymentOutcome =
  | { status: 'settled'; txHash: string | null; settledAmount: string; payer?: string | null; answered?: boolean; chain?: string; strict?: boolean }
  | { status: 'settle_failed'; errorReason: string; txHash?: string | null; chain?: string }
  | { status: 'cancelled'; reason: string; chain?: string }
  | { status: 'unknown'; errorReason: string; txHash?: string | null; chain?: string };

/** A ledger row as the CLI and the admin channel show it (times as ISO-8601 strings). */
export interface PaymentRecord {
  id: string;
  request_id: string;
  route: string;
  resource_url: string;
  scheme: string;
  network: string;
  asset: string;
  amount_required: string;
  pay_to: string;
  payer: string | null;
  payload_hash: string;
  payment_identifier: string | null;
  authorization_nonce: string | null;
  valid_before: string | null;
  status: PaymentStatus;
  tx_hash: string | null;
  settled_amount: string | null;
  facilitator: string;
  error_reason: string | null;
  verified_at: string;
  updated_at: string;
  finished_at: string | null;
  /** When the paid answer went out (a retry of the same payment is then never answered again). */
  answered_at: string | null;
  /** When the chain was last asked about the authorization, and what it said. */
  chain_checked_at: string | null;
  chain_state: string | null;
}

/** One line of the summary: attempts and amounts per UTC day, route, status and asset. */
export interface PaymentSummaryRow {
  day: string;
  route: string;
  status: PaymentStatus;
  asset: string;
  count: number;
  /** Sum of the amounts required, atomic units. */
  amount_required: string;
  /** Sum of the amounts settled, atomic units. */
  amount_settled: string;
}

export interface PaymentFilter {
  since?: Date;
  until?: Date;
  status?: PaymentStatus;
  /** Newest first; default 100. */
  limit?: number;
}

/** How the final-status writes of the payment records are doing (the admin channel and /metrics show it). */
export interface FinalWriteStats {
  /** Final-status writes that failed (each failed attempt counts). */
  final_write_failures: number;
  /** Final statuses waiting for a retry right now. */
  final_writes_pending: number;
  /** Final statuses given up on (logged in full at error level, to be recorded by hand). */
  final_writes_lost: number;
}

/** The columns of a row as read back (amounts as text: they exceed a JavaScript number). */
export const RECORD_COLUMNS = `id, request_id, route, resource_url, scheme, network, asset, amount_required::text AS amount_required, pay_to, payer,
  payload_hash, payment_identifier, authorization_nonce, valid_before, status, tx_hash, settled_amount::text AS settled_amount, facilitator,
  error_reason, verified_at, updated_at, finished_at, answered_at, chain_checked_at, chain_state`;

type TimeColumns = 'valid_before' | 'verified_at' | 'updated_at' | 'finished_at' | 'answered_at' | 'chain_checked_at';
/** A row as the driver gives it (times as Dates). */
export type RawRecord = Omit<PaymentRecord, TimeColumns> & { [K in TimeColumns]: Date | null };

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** A row as the CLI and the admin channel show it (times as ISO-8601 strings). */
export function record(r: RawRecord): PaymentRecord {
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
