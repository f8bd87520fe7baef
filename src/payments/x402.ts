// x402 on one app, when it is on (loaded only then: the SDK is not loaded otherwise): the facilitator, the
// schemes the settings ask for (schemes/: exact on X402_NETWORK first, batch settlement when asked for), each
// network's chain (outcomes the facilitator does not tell) with the records' reconciliation from it, and the
// gate over the paid routes.
import type { FacilitatorClient } from '@x402/core/server';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { FastifyInstance } from 'fastify';
import { AuthorizationClaims } from '../db/authorization-claims.ts';
import { createFacilitatorClient } from './core/facilitator.ts';
import { facilitatorName } from './core/facilitator-name.ts';
import type { OfferReceipts } from './core/offer-receipt.ts';
import { atomicAmount } from './core/price.ts';
import { PaymentReconciler } from './core/reconciler.ts';
import { PaymentSchemes, type PaymentScheme } from './core/scheme.ts';
import { signingKey } from './core/signing-key.ts';
import { createPaymentGate, type X402Gate } from './fastify.ts';
import type { PaymentsOptions, PaymentStores } from './options.ts';
import type { BatchEventRecorder } from './schemes/batch-settlement/batch-events.ts';
import type { BatchSettlement } from './schemes/batch-settlement/batch-settlement.ts';
import type { AnswerKeeper } from './schemes/batch-settlement/voucher-replay.ts';
import { AuthorizationChain } from './schemes/exact-evm/chain.ts';
import { exactEvmScheme } from './schemes/exact-evm/scheme.ts';
import type { PaymentSettings } from './settings.ts';

