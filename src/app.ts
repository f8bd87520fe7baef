// buildApp(config): one Fastify instance serving interface A under /risk (and at the root of
// RISK_HOSTNAME) and interface B at the root. Shared services are created once here and handed to
// the plugins as one RouteContext.
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import { pino, type DestinationStream, type LoggerOptions } from 'pino';
import { configuredUrls, publicBaseUrlWarning, type Config } from './config.ts';
import { installAccessControl, type PaymentGate } from './access/access-control.ts';
import { KEY_CHANGES_CHANNEL } from './access/key-changes.ts';
import { localLimitStore, RateLimiter } from './access/rate-limit.ts';
import { KeyStore } from './access/keys.ts';
// The x402 SDK (and viem under it) loads only when x402 is on: see paymentGate.
import type { BatchLedger } from './access/x402/batch-ledger.ts';
import type { BatchSettlement } from './access/x402/batch-settlement.ts';
import type { PaymentReconciler } from './access/x402/reconciler.ts';
import { AdminChannel } from './admin/channel.ts';
import { registerKeyAdminRoutes } from './admin/key-routes.ts';
import { registerPaymentAdminRoutes } from './admin/payment-routes.ts';
import { accessSummary } from './catalog/access-summary.ts';
import type { RouteContext } from './catalog/context.ts';
import { registerOpenApi } from './catalog/openapi.ts';
import { referenceDocuments, registerReferenceRoutes, type ReferenceDocuments } from './catalog/reference-routes.ts';
import { mountRoutes, RouteCatalog, type RouteDef } from './catalog/route.ts';
import type { Database, Queryable } from './db/database.ts';
import { describeDatabase, openDatabase } from './db/open.ts';
import { SqlPaymentIdStore, type PaymentIdStore } from './db/payment-ids.ts';
import { BatchEventLedger } from './db/batch-events.ts';
import { PaymentLedger } from './db/payments.ts';
import { DatabaseService } from './db/service.ts';
import { UsageCounter } from './db/usage.ts';
import { AnswerMemo } from './http/answer-memo.ts';
import { ResponseCache } from './http/cache.ts';
import { originForm, registerEdge } from './http/edge.ts';
import { errorHandler } from './http/error-handler.ts';
import { validatorCompiler } from './http/validator.ts';
import { serialize } from './http/envelope.ts';
import { UpstreamGuard } from './http/guard.ts';
import { HttpClient } from './http/http-client.ts';
import { lazyLogger, requestLogController } from './http/lazy-logger.ts';
import { pipeliningServer } from './http/pipelining.ts';
import { PressureGauge } from './http/pressure.ts';
import { scrub, scrubLogObject, secretParts } from './http/redact-url.ts';
import { MARKET_ROUTES } from './market/index.ts';
import { createMetrics, type Metrics, type PaymentMetrics } from './metrics/metrics.ts';
import { connectRedis, type RedisConnections } from './redis/client.ts';
import { CachedPaymentIdStore } from './redis/payment-ids.ts';
import { sharedLimitStore } from './redis/rate-limit-store.ts';
import { RedisSharedCache } from './redis/shared-cache.ts';
import { BackendHealth, type BackendName } from './http/backend-health.ts';
import { METRICS_PATH, registerMetrics } from './metrics/plugin.ts';
import { riskPlugin } from './risk/routes.ts';
import { CryptoListings } from './market/crypto-listings.ts';
import { createSources, providerInfo, type Sources } from './sources/index.ts';
import { VERSION } from './version.ts';

export interface BuildOptions {
  /** Where logs go (tests capture them); default stdout. */
  logStream?: DestinationStream;
  /** Extra interface-B routes, for tests that need a route with a controlled upstream. */
  extraMarketRoutes?: RouteDef[];
  /** An open, migrated database to use instead of opening DATA_DIR's or DATABASE_URL's (tests share one); the app does not close it. */
  database?: Database;
  /**
   * Where x402 batch-settlement channels are kept instead of the ledger database, e.g. the SDK's
   * RedisChannelStorage over a node-redis client (it needs node-redis's API, not ioredis's).
   */
  channelStorage?: ChannelStorage;
  /** Where x402 batch-settlement deposits, charges, claims, settlements and refunds are recorded. */
  batchLedger?: BatchLedger;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** x402 batch settlement when X402_BATCH_SETTLEMENT is on (its claim-and-settle schedule, for operators and tests). */
    x402Batch: BatchSettlement | undefined;
    /** x402's reconciliation of unfinished ledger rows from the chain (started by startStorage; X402_RPC_URL). */
    x402Reconciler: PaymentReconciler | undefined;
    /** The reference documents (OpenAPI, llms.txt, agent card), made once as bytes (server.ts: once it listens). */
    reference: ReferenceDocuments;
  }
}

