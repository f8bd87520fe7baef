// buildApp(config): one Fastify instance serving interface A under /risk (and at the root of
// RISK_HOSTNAME) and interface B at the root. Shared services are created once here and handed
// to the plugins as options.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { accessSummary } from './catalog/access-summary.ts';
import { registerOpenApi } from './catalog/openapi.ts';
import { registerReferenceRoutes } from './catalog/reference-routes.ts';
import { RouteCatalog, type RouteDef } from './catalog/route.ts';
import { ResponseCache } from './http/cache.ts';
import { errorHandler } from './http/error-handler.ts';
import { UpstreamClient } from './http/upstream.ts';
import type { PaymentGate } from './access/access-control.ts';
import { KeyStore } from './access/keys.ts';
import { createFacilitatorClient } from './access/x402/facilitator.ts';
import { createPaymentGate } from './access/x402/gate.ts';
import { marketPlugin } from './market/plugin.ts';
import { riskPlugin } from './risk/routes.ts';
import { createSources, type Sources } from './sources/index.ts';
import { VERSION } from './version.ts';

export interface BuildOptions {
  /** Where logs go (tests capture them); default stdout. */
  logStream?: DestinationStream;
  /** Extra interface-B routes, for tests that need a route with a controlled upstream. */
  extraMarketRoutes?: RouteDef[];
}

/** Headers that carry credentials: never logged. */
export const REDACTED_HEADERS = ['x-api-key', 'authorization', 'payment-signature', 'x-payment', 'cookie'];

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACTED_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]), censor: '[redacted]' },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // Fastify accepts a hop count at run time; its types omit the number form.
    trustProxy: config.trustProxy as boolean | string[],
    // Echo a caller's request id when it is sane; otherwise make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    rewriteUrl: riskHostRewrite(config.risk.hostname),
    bodyLimit: 64 * 1024,
  });

  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by our own code from validated data; serialise them as they are.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ error: `no route for ${req.method} ${req.url.split('?')[0]}` });
  });
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  const upstream = new UpstreamClient({ ...config.upstream, userAgent: `marketgate/${VERSION} (token risk and market data API)` });
  const cache = new ResponseCache(config.cache.maxEntries);
  const catalog = new RouteCatalog(config.x402.price);
  const sources = createSources({ upstream, cache }, config);
  app.decorate('services', { upstream, cache, catalog, config, sources });
  app.addHook('onClose', async () => upstream.close());

  const startedAt = Date.now();
  const payments = await paymentGate(app, config, catalog);
  const access = accessSummary(config, payments !== undefined);
  await registerOpenApi(app, config, payments !== undefined);
  registerReferenceRoutes(app, catalog, config.publicBaseUrl, access);

  await app.register(riskPlugin, {
    prefix: '/risk',
    catalog,
    goplus: sources.goplus,
    goplusBaseUrl: config.goplus.baseUrl,
    rateLimitPerMinute: config.risk.rateLimitPerMinute,
    startedAt,
  });

  const keys = new KeyStore(config.keys, (err) => app.log.error({ err }, 'API key file could not be read; keeping the previous keys'));
  keys.watch();
  app.addHook('onClose', async () => keys.stop());
  await app.register(marketPlugin, {
    sources,
    config,
    status: { catalog, upstream, providers: sources.providers, access, startedAt },
    access: { keys, keyRateLimitPerMinute: config.keys.rateLimitPerMinute, payments },
    extraRoutes: options.extraMarketRoutes ?? [],
  });

  return app;
}

/** x402 is on when enabled and a payee is set; otherwise paid routes need an API key. */
async function paymentGate(app: FastifyInstance, config: Config, catalog: RouteCatalog): Promise<PaymentGate | undefined> {
  const x402 = config.x402;
  if (!x402.enabled || !x402.payTo) {
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
    services: { upstream: UpstreamClient; cache: ResponseCache; catalog: RouteCatalog; config: Config; sources: Sources };
  }
}
