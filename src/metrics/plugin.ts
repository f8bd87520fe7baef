// Where the metrics meet HTTP:
//   - every route's responses are recorded by an onResponse hook made for that route when it is
//     registered, holding its series (route template and method): a request costs the status class
//     and one histogram step, with the duration Fastify already measured (reply.elapsedTime);
//   - requests that matched no route (unknown paths, other methods) fold into route="unmatched";
//   - GET /metrics is served on the public port to `Authorization: Bearer <METRICS_TOKEN>` only (hidden
//     from OpenAPI and the catalog, outside every rate limit), or, with METRICS_PORT, on a listener of
//     its own (METRICS_HOST, 127.0.0.1 by default) and not on the public port at all.
// With metrics off (no token, no port) nothing is installed: no hook, no route, no listener.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { withHook } from '../edge/route-hooks.ts';
import type { Metrics, ResponseRecorder } from './metrics.ts';

export interface MetricsServing {
  /** Required as a bearer token when set. */
  token: string | undefined;
  /** A listener of its own for /metrics; undefined = served on the public port (then a token is required). */
  port: number | undefined;
  host: string;
  /** A client must have sent its request within this long (the public port's REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
}

export const METRICS_PATH = '/metrics';
const TOKEN_REQUIRED = 'metrics require a bearer token (Authorization: Bearer <METRICS_TOKEN>)';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's metrics; the no-op set when metrics are off. */
    metrics: Metrics;
  }
}

/** Decorates the app with `metrics` and, when they are on, installs the hooks and /metrics. Call it before any route is registered. */
export async function registerMetrics(app: FastifyInstance, metrics: Metrics, serving: MetricsServing): Promise<void> {
  app.decorate('metrics', metrics);
  if (!metrics.enabled) return;

  app.addHook('onRoute', (route) => {
    route.onResponse = withHook(route.onResponse, responseHook(metrics, route));
  });
  // A request no route matched has no hook of its own: this one counts it and lets the others pass.
  const unmatched = new Map<string, ResponseRecorder>();
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) {
      let series = unmatched.get(req.method);
      if (!series) unmatched.set(req.method, (series = metrics.unmatched(req.method)));
      series.record(reply.statusCode, reply.elapsedTime);
    }
    done();
  });

  const authorized = bearerCheck(serving.token);
  if (serving.port === undefined) {
    app.get(METRICS_PATH, { schema: { hide: true } }, async (req, reply) => {
      if (!authorized(req.headers.authorization)) return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: TOKEN_REQUIRED });
      return reply.type(metrics.contentType).send(await metrics.exposition());
    });
    return;
  }

  const server = metricsListener(metrics, authorized, serving.requestTimeoutMs, (err) => app.log.error({ err }, 'metrics could not be written'));
  // Opened with the app (a port that cannot be bound stops start-up), closed with it.
  app.addHook('onReady', async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(serving.port, serving.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : serving.port;
    app.log.info(`metrics served on http://${serving.host.includes(':') ? `[${serving.host}]` : serving.host}:${port}${METRICS_PATH}`);
  });
  app.addHook('onClose', async () => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}

type ResponseHook = (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/** The onResponse hook of one route: its series are found here, once, not per request. */
function responseHook(metrics: Metrics, route: RouteOptions): ResponseHook {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.length === 1) {
    const series = metrics.route(route.url, methods[0]!);
    return (_req, reply, done) => {
      series.record(reply.statusCode, reply.elapsedTime);
      done();
    };
  }
  const byMethod = new Map(methods.map((m) => [m, metrics.route(route.url, m)]));
  const first = byMethod.get(methods[0]!)!;
  return (req, reply, done) => {
    (byMethod.get(req.method) ?? first).record(reply.statusCode, reply.elapsedTime);
    done();
  };
}


const digest = (s: string) => createHash('sha256').update(s).digest();

/** `Authorization: Bearer <token>` compared in constant time (digests of equal length); anything passes when no token is set. */
export function bearerCheck(token: string | undefined): (header: string | undefined) => boolean {
  if (token === undefined) return () => true;
  const expected = digest(token);
  return (header) => {
    const given = typeof header === 'string' ? /^bearer +(\S+) *$/i.exec(header)?.[1] : undefined;
    return given !== undefined && timingSafeEqual(digest(given), expected);
  };
}

/** The METRICS_PORT listener: GET (or HEAD) /metrics, `{ error }` for anything else. */
function metricsListener(metrics: Metrics, authorized: (header: string | undefined) => boolean, requestTimeoutMs: number, onError: (err: unknown) => void): Server {
  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string>, head: boolean) => {
    res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)), 'x-content-type-options': 'nosniff' });
    res.end(head ? undefined : body);
  };
  const error = (res: ServerResponse, status: number, message: string, head: boolean, headers: Record<string, string> = {}) =>
    send(res, status, JSON.stringify({ error: message }), { ...headers, 'content-type': 'application/json; charset=utf-8' }, head);

  return createServer({ requestTimeout: requestTimeoutMs, headersTimeout: requestTimeoutMs }, (req: IncomingMessage, res: ServerResponse) => {
    const head = req.method === 'HEAD';
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH) return error(res, 404, `no route for ${req.method} ${path}; metrics are at ${METRICS_PATH}`, head);
    if (req.method !== 'GET' && !head) return error(res, 405, `method ${req.method} not allowed on ${METRICS_PATH}; use GET`, false, { allow: 'GET, HEAD' });
    if (!authorized(req.headers.authorization)) return error(res, 401, TOKEN_REQUIRED, head, { 'www-authenticate': 'Bearer realm="metrics"' });
    metrics.exposition().then(
      (body) => send(res, 200, body, { 'content-type': metrics.contentType }, head),
      (err: unknown) => {
        onError(err);
        error(res, 500, 'internal error', head);
      },
    );
  });
}