export async function installX402(app: FastifyInstance, opts: PaymentsOptions, stores: PaymentStores): Promise<X402Gate> {
  const x402 = opts.settings;
  // A settle is bounded by its authorization's deadline, as its scheme reads it (the schemes are made next: batch settlement needs the facilitator).
  let schemes: PaymentSchemes | undefined;
  const facilitator = await createFacilitatorClient(x402, (payload) => schemes?.authorizationOf(payload)?.validBefore);
  const batch = x402.batch.enabled ? await batchSettlement(app, x402, facilitator, opts, stores) : undefined;
  // Waits for the chain end when the server closes (a row left `unknown` is reconciled at the next start).
  const closing = new AbortController();
  app.addHook('onClose', async () => closing.abort());
  const chain = x402.rpcUrl ? new AuthorizationChain({ rpcUrl: x402.rpcUrl, network: x402.network, timeoutMs: x402.facilitatorTimeoutMs }) : undefined;
  const list: PaymentScheme[] = [exactEvmScheme(x402, atomicAmount(x402.price, x402.asset!.decimals), chain)];
  if (batch) list.push(await batchScheme(batch, x402));
  if (x402.svm) list.push(await svmScheme(x402, facilitator, app));
  schemes = new PaymentSchemes(list);
  const readers = schemes.readers();
  if (readers.size > 0) {
    const reconciler = new PaymentReconciler({
      records: stores.records,
      chains: readers,
      intervalMs: x402.reconcileIntervalS * 1000,
      log: app.log,
      ready: () => opts.db.ready(),
    });
    app.x402Reconciler = reconciler;
    app.addHook('onClose', async () => reconciler.stop());
  }
  if (!chain) {
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
    schemes,
    authorizationClaims: new AuthorizationClaims(opts.db),
    database: opts.databaseHealth,
    ledgerOpened: () => opts.db.opened(),
    metrics: opts.metrics,
    // A payment without an authorization deadline: verify and settle within their timeouts, the handler within two upstream deadlines.
    paidCallMs: x402.facilitatorTimeoutMs + x402.settleTimeoutMs + 2 * opts.upstreamDeadlineMs,
    prefetch: x402.prefetch,
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
  const [{ createBatchSettlement }, { toBatchEventRow }] = await Promise.all([import('./schemes/batch-settlement/batch-settlement.ts'), import('./schemes/batch-settlement/batch-events.ts')]);
  const { storage, answers } = await channelStorage(app, opts);
  const events: BatchEventRecorder = opts.batchEventRecorder ?? {
    record: (event) => stores.batchEvents.record(toBatchEventRow(event)),
    recordBehind: (event) => stores.batchEvents.recordBehind(toBatchEventRow(event)),
  };
  const batch = createBatchSettlement({ x402, facilitator, storage, answers, events, log: app.log });
  app.x402Batch = batch;
  app.addHook('onReady', async () => {
    // Required (true): the facilitator must offer it now, or the server does not start.
    if (x402.batch.mode === 'true' && !(await batch.offer().catch(() => undefined))) {
      throw new Error(`X402_BATCH_SETTLEMENT=true, and the facilitator (${facilitatorName(x402)}) does not offer batch-settlement on ${x402.network} with a receiver authorizer (or cannot be reached): set auto or false, or fix the facilitator`);
    }
    batch.start();
  });
  app.addHook('onClose', async () => batch.stop());
  return batch;
}

/** batch-settlement as a scheme of the gate (its module loaded only when it is on). */
async function batchScheme(batch: BatchSettlement, x402: PaymentSettings): Promise<PaymentScheme> {
  const { batchSettlementScheme } = await import('./schemes/batch-settlement/scheme.ts');
  return batchSettlementScheme(batch, x402.network);
}

/** exact on Solana beside Base's (X402_SVM_PAY_TO; @x402/svm and @solana/kit loaded only then). */
async function svmScheme(x402: PaymentSettings, facilitator: FacilitatorClient, app: FastifyInstance): Promise<PaymentScheme> {
  const [{ exactSvmScheme }, { SvmOutcomeReader }] = await Promise.all([import('./schemes/exact-svm/scheme.ts'), import('./schemes/exact-svm/outcome.ts')]);
  const svm = x402.svm!;
  const outcomes = svm.rpcUrl ? new SvmOutcomeReader({ rpcUrl: svm.rpcUrl, timeoutMs: x402.facilitatorTimeoutMs }) : undefined;
  if (!outcomes) app.log.warn({ network: svm.network }, 'x402: no X402_SVM_RPC_URL: a Solana settlement the facilitator does not answer is recorded unknown, not read from the chain');
  return exactSvmScheme({ svm, amount: atomicAmount(x402.price, svm.asset.decimals), maxTimeoutS: x402.maxTimeoutS, facilitator, log: app.log, outcomes });
}

/**
 * The caller's channel storage, else the ledger database's, held in memory by its single writer (the instance
 * holding each channel's lease) and written behind (channel-lease.ts); every use bounded by DB_TIMEOUT_MS.
 */
async function channelStorage(app: FastifyInstance, opts: PaymentsOptions): Promise<{ storage: ChannelStorage; answers?: AnswerKeeper }> {
  if (opts.channelStorage) return { storage: opts.channelStorage };
  const [{ channelLeaseStore }, { LeasedChannels }] = await Promise.all([
    import('../db/x402-channels.ts'),
    import('./schemes/batch-settlement/channel-lease.ts'),
  ]);
  const { db } = opts;
  const leased = new LeasedChannels(
    channelLeaseStore({
      kind: 'postgres',
      query: (sql, params) => db.use((d) => d.query(sql, params)),
      transaction: (fn) => db.use((d) => d.transaction(fn)),
      close: async () => {},
    }),
    undefined,
    app.log,
  );
  // Every held channel written and handed back before the ledger closes (onClose runs last in, first out).
  app.addHook('onClose', async () => leased.close());
  return { storage: leased, answers: leased };
}

/** Offers and receipts signed with X402_SIGNING_KEY (the offer-receipt extension and what it brings load only then). */
async function signedOfferReceipts(key: `0x${string}`): Promise<OfferReceipts> {
  const { offerReceipts } = await import('./core/offer-receipt.ts');
  return offerReceipts(signingKey(key));
}
