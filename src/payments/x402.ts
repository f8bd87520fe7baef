// x402 on one app, when it is on (loaded only then: the SDK is not loaded otherwise): the facilitator, batch
// settlement when asked for, the payment network's chain (outcomes the facilitator does not tell) with the
// ledger's reconciliation from it, and the gate over the paid routes.
import type { FacilitatorClient } from '@x402/core/server';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { FastifyInstance } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import type { Config } from '../config.ts';
import type { PaymentMetrics } from '../metrics/metrics.ts';
import type { PaymentGate } from '../access/access-control.ts';
import type { BatchLedger } from './batch/batch-events.ts';
import type { BatchSettlement } from './batch/batch-settlement.ts';
import { AuthorizationChain } from './chain.ts';
import { createFacilitatorClient } from './facilitator.ts';
import { facilitatorName } from './facilitator-name.ts';
import { createPaymentGate } from './fastify.ts';
import { PaymentReconciler } from './reconciler.ts';

export interface InstallOptions {
  config: Config;
  paidRoutes: () => CatalogEntry[];
  metrics: PaymentMetrics;
  channelStorage?: ChannelStorage;
  batchLedger?: BatchLedger;
}

export async function installX402(app: FastifyInstance, opts: InstallOptions): Promise<PaymentGate> {
  const { config } = opts;
  const x402 = config.x402;
  const facilitator = await createFacilitatorClient(x402);
  const batch = x402.batch.enabled ? await batchSettlement(app, x402, facilitator, opts) : undefined;
  // Waits for the chain end when the server closes (a row left `unknown` is reconciled at the next start).
  const closing = new AbortController();
  app.addHook('onClose', async () => closing.abort());
  const chain = x402.rpcUrl ? new AuthorizationChain({ rpcUrl: x402.rpcUrl, network: x402.network, timeoutMs: x402.facilitatorTimeoutMs }) : undefined;
  if (chain) {
    const reconciler = new PaymentReconciler({
      ledger: app.services.payments,
      chain,
      network: x402.network,
      intervalMs: x402.reconcileIntervalS * 1000,
      log: app.log,
      ready: () => app.services.db.ready(),
    });
    app.x402Reconciler = reconciler;
    app.addHook('onClose', async () => reconciler.stop());
  } else {
    app.log.warn(
      { network: x402.network },
      'x402: no X402_RPC_URL for this network: a settlement the facilitator does not answer is recorded unknown (npm run payments -- resolve), not read from the chain',
    );
  }
  const gate = createPaymentGate({
    x402,
    facilitator,
    facilitatorName: facilitatorName(x402),
    paidRoutes: opts.paidRoutes,
    publicBaseUrl: config.publicBaseUrl,
    log: app.log,
    ledger: app.services.payments,
    paymentIds: app.services.paymentIds,
    database: app.services.backends.database,
    metrics: opts.metrics,
    // A payment without an authorization deadline: verify and settle within their timeouts, the handler within two upstream deadlines.
    paidCallMs: x402.facilitatorTimeoutMs + x402.settleTimeoutMs + 2 * config.upstream.deadlineMs,
    batch,
    prefetch: x402.prefetch,
    chain,
    signal: closing.signal,
  });
  // Once routes exist: build the payment table (an invalid Bazaar declaration stops start-up), then ask the
  // facilitator what it supports (a failure there is retried on the first paid call).
  app.addHook('onReady', async () => {
    gate.prepare();
    gate.initialize().catch((err) => app.log.warn({ err: String(err?.message ?? err) }, 'x402 facilitator not reachable yet'));
  });
  return gate;
}

/** x402 batch settlement: channels in the ledger database, claimed and settled on a schedule stopped on close. */
async function batchSettlement(app: FastifyInstance, x402: Config['x402'], facilitator: FacilitatorClient, opts: InstallOptions): Promise<BatchSettlement> {
  const [{ createBatchSettlement }, { toLedgerRow }] = await Promise.all([import('./batch/batch-settlement.ts'), import('./batch/batch-events.ts')]);
  const storage = await channelStorage(app, opts);
  const events = app.services.batchEvents;
  const ledger: BatchLedger = opts.batchLedger ?? { record: (event) => events.record(toLedgerRow(event)) };
  const batch = createBatchSettlement({ x402, facilitator, storage, ledger, log: app.log });
  app.x402Batch = batch;
  app.addHook('onReady', async () => batch.start());
  app.addHook('onClose', async () => batch.stop());
  return batch;
}

/** The caller's channel storage, else the ledger database's (every use bounded by DB_TIMEOUT_MS like any other). */
async function channelStorage(app: FastifyInstance, opts: InstallOptions): Promise<ChannelStorage> {
  if (opts.channelStorage) return opts.channelStorage;
  const { createChannelStorage } = await import('../db/x402-channels.ts');
  const { db } = app.services;
  return createChannelStorage({
    kind: 'postgres',
    query: (sql, params) => db.use((d) => d.query(sql, params)),
    transaction: (fn) => db.use((d) => d.transaction(fn)),
    close: async () => {},
  });
}
