// The payments part of the admin channel: what `npm run payments` asks a running server for.
//   GET  /payments?since&until&status&limit   payment records, newest first
//   GET  /payments/summary?since&until        count and amounts by UTC day, route, status, asset; what settling cost
//                                             per scheme and network; the records' write health
//   POST /payments/resolve {id, status, ...}   reconciliation of an `unknown` attempt
//   GET  /payments/batch-events?since&limit     batch settlement's deposits, charges, claims, settlements, refunds
import { z } from 'zod';
import type { BatchEventRecords } from '../db/batch-events.ts';
import { PAYMENT_STATUSES } from '../db/payment-rows.ts';
import { listPayments, resolvePayment, summarizePayments } from '../db/payment-reports.ts';
import { settlingCosts, type SettlingFees } from '../db/settling-costs.ts';
import type { PaymentRecords } from '../db/payments.ts';
import type { DatabaseService } from '../db/service.ts';
import { parseAdminInput, type AdminChannel } from './channel.ts';
import { adminDbTimeout } from './deadline.ts';

const isoTime = z.iso.datetime({ offset: true }).transform((v) => new Date(v));

export const listQuery = z.object({
  since: isoTime.optional(),
  until: isoTime.optional(),
  status: z.enum(PAYMENT_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(100_000).default(100),
});

export const resolveBody = z.discriminatedUnion('status', [
  z.object({ id: z.string().min(1), status: z.literal('settled'), txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x transaction hash'), settledAmount: z.string().regex(/^\d+$/).optional() }),
  z.object({ id: z.string().min(1), status: z.literal('settle_failed'), errorReason: z.string().min(1), txHash: z.string().optional() }),
  z.object({ id: z.string().min(1), status: z.literal('cancelled'), reason: z.string().min(1) }),
]);

/** The facilitator's price and the ledger's tokens' decimals, as the server's settings give them. */
export interface SettlingCostTerms {
  fees: SettlingFees;
  decimalsOf: (asset: string) => number | undefined;
}

export function registerPaymentAdminRoutes(admin: AdminChannel, deps: { records: PaymentRecords; batchEvents: BatchEventRecords; db: DatabaseService; costs: SettlingCostTerms }): void {
  // An operator's command waits longer for the database than a request does (deadline.ts).
  const deadline = adminDbTimeout(deps.db.timeoutMs);
  admin.route('GET', '/payments/batch-events', async ({ query }) => {
    const { since, limit } = parseAdminInput(listQuery, Object.fromEntries(query));
    return deps.batchEvents.list(since, limit);
  });
  admin.route('GET', '/payments', async ({ query }) => {
    const filter = parseAdminInput(listQuery, Object.fromEntries(query));
    return deps.db.use((db) => listPayments(db, filter), deadline);
  });
  admin.route('GET', '/payments/summary', async ({ query }) => {
    const { since, until } = parseAdminInput(listQuery, Object.fromEntries(query));
    const [rows, costs] = await deps.db.use((db) => Promise.all([summarizePayments(db, { since, until }), settlingCosts(db, { since, until }, deps.costs.fees, deps.costs.decimalsOf)]), deadline);
    return { rows, costs, fees: deps.costs.fees, ledger: deps.records.stats() };
  });
  admin.route('POST', '/payments/resolve', async ({ body }) => {
    const { id, ...resolution } = parseAdminInput(resolveBody, body);
    return deps.db.use((db) => resolvePayment(db, id, resolution), deadline);
  });
}
