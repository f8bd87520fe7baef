// What settling payments costs, on /metrics: per scheme and network, the paid calls, the on-chain settlements the
// facilitator submitted, its fees (X402_FACILITATOR_FEE_USD past X402_FACILITATOR_FREE_PER_MONTH), the revenue, and
// the revenue net of the fees. Read from the ledger (src/db/settling-costs.ts), all time, at most every
// REFRESH_MS (a scrape in between is answered from the last reading): every instance on one database reports the
// same totals, so aggregate them across instances with max, not sum.
import type { Registry } from 'prom-client';
import type { SettlingCostRow } from '../db/settling-costs.ts';

const REFRESH_MS = 30_000;

export type SettlingCostReader = () => Promise<SettlingCostRow[]>;

/** Registers the families; returns where to tell it how the ledger is read (until then, they have no series). */
export function settlingCostMetrics(prom: typeof import('prom-client'), prefix: string, registers: Registry[]): (read: SettlingCostReader) => void {
  let reader: SettlingCostReader | undefined;
  let last: { at: number; rows: Promise<SettlingCostRow[]> } | undefined;
  const rows = async (): Promise<SettlingCostRow[]> => {
    if (!reader) return [];
    if (!last || performance.now() - last.at > REFRESH_MS) {
      const reading = reader();
      last = { at: performance.now(), rows: reading };
      // A failed reading is not kept: the next scrape asks again (and this one shows nothing for these families).
      reading.catch(() => (last = undefined));
    }
    return last.rows.catch(() => []);
  };
  const family = (name: string, help: string, value: (r: SettlingCostRow) => number | null, type: 'Counter' | 'Gauge') => {
    const config = { name: `${prefix}${name}`, help, labelNames: ['scheme', 'network'] as const, registers };
    const fill = async (put: (labels: { scheme: string; network: string }, v: number) => void) => {
      for (const r of await rows()) {
        const v = value(r);
        if (v !== null) put({ scheme: r.scheme, network: r.network }, v);
      }
    };
    if (type === 'Counter') {
      new prom.Counter({
        ...config,
        async collect() {
          this.reset();
          await fill((labels, v) => this.inc(labels, v));
        },
      });
    } else {
      new prom.Gauge({
        ...config,
        async collect() {
          this.reset();
          await fill((labels, v) => this.set(labels, v));
        },
      });
    }
  };
  family('x402_paid_calls_total', 'Calls paid with x402 and served, by scheme and network (from the ledger: the same on every instance).', (r) => r.paid_calls, 'Counter');
  family(
    'x402_settlements_total',
    'On-chain transactions the facilitator submitted, by scheme and network: exact payments; batch-settlement deposits, claims, settlements and refunds (from the ledger).',
    (r) => r.settlements,
    'Counter',
  );
  family(
    'x402_facilitator_fees_usd_total',
    "The facilitator's fees for those settlements, in dollars, at X402_FACILITATOR_FEE_USD past the X402_FACILITATOR_FREE_PER_MONTH free ones of each UTC month (from the ledger).",
    (r) => Number(r.facilitator_fees_usd),
    'Counter',
  );
  family('x402_revenue_usd_total', 'What the paid calls brought, in dollars (from the ledger).', (r) => (r.revenue_usd === null ? null : Number(r.revenue_usd)), 'Counter');
  family('x402_net_revenue_usd', "Revenue less the facilitator's fees, in dollars (from the ledger).", (r) => (r.net_usd === null ? null : Number(r.net_usd)), 'Gauge');
  return (read) => {
    reader = read;
    last = undefined;
  };
}
