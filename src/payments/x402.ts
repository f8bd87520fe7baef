// x402 on one app, when it is on (loaded only then: the SDK is not loaded otherwise): the facilitator, batch
// settlement when asked for, the payment network's chain (outcomes the facilitator does not tell) with the
// records' reconciliation from it, and the gate over the paid routes.
import type { FacilitatorClient } from '@x402/core/server';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { FastifyInstance } from 'fastify';
import type { PaymentGate } from '../access/access-control.ts';
import type { BatchEventRecorder } from './batch/batch-events.ts';
import type { BatchSettlement } from './batch/batch-settlement.ts';
import { AuthorizationClaims } from '../db/authorization-claims.ts';
import { AuthorizationChain } from './chain.ts';
import { createFacilitatorClient } from './facilitator.ts';
import { facilitatorName } from './facilitator-name.ts';
import { createPaymentGate } from './fastify.ts';
import type { PaymentsOptions, PaymentStores } from './options.ts';
import type { OfferReceipts } from './offer-receipt.ts';
import { PaymentReconciler } from './reconciler.ts';
import type { PaymentSettings } from './settings.ts';
import { signingKey } from './signing-key.ts';

export async function installX402(app: FastifyInstance, opts: PaymentsOptions, stores: PaymentStores): Promise<PaymentGate> {
  const x402 = opts.settings;
  const facilitator = await createFacilitatorClient(x402);
  const batch = x402.batch.enabled ? await batchSettlement(app, x402, facilitator, opts, stores) : undefined;
  // Waits for the chain end when the server closes (a row left `unknown` is reconciled at the next start).
  const closing = new AbortController();
  app.addHook('onClose', async () => closing.abort());
  const chain = x402.rpcUrl ? new AuthorizationChain({ rpcUrl: x402.rpcUrl, network: x402.network, timeoutMs: x402.facilitatorTimeoutMs }) : undefined;
  if (chain) {
    const reconciler = new PaymentReconciler({
      records: stores.records,
      chain,
      network: x402.network,
      intervalMs: x402.reconcileIntervalS * 1000,
      log: app.log,
      ready: () => opts.db.ready(),
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
    publicBaseUrl: opts.publicBaseUrl,
    log: app.log,
    records: stores.records,
    paymentIds: stores.paymentIds,
    authorizationClaims: new AuthorizationClaims(opts.db),
    database: opts.databaseHealth,
    ledgerOpened: () => opts.db.opened(),
    metrics: opts.metrics,
    // A payment without an authorization deadline: verify and settle within their timeouts, the handler within two upstream deadlines.
    paidCallMs: x402.facilitatorTimeoutMs + x402.settleTimeoutMs + 2 * opts.upstreamDeadlineMs,
    batch,
    prefetch: x402.prefetch,
    chain,
    signal: closing.signal,
    receipts: x402.signingKey ? await signedOfferReceipts(x402.signingKey) : undefined,
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
async function batchSettlement(app: FastifyInstance, x402: PaymentSettings, facilitator: FacilitatorClient, opts: PaymentsOptions, stores: PaymentStores): Promise<BatchSettlement> {
  const [{ createBatchSettlement }, { toBatchEventRow }] = await Promise.all([import('./batch/batch-settlement.ts'), import('./batch/batch-events.ts')]);
  const storage = await channelStorage(opts);
  const events: BatchEventRecorder = opts.batchEventRecorder ?? { record: (event) => stores.batchEvents.record(toBatchEventRow(event)) };
  const batch = createBatchSettlement({ x402, facilitator, storage, events, log: app.log });
  app.x402Batch = batch;
  app.addHook('onReady', async () => batch.start());
  app.addHook('onClose', async () => batch.stop());
  return batch;
}

/** The caller's channel storage, else the ledger database's (every use bounded by DB_TIMEOUT_MS like any other). */
async function channelStorage(opts: PaymentsOptions): Promise<ChannelStorage> {
  if (opts.channelStorage) return opts.channelStorage;
  const { createChannelStorage } = await import('../db/x402-channels.ts');
  const { db } = opts;
  return createChannelStorage({
    kind: 'postgres',
    query: (sql, params) => db.use((d) => d.query(sql, params)),
    transaction: (fn) => db.use((d) => d.transaction(fn)),
    close: async () => {},
  });
}

/** Offers and receipts signed with X402_SIGNING_KEY (the offer-receipt extension and what it brings load only then). */
async function signedOfferReceipts(key: `0x${string}`): Promise<OfferReceipts> {
  const { offerReceipts } = await import('./offer-receipt.ts');
  return offerReceipts(signingKey(key));
}
