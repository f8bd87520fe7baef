// What every request meets before any route: request ids, CORS for browsers and browser-based agents,
// security headers, and the `{ error }` body for what the framework or Node would otherwise answer in
// their own shapes (a malformed URL, an unknown path, another method, a huge header, a slow client,
// a missing Host).
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { RouteContext } from '../catalog/context.ts';
import { VERSION } from '../version.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Echo a caller's sane x-request-id; otherwise `<boot id>-<counter>`: unique per process, with no UUID per request. */
export function requestIds() {
  const boot = randomBytes(4).toString('hex');
  let n = 0;
  return (req: { headers: Record<string, string | string[] | undefined> }): string => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && REQUEST_ID.test(given) ? given : `${boot}-${(++n).toString(36)}`;
  };
}

/** Headers a browser client may send, and may read, across origins. */
export const CORS_ALLOWED_HEADERS = ['x-api-key', 'payment-signature', 'x-payment', 'x-request-id', 'content-type'];
export const CORS_EXPOSED_HEADERS = [
  'payment-required',
  'payment-response',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-request-id',
];

/** The JSON error body written straight to a socket, for errors Node raises before Fastify sees a request. */
function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request not received in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'request headers (or the URL) are too large']
        : [400, 'malformed HTTP request'];
  const body = JSON.stringify({ error: message });
  this.log.debug({ code: err.code }, `client error: ${message}`);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Errors Fastify's router raises before a route is chosen (a URL that is not valid percent-encoding). */
function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
  void reply.code(status).type('application/json; charset=utf-8').send({ error: err.code === 'FST_ERR_BAD_URL' ? 'malformed URL (invalid percent-encoding)' : err.message });
}

/** Fastify options this module owns. */
const serverOptions = (requestTimeoutMs: number) =>
  ({
    clientErrorHandler,
    frameworkErrors,
    http: {
      // Node would answer a missing Host with an empty 400 of its own; let it through to the check below.
      requireHostHeader: false,
      // Node checks request timeouts on this interval (default 30 s), so a 408 comes at most this late.
      connectionsCheckingInterval: Math.min(1000, requestTimeoutMs),
      headersTimeout: requestTimeoutMs,
    },
  }) as Partial<FastifyServerOptions>;

async function register(app: FastifyInstance, ctx: RouteContext): Promise<void> {
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (req.raw.httpVersion === '1.1' && req.headers.host === undefined) {
      return void reply.code(400).send({ error: 'the Host header is required (HTTP/1.1)' });
    }
    done();
  });

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 86_400,
  });

  // Security headers on every response. API answers are JSON, so their policy can be strict; the
  // Swagger UI pages under /docs send their own CSP (hashes of their inline code), see openapi.ts.
  await app.register(helmet, {
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    // Helmet's default, but written out: HSTS only means something behind TLS, where it is wanted.
    strictTransportSecurity: { maxAge: 15_552_000, includeSubDomains: true },
  });

  // Another method on a known path is a 405 that says which ones it takes; an unknown path a 404.
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const known = ctx.catalog.find(path) !== undefined || app.hasRoute({ method: 'GET', url: path });
    if (known && req.method !== 'GET' && req.method !== 'HEAD') {
      return void reply.code(405).header('allow', 'GET, HEAD').send({ error: `method ${req.method} not allowed on ${path}; use GET` });
    }
    void reply.code(404).send({ error: `no route for ${req.method} ${path}` });
  });

  // A small index instead of a 404 at the root.
  app.get('/', { schema: { hide: true } }, async () => ({
    name: 'marketgate',
    version: VERSION,
    description: 'Token risk check (free, /risk) and market data for crypto and US equities (/v1).',
    links: {
      docs: '/docs',
      openapi: '/openapi.json',
      llms_txt: '/llms.txt',
      agent_card: '/.well-known/agent.json',
      market_status: '/v1/status',
      risk_status: '/risk/v1/status',
    },
  }));
}

export const registerEdge = Object.assign(register, { serverOptions });
