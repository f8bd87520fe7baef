// What settling payments costs, from the ledger: per scheme and network, the calls paid, the on-chain settlements
// the facilitator submitted for them, its fees at the rate the operator states, and the revenue net of those fees
// (`npm run payments -- summary`, /metrics). A settlement is one transaction the facilitator submits and charges
// for: an `exact` payment settled (its `payments` row has a transaction), and for batch-settlement a deposit, a
// claim, a settlement of claimed funds or a refund (`x402_batch_events` with a transaction; a voucher's call has
// none). The fee applies past the first `freePerMonth` settlements of each calendar month (UTC), counted across
// schemes and networks in the order they happened (Coinbase CDP: 1,000 free, then $0.001 each).
import type { Queryable } from './database.ts';

/** The facilitator's price, as the operator states it (X402_FACILITATOR_FEE_USD, X402_FACILITATOR_FREE_PER_MONTH). */
export interface SettlingFees {
  /** Dollars per settlement past the free ones, as written (`0.001`). */
  feeUsd: string;
  freePerMonth: number;
}

export interface SettlingCostRow {
  scheme: string;
  /** CAIP-2. */
  network: string;
  /** Calls paid and served (settled rows: an exact payment, or a batch-settlement voucher's charge). */
  paid_calls: number;
  /** On-chain transactions the facilitator submitted. */
  settlements: number;
  /** Of those, how many fell within their month's free ones. */
  free_settlements: number;
  /** Dollars. */
  facilitator_fees_usd: string;
  /** What the paid calls brought, in dollars (the token taken as a USD stablecoin); null when its decimals are unknown. */
  revenue_usd: string | null;
  /** Revenue less the facilitator's fees; null with revenue. */
  net_usd: string | null;
}

export interface CostPeriod {
  since?: Date;
  until?: Date;
}

const ATTO = 18;

/**
 * The costs of the period, per scheme and network. `decimalsOf`: the decimals of a token the ledger names
 * (undefined when unknown: its revenue is then null).
 */
export async function settlingCosts(db: Queryable, period: CostPeriod, fees: SettlingFees, decimalsOf: (asset: string) => number | undefined): Promise<SettlingCostRow[]> {
  const since = period.since ?? null;
  const until = period.until ?? null;
  const calls = await db.query<{ scheme: string; network: string; asset: string; paid_calls: number; revenue: string }>(
    `SELECT scheme, network, asset, count(*)::integer AS paid_calls, coalesce(sum(settled_amount), 0)::text AS revenue
     FROM payments
     WHERE status = 'settled' AND ($1::timestamptz IS NULL OR verified_at >= $1) AND ($2::timestamptz IS NULL OR verified_at < $2)
     GROUP BY scheme, network, asset`,
    [since, until],
  );
  // Every settlement from the first month of the period on, numbered within its month: the free ones come first.
  const settled = await db.query<{ scheme: string; network: string; settlements: number; free_settlements: number }>(
    `WITH s AS (
       SELECT scheme, network, coalesce(finished_at, verified_at) AS at FROM payments
       WHERE scheme <> 'batch-settlement' AND status = 'settled' AND coalesce(tx_hash, '') <> ''
         AND ($1::timestamptz IS NULL OR coalesce(finished_at, verified_at) >= date_trunc('month', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
       UNION ALL
       SELECT 'batch-settlement', network, at FROM x402_batch_events
       WHERE type IN ('deposit', 'claim', 'settle', 'refund') AND coalesce(tx_hash, '') <> ''
         AND ($1::timestamptz IS NULL OR at >= date_trunc('month', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
     ), numbered AS (
       SELECT scheme, network, at, row_number() OVER (PARTITION BY date_trunc('month', at AT TIME ZONE 'UTC') ORDER BY at) AS n FROM s
     )
     SELECT scheme, network, count(*)::integer AS settlements, count(*) FILTER (WHERE n <= $3)::integer AS free_settlements
     FROM numbered WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::timestamptz IS NULL OR at < $2)
     GROUP BY scheme, network`,
    [since, until, fees.freePerMonth],
  );
  const fee = toAtto(fees.feeUsd, 0);
  const rows = new Map<string, { scheme: string; network: string; paid_calls: number; settlements: number; free_settlements: number; revenue: bigint | null }>();
  const row = (scheme: string, network: string) => {
    const key = `${scheme} ${network}`;
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { scheme, network, paid_calls: 0, settlements: 0, free_settlements: 0, revenue: 0n }));
    return r;
  };
  for (const c of calls) {
    const r = row(c.scheme, c.network);
    r.paid_calls += c.paid_calls;
    const decimals = decimalsOf(c.asset);
    r.revenue = r.revenue === null || decimals === undefined ? null : r.revenue + toAtto(c.revenue, decimals);
  }
  for (const s of settled) Object.assign(row(s.scheme, s.network), { settlements: s.settlements, free_settlements: s.free_settlements });
  return [...rows.values()]
    .sort((a, b) => (a.scheme === b.scheme ? (a.network < b.network ? -1 : 1) : a.scheme < b.scheme ? 1 : -1))
    .map((r) => {
      const fees = BigInt(r.settlements - r.free_settlements) * fee;
      return {
        scheme: r.scheme,
        network: r.network,
        paid_calls: r.paid_calls,
        settlements: r.settlements,
        free_settlements: r.free_settlements,
        facilitator_fees_usd: fromAtto(fees),
        revenue_usd: r.revenue === null ? null : fromAtto(r.revenue),
        net_usd: r.revenue === null ? null : fromAtto(r.revenue - fees),
      };
    });
}

/** `amount` atomic units of a `decimals` token (or dollars as written, decimals 0 with a point) in 10^-18 dollars. */
function toAtto(amount: string, decimals: number): bigint {
  const [whole = '0', fraction = ''] = amount.split('.');
  const digits = `${whole}${fraction.padEnd(ATTO, '0').slice(0, ATTO)}`;
  const scaled = BigInt(digits); // amount × 10^18
  return decimals === 0 ? scaled : scaled / 10n ** BigInt(decimals);
}

/** 10^-18 dollars as a decimal string (`0.0042`, `-1.5`, `0`). */
export function fromAtto(atto: bigint): string {
  const negative = atto < 0n;
  const digits = (negative ? -atto : atto).toString().padStart(ATTO + 1, '0');
  const whole = digits.slice(0, -ATTO);
  const fraction = digits.slice(-ATTO).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