/** Headers that carry credentials: never logged. */
export const REDACTED_HEADERS = ['x-api-key', 'authorization', 'payment-signature', 'x-payment', 'cookie'];

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  // Secrets inside configured URLs (a key in an RPC path, a user:pass@ login) never reach a log line.
  const secrets = secretParts(configuredUrls(config));
  const logOptions: LoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACTED_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]), censor: '[redacted]' },
    formatters: { log: scrubLogObject(secrets) },
    hooks: {
      logMethod(args, method) {
        if (secrets.length) for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = scrub(args[i] as string, secrets);
        method.apply(this, args);
      },
    },
  };
  // (Fastify adds its serialisers of req, res and err to the logger it is given.)
  const logger = options.logStream ? pino(logOptions, options.logStream) : pino(logOptions);
  const providers = providerInfo(config.sources);
  const metrics = createMetrics(config.metrics.enabled, { providers: providers.map((p) => p.name), version: VERSION });
  const app = Fastify({
    // Fastify's own HTTP/1.1 server, with each connection's pipelined requests answered one at a time (pipelining.ts).
    serverFactory: pipeliningServer({ maxWaiting: config.maxPipelinedRequests, onClosed: (reason) => metrics.connectionClosed(reason) }),
    // A request's child logger is made only when the request writes a line (lazy-logger.ts).
    loggerInstance: lazyLogger(logger),
    // Its request lines are not even built below info (lazy-logger.ts).
    logController: requestLogController(config.logLevel),
    // Fastify accepts a hop count at run time; its types omit the number form.
    trustProxy: config.trustProxy as boolean | string[],
    // Only with RISK_HOSTNAME: otherwise Fastify would call it (and copy each URL aside) on every request.
    rewriteUrl: config.risk.hostname ? riskHostRewrite(config.risk.hostname) : undefined,
    bodyLimit: 64 * 1024,
    // A client that takes longer than this to send its request (headers and body) gets a 408.
    requestTimeout: config.requestTimeoutMs,
    ...registerEdge.serverOptions(config.requestTimeoutMs),
    // The compilers set below, named here too so Fastify does not load its defaults (Ajv, fast-json-stringify) at
    // start-up; the factories' types assume Ajv's compiler.
    schemaController: { compilersFactory: { buildValidator: () => validatorCompiler, buildSerializer: () => () => serialize } } as never,
  });

  const unreachable = publicBaseUrlWarning(config);
  if (unreachable) app.log.warn(unreachable);

  // Set once per request by matchedEntry (grant.ts).
  app.decorateRequest('catalogEntry', undefined);
  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by our own code from validated data; an envelope's data is serialised once.
  app.setSerializerCompiler(() => serialize);
  app.setErrorHandler(errorHandler);

  // Metrics first: their per-route hooks are attached as routes are registered (none when they are off).
  await registerMetrics(app, metrics, { ...config.metrics, requestTimeoutMs: config.requestTimeoutMs });

  const http = new HttpClient({ ...config.upstream, userAgent: `marketgate/${VERSION} (token risk and market data API)` });
  const guard = new UpstreamGuard(config.upstream, metrics.upstream);
  const backends = createBackends(app, config, metrics);
  // CACHE_MAX_BYTES: three quarters for the upstream answers, a quarter for the answers served again from them.
  const cache = new ResponseCache({
    maxEntries: config.cache.maxEntries,
    maxBytes: Math.floor((config.cache.maxBytes * 3) / 4),
    recorder: metrics.cache,
    shared: sharedCache(app, config, backends.redis),
  });
  const answers = new AnswerMemo(metrics.cache, { maxBytes: Math.floor(config.cache.maxBytes / 4) });
  cache.onClear(() => answers.clear());
  // Their sweeps of expired entries (what nobody asks for again is freed too).
  cache.start();
  answers.start();
  app.addHook('onClose', async () => {
    cache.stop();
    answers.stop();
  });
  const caches = () => ({ upstream: cache.stats(), answers: answers.stats() });
  metrics.cacheHoldings(caches);
  const pressure = new PressureGauge(config.pressure, (reason) =>
    reason ? app.log.warn({ reason }, 'under pressure: every request is answered 503 until it passes') : app.log.info('no longer under pressure'),
  );
  app.addHook('onReady', async () => pressure.start());
  app.addHook('onClose', async () => pressure.stop());
  const catalog = new RouteCatalog(config.x402.price);
  const sources = createSources(config.sources, { http, guard, cache });
  const storage = createStorage(app, config, options.database, backends);
  metrics.paymentLedger(() => storage.payments.stats());
  const keys = createKeyStore(app, config, storage, backends);
  app.decorate('services', { cache, answers, pressure, catalog, config, sources, guard, backends, keys, ...storage });
  app.addHook('onClose', async () => http.close());

  // Rate limits count in Redis when instances share one, else in this process; each interface its own count.
  const limitStore = (namespace: 'risk' | 'market') =>
    backends.redis ? sharedLimitStore({ client: backends.redis.connections.client, health: backends.redis.health }, namespace) : localLimitStore();
  const marketLimiter = new RateLimiter<'key' | 'paid' | 'free' | 'ref'>(limitStore('market'), (scope) => metrics.rateLimited(scope));

  const ctx: RouteContext = {
    config,
    sources,
    cryptoListings: CryptoListings.fromSources(sources, {
      binance: config.sources.binanceSpot.ttl.listings,
      coinbase: config.sources.coinbase.ttl.listings,
      hyperliquid: config.sources.hyperliquid.listingsTtlS,
    }),
    guard,
    metrics,
    providers,
    catalog,
    access: accessSummary(config),
    answers,
    usage: storage.usage,
    keyMinute: (keyId) => marketLimiter.read(`key:${keyId}`, config.keys.rateLimitPerMinute),
    backends: { database: backends.database, redis: backends.redis?.health },
    caches,
    startedAt: Date.now(),
  };

  await registerEdge(app, { knownPath: (path) => catalog.find(path) !== undefined, pressure, exempt: (path) => path === METRICS_PATH });
  const reference = referenceDocuments(app, ctx, marketLimiter);
  app.decorate('reference', reference);
  await registerOpenApi(app, config, reference);
  registerReferenceRoutes(app, reference);

  await app.register(riskPlugin, { prefix: '/risk', ctx, limitStore: limitStore('risk') });

  const payments = await paymentGate(app, config, catalog, options, metrics);
  const marketRoutes = [...MARKET_ROUTES, ...(options.extraMarketRoutes ?? [])];
  await app.register(async (market) => {
    await installAccessControl(market, {
      keys,
      limits: { keyPerMinute: config.keys.rateLimitPerMinute, paidIpPerMinute: config.limits.paidIpPerMinute, freePerMinute: config.limits.freePerMinute },
      limiter: marketLimiter,
      answers,
      payments,
      usage: storage.usage,
      operatorContact: config.operatorContact,
    });
    mountRoutes(market, ctx, 'market', marketRoutes);
  });

  return app;
}

