// buildApp(config): one Fastify instance serving interface A under /risk (and at the root of
// RISK_HOSTNAME) and interface B at the root. Shared services are created once here and handed to
// the plugins as one RouteContext.
import Fastify, { type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { InMemoryChannelStorage, type ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { installAccessControl, type PaymentGate } from './access/access-control.ts';
import { KeyStore } from './access/keys.ts';
import type { BatchLedger } from './access/x402/batch-ledger.ts';
import { createBatchSettlement, type BatchSettlement } from './access/x402/batch-settlement.ts';
import { createChannelStorage, migrateChannelStorage } from './access/x402/channel-storage.ts';
import { createFacilitatorClient } from './access/x402/facilitator.ts';
import { createPaymentGate } from './access/x402/gate.ts';
import { accessSummary } from './catalog/access-summary.ts';
import type { RouteContext } from './catalog/context.ts';
import type { Database } from './db/database.ts';
import { registerOpenApi } from './catalog/openapi.ts';
import { registerReferenceRoutes } from './catalog/reference-routes.ts';
import { mountRoutes, RouteCatalog, type RouteDef } from './catalog/route.ts';
import { ResponseCache } from './http/cache.ts';
import { registerEdge, requestIds } from './http/edge.ts';
import { errorHandler } from './http/error-handler.ts';
import { serialize } from './http/envelope.ts';
import { UpstreamGuard } from './http/guard.ts';
import { HttpClient } from './http/http-client.ts';
import { MARKET_ROUTES } from './market/index.ts';
import { riskPlugin } from './risk/routes.ts';
import { createSources, providerInfo, type Sources } from './sources/index.ts';
import { VERSION } from './version.ts';

export interface BuildOptions {
  /** Where logs go (tests capture them); default stdout. */
  logStream?: DestinationStream;
  /** Extra interface-B routes, for tests that need a route with a controlled upstream. */
  extraMarketRoutes?: RouteDef[];
  /** The ledger database: x402 batch-settlement channels are kept there. */
  database?: Database;
  /**
   * Where x402 batch-settlement channels are kept instead of the ledger database, e.g. the SDK's
   * RedisChannelStorage over a node-redis client when REDIS_URL is set (it needs node-redis's API, not ioredis's).
   */
  channelStorage?: ChannelStorage;
  /** Where x402 batch-settlement deposits, charges, claims, settlements and refunds are recorded. */
  batchLedger?: BatchLedger;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** x402 batch settlement when X402_BATCH_SETTLEMENT is on (its claim-and-settle schedule, for operators and tests). */
    x402Batch: BatchSettlement | undefined;
  }
}

/** Headers that carry credentials: never logged. */
export const REDACTED_HEADERS = ['x-api-key', 'authorization', 'payment-signature', 'x-payment', 'cookie'];

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACTED_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]), censor: '[redacted]' },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // Fastify accepts a hop count at run time; its types omit the number form.
    trustProxy: config.trustProxy as boolean | string[],
    genReqId: requestIds(),
    rewriteUrl: riskHostRewrite(config.risk.hostname),
    bodyLimit: 64 * 1024,
    // A client that takes longer than this to send its request (headers and body) gets a 408.
    requestTimeout: config.requestTimeoutMs,
    ...registerEdge.serverOptions(config.requestTimeoutMs),
  });

  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by our own code from validated data; an envelope's data is serialised once.
  app.setSerializerCompiler(() => serialize);
  app.setErrorHandler(errorHandler);

  const http = new HttpClient({ ...config.upstream, userAgent: `marketgate/${VERSION} (token risk and market data API)` });
  const guard = new UpstreamGuard(config.upstream);
  const cache = new ResponseCache(config.cache.maxEntries);
  const catalog = new RouteCatalog(config.x402.price);
  const sources = createSources(config.sources, { http, guard, cache });
  app.decorate('services', { cache, catalog, config, sources, guard });
  app.addHook('onClose', async () => http.close());

  const ctx: RouteContext = {
    config,
    sources,
    guard,
    providers: providerInfo(config.sources),
    catalog,
    access: accessSummary(config),
    startedAt: Date.now(),
  };

  await registerEdge(app, { knownPath: (path) => catalog.find(path) !== undefined });
  await registerOpenApi(app, config);
  registerReferenceRoutes(app, ctx);

  await app.register(riskPlugin, { prefix: '/risk', ctx });

  const keys = new KeyStore(config.keys, (err) => app.log.error({ err }, 'API key file could not be read; keeping the previous keys'));
  keys.watch();
  app.addHook('onClose', async () => keys.stop());
  const payments = await paymentGate(app, config, catalog, options);
  const marketRoutes = [...MARKET_ROUTES, ...(options.extraMarketRoutes ?? [])];
  await app.register(async (market) => {
    await installAccessControl(market, {
      keys,
      limits: { keyPerMinute: config.keys.rateLimitPerMinute, paidIpPerMinute: config.limits.paidIpPerMinute, freePerMinute: config.limits.freePerMinute },
      payments,
    });
    mountRoutes(market, ctx, 'market', marketRoutes);
  });

  return app;
}

