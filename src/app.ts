// buildApp(config): one Fastify instance serving interface A under /risk (and at the root of
// RISK_HOSTNAME) and interface B at the root. Shared services are created once here and handed to
// the plugins as one RouteContext.
import Fastify, { type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { DestinationStream } from 'pino';
import { configuredUrls, type Config } from './config.ts';
import { installAccessControl, type PaymentGate } from './access/access-control.ts';
import { KeyStore } from './access/keys.ts';
import { createFacilitatorClient } from './access/x402/facilitator.ts';
import { createPaymentGate } from './access/x402/gate.ts';
import { accessSummary } from './catalog/access-summary.ts';
import type { RouteContext } from './catalog/context.ts';
import { registerOpenApi } from './catalog/openapi.ts';
import { registerReferenceRoutes } from './catalog/reference-routes.ts';
import { mountRoutes, RouteCatalog, type RouteDef } from './catalog/route.ts';
import { ResponseCache } from './http/cache.ts';
import { registerEdge } from './http/edge.ts';
import { errorHandler } from './http/error-handler.ts';
import { serialize } from './http/envelope.ts';
import { UpstreamGuard } from './http/guard.ts';
import { HttpClient } from './http/http-client.ts';
import { scrub, scrubLogObject, secretParts } from './http/redact-url.ts';
import { MARKET_ROUTES } from './market/index.ts';
import { createMetrics } from './metrics/metrics.ts';
import { registerMetrics } from './metrics/plugin.ts';
import { riskPlugin } from './risk/routes.ts';
import { createSources, providerInfo, type Sources } from './sources/index.ts';
import { VERSION } from './version.ts';

export interface BuildOptions {
  /** Where logs go (tests capture them); default stdout. */
  logStream?: DestinationStream;
  /** Extra interface-B routes, for tests that need a route with a controlled upstream. */
  extraMarketRoutes?: RouteDef[];
}

/** Headers that carry credentials: never logged. */
export const REDACTED_HEADERS = ['x-api-key', 'authorization', 'payment-signature', 'x-payment', 'cookie'];

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  // Secrets inside configured URLs (a key in an RPC path, a user:pass@ login) never reach a log line.
  const secrets = secretParts(configuredUrls(config));
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACTED_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]), censor: '[redacted]' },
      formatters: { log: scrubLogObject(secrets) },
      hooks: {
        logMethod(args, method) {
          if (secrets.length) for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = scrub(args[i] as string, secrets);
          method.apply(this, args);
        },
      },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // Fastify accepts a hop count at run time; its types omit the number form.
    trustProxy: config.trustProxy as boolean | string[],
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

  // Metrics first: their per-route hooks are attached as routes are registered (none when they are off).
  const providers = providerInfo(config.sources);
  const metrics = createMetrics(config.metrics.enabled, { providers: providers.map((p) => p.name), version: VERSION });
  await registerMetrics(app, metrics, { ...config.metrics, requestTimeoutMs: config.requestTimeoutMs });

  const http = new HttpClient({ ...config.upstream, userAgent: `marketgate/${VERSION} (token risk and market data API)` });
  const guard = new UpstreamGuard(config.upstream, metrics.upstream);
  const cache = new ResponseCache(config.cache.maxEntries, metrics.cache);
  const catalog = new RouteCatalog(config.x402.price);
  const sources = createSources(config.sources, { http, guard, cache });
  app.decorate('services', { cache, catalog, config, sources, guard });
  app.addHook('onClose', async () => http.close());

  const ctx: RouteContext = {
    config,
    sources,
    guard,
    metrics,
    providers,
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
  const payments = await paymentGate(app, config, catalog);
  const marketRoutes = [...MARKET_ROUTES, ...(options.extraMarketRoutes ?? [])];
  await app.register(async (market) => {
    await installAccessControl(market, {
      keys,
      limits: { keyPerMinute: config.keys.rateLimitPerMinute, paidIpPerMinute: config.limits.paidIpPerMinute, freePerMinute: config.limits.freePerMinute },
      payments,
      metrics,
    });
    mountRoutes(market, ctx, 'market', marketRoutes);
  });

  return app;
}

/** x402 is on when enabled and a payee is set; otherwise paid routes need an API key. */
async function paymentGate(app: FastifyInstance, config: Config, catalog: RouteCatalog): Promise<PaymentGate | undefined> {
  const x402 = config.x402;
  if (!x402.active) {
    app.log.info(
      x402.enabled
        ? 'x402 payments are off: set X402_PAY_TO (the address that receives USDC) and X402_FACILITATOR to enable them; paid routes need an API key meanwhile'
        : 'x402 payments are disabled (X402_ENABLED=false); paid routes need an API key',
    );
    return undefined;
  }
  const gate = createPaymentGate({
    x402,
    facilitator: await createFacilitatorClient(x402),
    paidRoutes: () => catalog.entries.filter((e) => e.access === 'paid'),
    publicBaseUrl: config.publicBaseUrl,
    log: app.log,
  });
  // Ask the facilitator what it supports once routes exist; a failure is retried on the first paid call.
  app.addHook('onReady', async () => {
    gate.initialize().catch((err) => app.log.warn({ err: String(err?.message ?? err) }, 'x402 facilitator not reachable yet'));
  });
  return gate;
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