/** The ledger database and what is built on it; nothing is opened here (see startStorage). */
function createStorage(app: FastifyInstance, config: Config, given: Database | undefined, backends: ReturnType<typeof createBackends>) {
  const db = new DatabaseService({
    open: given ? async () => notClosing(given) : (signal) => openDatabase(config.db, { signal }),
    timeoutMs: config.db.timeoutMs,
    describe: given ? `the ${given.kind} database given to the app` : describeDatabase(config.db),
    log: app.log,
    health: backends.database,
  });
  const payments = new PaymentLedger(db, { log: app.log });
  const batchEvents = new BatchEventLedger(db, app.log);
  // Payment identifiers and their stored answers: in the ledger database (durable, shared by the instances on
  // DATABASE_URL), with Redis, when there is one, in front of the answers.
  const sqlPaymentIds = new SqlPaymentIdStore(db);
  const redis = backends.redis;
  const paymentIds: PaymentIdStore = redis ? new CachedPaymentIdStore(redis.connections.client, sqlPaymentIds, redis.health) : sqlPaymentIds;
  const usage = new UsageCounter(db, { flushMs: config.usage.flushMs, log: app.log });
  usage.start();
  const admin = new AdminChannel(join(config.db.dataDir, 'admin.sock'), app.log);
  registerPaymentAdminRoutes(admin, { ledger: payments, batchEvents, db });
  // The database's health is kept current between requests (a paid call checks it before anything is verified),
  // by a statement of its own when nothing else asked the database meanwhile (the API keys' change check
  // usually has: each statement costs the embedded database's worker CPU).
  const probe = setInterval(() => {
    if (Date.now() - db.answeredAt < DATABASE_PROBE_MS) return;
    if (db.state === 'open' || db.state === 'failed') db.use((d) => d.query('SELECT 1')).catch(() => {});
  }, DATABASE_PROBE_MS);
  probe.unref();
  // Last in, first out: the admin socket stops, usage is flushed, the ledger retries what is pending, then the database closes.
  app.addHook('onClose', async () => {
    clearInterval(probe);
    await admin.close();
    await usage.close();
    await payments.close();
    await batchEvents.close();
    await db.close();
  });
  return { db, payments, batchEvents, paymentIds, usage, admin };
}

