// The payments module's one entry. installPayments gives an app its payment stores — the payment records
// (one row per payment attempt), the batch-settlement events, the payment identifiers (in the ledger database,
// with Redis, when there is one, in front of the answers) — and, when x402 is on (X402_ENABLED and X402_PAY_TO),
// the gate over the paid routes (x402.ts: the x402 SDK and viem load only then). The records exist either way:
// the operators' CLIs and /metrics read them. Everything payments keep is written through src/db/.
import type { FastifyInstance } from 'fastify';
import type { PaymentGate } from '../access/access-control.ts';
import { BatchEventRecords } from '../db/batch-events.ts';
import { SqlPaymentIdStore, type PaymentIdStore } from '../db/payment-ids.ts';
import { PaymentRecords } from '../db/payments.ts';
import { CachedPaymentIdStore } from '../redis/payment-ids.ts';
import type { BatchSettlement } from './schemes/batch-settlement/batch-settlement.ts';
import type { PaymentsOptions, PaymentStores } from './options.ts';
import type { PaymentReconciler } from './core/reconciler.ts';
import type { PublishedTerms } from './core/published-terms.ts';

export interface Payments extends PaymentStores {
  /** The gate over the paid routes; undefined while x402 is off (paid routes then take an API key alone). */
  gate: PaymentGate | undefined;
  /** Every paid route's x402 terms as its 402 states them, for /openapi.json; undefined while x402 is off. */
  terms: PublishedTerms | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** x402 batch settlement when X402_BATCH_SETTLEMENT is on (its claim-and-settle schedule, for operators and tests). */
    x402Batch: BatchSettlement | undefined;
    /** x402's reconciliation of unfinished payment records from the chain (started by startStorage; X402_RPC_URL). */
    x402Reconciler: PaymentReconciler | undefined;
  }
}

export async function installPayments(app: FastifyInstance, opts: PaymentsOptions): Promise<Payments> {
  const stores = paymentStores(app, opts);
  opts.metrics.paymentRecordWrites(() => stores.records.stats());
  app.decorate('x402Batch', undefined);
  app.decorate('x402Reconciler', undefined);
  const x402 = opts.settings;
  if (!x402.active) {
    app.log.info(
      x402.enabled
        ? 'x402 payments are off: set X402_PAY_TO (the address that receives USDC) and X402_FACILITATOR to enable them; paid routes need an API key meanwhile'
        : 'x402 payments are disabled (X402_ENABLED=false); paid routes need an API key',
    );
    return { ...stores, gate: undefined, terms: undefined };
  }
  const { installX402 } = await import('./x402.ts');
  const gate = await installX402(app, opts, stores);
  return { ...stores, gate, terms: gate.terms };
}

/** The payment stores over the ledger database; their pending writes get a last try when the app closes. */
function paymentStores(app: FastifyInstance, opts: PaymentsOptions): PaymentStores {
  const records = new PaymentRecords(opts.db, { log: app.log });
  const batchEvents = new BatchEventRecords(opts.db, app.log);
  // Payment identifiers and their stored answers: in the ledger database (durable, shared by the instances on
  // DATABASE_URL), with Redis, when there is one, in front of the answers.
  const sqlPaymentIds = new SqlPaymentIdStore(opts.db);
  const paymentIds: PaymentIdStore = opts.redis ? new CachedPaymentIdStore(opts.redis.client, sqlPaymentIds, opts.redis.health) : sqlPaymentIds;
  app.addHook('onClose', async () => {
    await records.close();
    await batchEvents.close();
  });
  return { records, batchEvents, paymentIds };
}
