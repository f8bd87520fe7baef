// What the payments module is given by the app (installPayments), and the stores it keeps.
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { Redis } from 'ioredis';
import type { CatalogEntry } from '../catalog/route.ts';
import type { BatchEventRecords } from '../db/batch-events.ts';
import type { PaymentIdStore } from '../db/payment-ids.ts';
import type { PaymentRecords } from '../db/payments.ts';
import type { DatabaseService } from '../db/service.ts';
import type { BackendHealth } from '../lib/backend-health.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { BatchEventRecorder } from './schemes/batch-settlement/batch-events.ts';
import type { PaymentSettings } from './settings.ts';

export interface PaymentsOptions {
  settings: PaymentSettings;
  /** Where clients reach the server: every 402's resource URL is under it. */
  publicBaseUrl: string;
  /** UPSTREAM_DEADLINE_MS: a paid call's handler takes at most two of them. */
  upstreamDeadlineMs: number;
  /** The paid routes; read once routes are mounted. */
  paidRoutes: () => CatalogEntry[];
  /** The ledger database, and its health (no payment is taken while it is degraded). */
  db: DatabaseService;
  databaseHealth: BackendHealth;
  /** Redis shared by the instances, when REDIS_URL is set. */
  redis: { client: Redis; health: BackendHealth } | undefined;
  metrics: Metrics;
  /** Where batch-settlement channels are kept instead of the ledger database (the SDK's RedisChannelStorage, say). */
  channelStorage?: ChannelStorage;
  /** Where batch-settlement events are recorded instead of the ledger database. */
  batchEventRecorder?: BatchEventRecorder;
}

/** What payments keep. */
export interface PaymentStores {
  records: PaymentRecords;
  batchEvents: BatchEventRecords;
  paymentIds: PaymentIdStore;
}