/**
 * The API keys of this instance: a copy of the database's, refreshed on Redis announcements, on every
 * Redis reconnect and every API_KEYS_RELOAD_MS (src/access/keys.ts). Throws KeyFileError when
 * API_KEYS_FILE exists but cannot be read (start-up stops).
 */
function createKeyStore(app: FastifyInstance, config: Config, storage: ReturnType<typeof createStorage>, backends: ReturnType<typeof createBackends>): KeyStore {
  const redis = backends.redis;
  const keys = new KeyStore(config.keys, {
    db: storage.db,
    log: app.log,
    announce: redis && ((change) => redis.connections.client.publish(KEY_CHANGES_CHANNEL, JSON.stringify(change))),
  });
  if (redis) {
    void redis.connections.subscribe(KEY_CHANGES_CHANNEL, (message) => keys.heard(message));
    redis.connections.onReconnect(() => keys.reconnected());
  }
  registerKeyAdminRoutes(storage.admin, { keys, db: storage.db });
  keys.watch();
  app.addHook('onClose', async () => keys.stop());
  return keys;
}

/**
 * The backends an instance can serve without for a while: the database's health, and Redis (its
 * connections and health) when REDIS_URL is set. Each change is logged once and shown in /v1/status.
 */
function createBackends(app: FastifyInstance, config: Config, metrics: Metrics) {
  const onReport = (name: BackendName, up: boolean) => metrics.backend(name, up);
  const database = new BackendHealth('database', {
    log: app.log,
    onReport,
    effect: "paid calls answer 503 (nothing is taken that cannot be recorded) and keyed calls are checked against this instance's copy of the keys (a key not in it: 503)",
  });
  let redis: { health: BackendHealth; connections: RedisConnections } | undefined;
  if (config.redis.url) {
    const health = new BackendHealth('redis', {
      log: app.log,
      onReport,
      effect: 'rate limits count per instance, the cache is this instance\'s own, revocations reach other instances within API_KEYS_RELOAD_MS',
    });
    const connections = connectRedis(config.redis.url, config.redis.timeoutMs, health);
    app.addHook('onClose', async () => connections.close());
    redis = { health, connections };
  }
  return { database, redis };
}

/**
 * The response cache's second level in Redis when instances share one: entries every instance reads, and
 * one upstream call per cold key across them (the others wait for it up to the upstream deadline).
 */