/** x402 is on when enabled and a payee is set; otherwise paid routes need an API key. */
async function paymentGate(app: FastifyInstance, config: Config, catalog: RouteCatalog, options: BuildOptions): Promise<PaymentGate | undefined> {
  const x402 = config.x402;
  app.decorate('x402Batch', undefined);
  if (!x402.active) {
    app.log.info(
      x402.enabled
        ? 'x402 payments are off: set X402_PAY_TO (the address that receives USDC) and X402_FACILITATOR to enable them; paid routes need an API key meanwhile'
        : 'x402 payments are disabled (X402_ENABLED=false); paid routes need an API key',
    );
    return undefined;
  }
  const facilitator = await createFacilitatorClient(x402);
  const batch = x402.batch.enabled ? await batchSettlement(app, x402, facilitator, options) : undefined;
  const gate = createPaymentGate({
    x402,
    facilitator,
    paidRoutes: () => catalog.entries.filter((e) => e.access === 'paid'),
    publicBaseUrl: config.publicBaseUrl,
    log: app.log,
    batch,
  });
  // Ask the facilitator what it supports once routes exist; a failure is retried on the first paid call.
  app.addHook('onReady', async () => {
    gate.initialize().catch((err) => app.log.warn({ err: String(err?.message ?? err) }, 'x402 facilitator not reachable yet'));
  });
  return gate;
}

/** x402 batch settlement: channels in the ledger database, claimed and settled on a schedule stopped on close. */
async function batchSettlement(
  app: FastifyInstance,
  x402: Config['x402'],
  facilitator: Awaited<ReturnType<typeof createFacilitatorClient>>,
  options: BuildOptions,
): Promise<BatchSettlement> {
  const storage = await channelStorage(app, options);
  const ledger: BatchLedger = options.batchLedger ?? { record: (event) => app.log.info({ event }, 'x402 batch settlement ledger') };
  const batch = createBatchSettlement({ x402, facilitator, storage, ledger, log: app.log });
  app.x402Batch = batch;
  app.addHook('onReady', async () => batch.start());
  app.addHook('onClose', async () => batch.stop());
  return batch;
}

/** The caller's channel storage, else the ledger database's, else (with a warning) process memory. */
async function channelStorage(app: FastifyInstance, options: BuildOptions): Promise<ChannelStorage> {
  if (options.channelStorage) return options.channelStorage;
  if (options.database) {
    await migrateChannelStorage(options.database);
    return createChannelStorage(options.database);
  }
  app.log.warn('x402 batch settlement without the ledger database: channels are kept in memory, and vouchers not yet claimed are lost on restart');
  return new InMemoryChannelStorage();
}

/** On RISK_HOSTNAME, interface A also answers at the root: /v1/token-risk → /risk/v1/token-risk. */
function riskHostRewrite(hostname: string | undefined) {
  return (req: { url?: string; headers: { host?: string } }): string => {
    const url = req.url ?? '/';
    if (!hostname) return url;
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
    if (host !== hostname || url === '/risk' || url.startsWith('/risk/') || url.startsWith('/risk?')) return url;
    return `/risk${url}`;
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    services: { cache: ResponseCache; catalog: RouteCatalog; config: Config; sources: Sources; guard: UpstreamGuard };
  }
}
