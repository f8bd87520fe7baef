// buildApp(config): what the server is made of, in the order it is put together. One Fastify instance serves
// interface A under /risk (and at the root of RISK_HOSTNAME) and interface B at the root. The parts below are
// made once here and handed to the routes as one RouteContext; each is its own module, bottom layers first:
// the upstream layer and the sources, storage (the ledger database, Redis), the HTTP edge, the route catalog,
// access (keys, limits), payments (one entry: installPayments), the routes, the reference documents, and the
// admin socket. docs/developing/architecture.md draws the layers.
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { DestinationStream } from 'pino';
import { configuredUrls, publicBaseUrlWarning, type Config } from './config.ts';
import { installAccessControl } from './access/access-control.ts';
import { runningOutWarning } from './analytics/macro-calendar.ts';
import { KEY_CHANGES_CHANNEL } from './access/keys/key-changes.ts';
import { KeyStore } from './access/keys/keys.ts';
import { localLimitStore, RateLimiter } from './access/rate-limit/rate-limit.ts';
import { LimitExchange, sharedLimitStore } from './access/rate-limit/redis-store.ts';
import { AdminChannel } from './admin/channel.ts';
import { registerKeyAdminRoutes } from './admin/key-routes.ts';
import { registerPaymentAdminRoutes } from './admin/payment-routes.ts';
import { mountRoutes } from './catalog/mount.ts';
import { RouteCatalog, type RouteContext, type RouteDef } from './catalog/route.ts';
import type { BatchEventRecords } from './db/batch-events.ts';
import { borrowed, type Database } from './db/database.ts';
import { describeDatabase, openDatabase } from './db/open.ts';
import type { PaymentIdStore } from './db/payment-ids.ts';
import type { PaymentRecords } from './db/payments.ts';
import { DatabaseService } from './db/service.ts';
import { settlingCosts } from './db/settling-costs.ts';
import { UsageCounter } from './db/usage.ts';
import { AnswerMemo } from './edge/answer-memo.ts';
import { registerEdge, riskHostRewrite } from './edge/edge.ts';
import { errorHandler } from './edge/error-handler.ts';
import { lazyLogger, requestLogController } from './edge/lazy-logger.ts';
import { serverLogger } from './edge/logger.ts';
import { pipeliningServer } from './edge/pipelining.ts';
import { trustProxyWarning, trustsPeer } from './edge/trust-proxy.ts';
import { PressureGauge } from './edge/pressure.ts';
import { NO_QUERY, validatorCompiler } from './edge/validator.ts';
import { BackendHealth, type BackendName } from './lib/backend-health.ts';
import { VERSION } from './lib/version.ts';
import { MARKET_ROUTES, marketIndex } from './market/index.ts';
import { createMetrics, type Metrics } from './metrics/metrics.ts';
import { METRICS_PATH, registerMetrics } from './metrics/plugin.ts';
import type { BatchEventRecorder } from './payments/schemes/batch-settlement/batch-events.ts';
import { installPayments } from './payments/install.ts';
import { tokenDecimals } from './payments/networks.ts';
import { connectRedis, type RedisConnections } from './redis/client.ts';
import { RedisSharedCache } from './redis/shared-cache.ts';
import { accessSummary } from './reference/access-guide.ts';
import { registerOpenApi } from './reference/openapi.ts';
import { referenceDocuments, registerReferenceRoutes, type ReferenceDocuments } from './reference/reference-routes.ts';
import { riskPlugin } from './risk/routes.ts';
import { CryptoListings } from './sources/crypto-listings.ts';
import { createSources, providerInfo, type Sources } from './sources/index.ts';
import { ResponseCache } from './upstream/cache.ts';
import { serialize } from './upstream/envelope.ts';
import { UpstreamGuard } from './upstream/guard.ts';
import { HttpClient } from './upstream/http-client.ts';
import { secretParts } from './upstream/redact-url.ts';

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
  /** Where x402 batch-settlement deposits, charges, claims, settlements and refunds are recorded instead of the ledger database. */
  batchEventRecorder?: BatchEventRecorder;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The reference documents (OpenAPI, llms.txt, agent card), made once as bytes (server.ts: once it listens). */
    reference: ReferenceDocuments;
  }
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  // Secrets inside configured URLs (a key in an RPC path, a user:pass@ login) never reach a log line.
  const logger = serverLogger({ level: config.logLevel, secrets: secretParts(configuredUrls(config)), stream: options.logStream });
  const providers = providerInfo(config.sources);
  const paymentNetworks = config.x402.active ? [config.x402.network, ...(config.x402.svm ? [config.x402.svm.network] : [])] : [];
  const metrics = createMetrics(config.metrics.enabled, { providers: providers.map((p) => p.name), version: VERSION, paymentNetworks });
  const edgeServer = pipeliningServer({
    maxWaiting: config.maxPipelinedRequests,
    onClosed: (reason) => metrics.connectionClosed(reason),
    connections: config.connections,
    trustedPeer: trustsPeer(config.trustProxy),
  });
  const app = Fastify({
    // Fastify's own HTTP/1.1 server, with each connection's pipelined requests answered one at a time (pipelining.ts).
    serverFactory: edgeServer,
    // A request's child logger is made only when the request writes a line (lazy-logger.ts).
    loggerInstance: lazyLogger(logger),
    // Its request lines are not even built below info (lazy-logger.ts).
    logController: requestLogController(config.logLevel),
    // Addresses, ranges and their names, or true (a hop count is refused by config.ts: trust-proxy.ts).
    trustProxy: config.trustProxy,
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

  const trustsAnyone = trustProxyWarning(config.trustProxy);
  if (trustsAnyone) app.log.warn(trustsAnyone);
  const unreachable = publicBaseUrlWarning(config);
  if (unreachable) app.log.warn(unreachable);
  // Once listening: the shipped calendar is validated on first use, not on the way to listen (~20 ms).
  app.addHook('onListen', (done) => {
    const calendarShort = runningOutWarning(config.macroCalendar.calendar, config.macroCalendar.file, Date.now());
    if (calendarShort) app.log.warn(calendarShort);
    done();
  });

  // Set once per request by matchedEntry (grant.ts).
  app.decorateRequest('catalogEntry', undefined);
  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by our own code from validated data; an envelope's data is serialised once.
  app.setSerializerCompiler(() => serialize);
  app.setErrorHandler(errorHandler);

  // Metrics first: their per-route hooks are attached as routes are registered (none when they are off).
  await registerMetrics(app, metrics, { ...config.metrics, requestTimeoutMs: config.requestTimeoutMs });

  // The upstream layer: one HTTP client, the guard (deadline, breaker), the cache and the answers served again.
  const http = new HttpClient({ ...config.upstream, userAgent: `marketgate/${VERSION} (token risk and market data API)` });
  const guard = new UpstreamGuard(config.upstream, metrics.upstream);
  const backends = createBackends(app, config, metrics);
  const { cache, answers, caches } = createCaches(app, config, metrics, backends.redis);
  const pressure = new PressureGauge(
    config.pressure,
    (reason) => (reason ? app.log.warn({ reason }, 'under pressure: every request is answered 503 until it passes') : app.log.info('no longer under pressure')),
    undefined,
    {
      // Under memory pressure the connections holding the most queued work are closed first (connection-admission.ts).
      shed: (share) => [...edgeServer.admissions].reduce((closed, admission) => closed + admission.shedHeaviest(share), 0),
      onShed: (closed, r) =>
        app.log.warn({ closed, heapUsedMb: Math.round(r.heapUsedBytes / 1_048_576), externalMb: Math.round(r.externalBytes / 1_048_576), rssMb: Math.round(r.rssBytes / 1_048_576) }, 'memory pressure: closed the connections holding the most queued work'),
    },
  );
  app.addHook('onReady', async () => pressure.start());
  app.addHook('onClose', async () => pressure.stop());
  const catalog = new RouteCatalog(config.x402.price, config.staleness);
  const sources = createSources(config.sources, { http, guard, cache });
  // The routes that declare a staleness read the same sources through a cache that serves answers past their TTL:
  // one set per value, made when the first such route is mounted.
  const servingStale = new Map<number, Sources>();
  const sourcesServingStale = (maxStaleS: number): Sources => {
    let made = servingStale.get(maxStaleS);
    if (made === undefined) servingStale.set(maxStaleS, (made = createSources(config.sources, { http, guard, cache: cache.servingStale(maxStaleS * 1000) })));
    return made;
  };

  // Storage, the API keys, payments (their records, and the gate when x402 is on), the admin socket's routes.
  const storage = createStorage(app, config, options.database, backends);
  const keys = createKeyStore(app, config, storage, backends);
  const payments = await installPayments(app, {
    settings: config.x402,
    publicBaseUrl: config.publicBaseUrl,
    upstreamDeadlineMs: config.upstream.deadlineMs,
    paidRoutes: () => catalog.entries.filter((e) => e.access === 'paid'),
    db: storage.db,
    databaseHealth: backends.database,
    redis: backends.redis && { client: backends.redis.connections.client, health: backends.redis.health },
    metrics,
    channelStorage: options.channelStorage,
    batchEventRecorder: options.batchEventRecorder,
  });
  registerKeyAdminRoutes(storage.admin, { keys, db: storage.db });
  // What settling costs (npm run payments -- summary, /metrics), from the ledger at the operator's stated fees.
  const costs = { fees: config.x402.fees, decimalsOf: (asset: string) => tokenDecimals(asset, [config.x402.asset, config.x402.svm?.asset]) };
  registerPaymentAdminRoutes(storage.admin, { records: payments.records, batchEvents: payments.batchEvents, db: storage.db, costs });
  // A scrape never opens the database nor waits for its opening (seconds for PGlite): until it is open, these
  // families have no series, and the next scrape asks again.
  metrics.settlingCosts(() =>
    storage.db.state === 'open' ? storage.db.use((db) => settlingCosts(db, {}, costs.fees, costs.decimalsOf)) : Promise.reject(new Error('database not open yet')),
  );
  app.decorate('services', { cache, answers, pressure, catalog, config, sources, guard, backends, keys, ...storage, paymentRecords: payments.records, batchEvents: payments.batchEvents, paymentIds: payments.paymentIds });
  app.addHook('onClose', async () => http.close());

  // Rate limits count in Redis when instances share one (counted here, exchanged in batches), else in this
  // process; each interface its own count.
  const exchange = backends.redis && new LimitExchange({ client: backends.redis.connections.client, health: backends.redis.health });
  if (exchange) app.addHook('onClose', async () => exchange.close());
  const limitStore = (namespace: 'risk' | 'market') => (exchange ? sharedLimitStore(exchange, namespace) : localLimitStore());
  const marketLimiter = new RateLimiter<'key' | 'paid' | 'free' | 'ref'>(limitStore('market'), (scope) => metrics.rateLimited(scope));

  const ctx: RouteContext = {
    config,
    sources,
    sourcesServingStale,
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
    batchSettlement: () => app.x402Batch?.status() ?? null,
    startedAt: Date.now(),
  };

  // The edge, the reference documents, then the two interfaces' routes.
  await registerEdge(app, { knownPath: (path) => catalog.find(path) !== undefined, pressure, exempt: (path) => path === METRICS_PATH });
  const reference = referenceDocuments(app, ctx, marketLimiter, payments.terms);
  app.decorate('reference', reference);
  await registerOpenApi(app, config, reference);
  registerReferenceRoutes(app, reference);

  await app.register(riskPlugin, { prefix: '/risk', ctx, limitStore: limitStore('risk') });

  const marketRoutes = [...MARKET_ROUTES, ...(options.extraMarketRoutes ?? [])];
  await app.register(async (market) => {
    await installAccessControl(market, {
      keys,
      limits: { keyPerMinute: config.keys.rateLimitPerMinute, paidIpPerMinute: config.limits.paidIpPerMinute, freePerMinute: config.limits.freePerMinute },
      limiter: marketLimiter,
      answers,
      payments: payments.gate,
      usage: storage.usage,
      operatorContact: config.operatorContact,
    });
    mountRoutes(market, ctx, 'market', marketRoutes);
  });
  // GET /v1: interface B's index, as GET /risk is interface A's (no parameters, as no route takes one it does not declare).
  app.get('/v1', { schema: { hide: true, querystring: NO_QUERY } }, async () => marketIndex());

  return app;
}

/**
 * The upstream answers' cache, with its second level in Redis when instances share one (entries every instance
 * reads, one upstream call per cold key across them), and the answers served again from it (the fast lane):
 * CACHE_MAX_BYTES, three quarters for the one, a quarter for the other.
 */
function createCaches(app: FastifyInstance, config: Config, metrics: Metrics, redis: Backends['redis']) {
  const cache = new ResponseCache({
    maxEntries: config.cache.maxEntries,
    maxBytes: Math.floor((config.cache.maxBytes * 3) / 4),
    recorder: metrics.cache,
    shared: redis && new RedisSharedCache({ connections: redis.connections, health: redis.health, waitMs: config.upstream.deadlineMs, log: app.log }),
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
  return { cache, answers, caches };
}

/** The ledger database, per-key usage and the admin socket; nothing is opened here (see startStorage). */
function createStorage(app: FastifyInstance, config: Config, given: Database | undefined, backends: Backends) {
  const db = new DatabaseService({
    open: given ? async () => borrowed(given) : (signal) => openDatabase(config.db, { signal }),
    timeoutMs: config.db.timeoutMs,
    openWaitMs: config.db.openWaitMs,
    describe: given ? `the ${given.kind} database given to the app` : describeDatabase(config.db),
    log: app.log,
    health: backends.database,
  });
  const usage = new UsageCounter(db, { flushMs: config.usage.flushMs, log: app.log });
  usage.start();
  const admin = new AdminChannel(join(config.db.dataDir, 'admin.sock'), app.log);
  db.keepHealthCurrent(DATABASE_PROBE_MS);
  // Last in, first out (the payment records, installed after, get their last try before): the admin socket
  // stops, usage is flushed, then the database closes.
  app.addHook('onClose', async () => {
    await admin.close();
    await usage.close();
    await db.close();
  });
  return { db, usage, admin };
}

/**
 * The API keys of this instance: a copy of the database's, refreshed on Redis announcements, on every
 * Redis reconnect and every API_KEYS_RELOAD_MS (src/access/keys/keys.ts). Throws KeyFileError when
 * API_KEYS_FILE exists but cannot be read (start-up stops).
 */
function createKeyStore(app: FastifyInstance, config: Config, storage: ReturnType<typeof createStorage>, backends: Backends): KeyStore {
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
  keys.watch();
  app.addHook('onClose', async () => keys.stop());
  return keys;
}

type Backends = ReturnType<typeof createBackends>;

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

/** How often the database's health is made current when nothing asked it meanwhile (/v1/status, paid calls). */
const DATABASE_PROBE_MS = 2000;

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

declare module 'fastify' {
  interface FastifyInstance {
    services: {
      cache: ResponseCache;
      /** Answers served again while their sources are fresh (cleared with the cache). */
      answers: AnswerMemo;
      /** Whether the process is under pressure (every request but /health is then answered 503), and the connections it closed under memory pressure. */
      pressure: PressureGauge;
      catalog: RouteCatalog;
      config: Config;
      sources: Sources;
      guard: UpstreamGuard;
      /** The ledger database (opened in the background by startStorage, or on first use). */
      db: DatabaseService;
      /** The database's health, and Redis's connections and health when REDIS_URL is set. */
      backends: Backends;
      /** One record per x402 payment attempt (the payments module writes them). */
      paymentRecords: PaymentRecords;
      /** Batch settlement's deposits, charges, claims, settlements and refunds. */
      batchEvents: BatchEventRecords;
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