function sharedCache(app: FastifyInstance, config: Config, redis: ReturnType<typeof createBackends>['redis']): RedisSharedCache | undefined {
  if (!redis) return undefined;
  return new RedisSharedCache({ connections: redis.connections, health: redis.health, waitMs: config.upstream.deadlineMs, log: app.log });
}

/** How often an open database is asked `SELECT 1`, so its health in /v1/status and for paid calls is current. */
const DATABASE_PROBE_MS = 2000;

/** A database the app uses but does not own: closing the app leaves it open. */
const notClosing = (db: Database): Database => ({
  kind: db.kind,
  query: <Row>(sql: string, params?: readonly unknown[]) => db.query<Row>(sql, params),
  transaction: <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction<T>(fn),
  close: async () => {},
});

/**
 * What the serving process starts once it listens (server.ts has taken the admin socket the CLIs use
 * before): the database opens in the background (PGlite takes seconds; /health answers meanwhile,
 * requests that need it wait up to DB_TIMEOUT_MS). An app that is only built (tests, `npm run docs`)
 * opens its database when a request first needs it, and has no admin socket.
 */
export async function startStorage(app: FastifyInstance): Promise<void> {
  app.services.db.start();
  app.services.keys.start();
  // Payments left unfinished by a crash or a restart are settled or closed from what the chain says.
  app.x402Reconciler?.start();
}

/** x402 is on when enabled and a payee is set; otherwise paid routes need an API key. */
async function paymentGate(app: FastifyInstance, config: Config, catalog: RouteCatalog, options: BuildOptions, metrics: PaymentMetrics): Promise<PaymentGate | undefined> {
  const x402 = config.x402;
  app.decorate('x402Batch', undefined);
  app.decorate('x402Reconciler', undefined);
  if (!x402.active) {
    app.log.info(
      x402.enabled
        ? 'x402 payments are off: set X402_PAY_TO (the address that receives USDC) and X402_FACILITATOR to enable them; paid routes need an API key meanwhile'
        : 'x402 payments are disabled (X402_ENABLED=false); paid routes need an API key',
    );
    return undefined;
  }
  const { installX402 } = await import('./access/x402/install.ts');
  const paidRoutes = () => catalog.entries.filter((e) => e.access === 'paid');
  return installX402(app, { config, paidRoutes, metrics, channelStorage: options.channelStorage, batchLedger: options.batchLedger });
}

/**
 * On RISK_HOSTNAME, interface A also answers at the root: /v1/token-risk → /risk/v1/token-risk. An
 * absolute-form target (`http://risk.example.com/v1/token-risk`, which HTTP/1.1 servers must accept) is
 * read by its path, or it would become /riskhttp://….
 */
function riskHostRewrite(hostname: string) {
  return (req: { url?: string; headers: { host?: string } }): string => {
    const given = req.url ?? '/';
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
    if (host !== hostname) return given;
    const url = originForm(given);
    if (!url.startsWith('/') || url === '/risk' || url.startsWith('/risk/') || url.startsWith('/risk?')) return url;
    return `/risk${url}`;
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    services: {
      cache: ResponseCache;
      /** Answers served again while their sources are fresh (cleared with the cache). */
      answers: AnswerMemo;
      /** Whether the process is under pressure (every request is then answered 503). */
      pressure: PressureGauge;
      catalog: RouteCatalog;
      config: Config;
      sources: Sources;
      guard: UpstreamGuard;
      /** The ledger database (opened in the background by startStorage, or on first use). */
      db: DatabaseService;
      /** The database's health, and Redis's connections and health when REDIS_URL is set. */
      backends: { database: BackendHealth; redis: { health: BackendHealth; connections: RedisConnections } | undefined };
      /** The payments ledger the x402 gate writes. */
      payments: PaymentLedger;
      /** Batch settlement's deposits, charges, claims, settlements and refunds. */
      batchEvents: BatchEventLedger;
      /** x402 payment-identifier idempotency. */
      paymentIds: PaymentIdStore;
      /** Per-key usage, flushed every USAGE_FLUSH_MS. */
      usage: UsageCounter;
      /** The admin socket (DATA_DIR/admin.sock) of the CLIs. */
      admin: AdminChannel;
      /** This instance's copy of the API keys. */
      keys: KeyStore;
    };
  }
}
