// What every request meets before any route: request ids, CORS for browsers and browser-based agents,
// security headers, and the `{ error }` body for what the framework or Node would otherwise answer in
// their own shapes (a malformed URL, an unknown path, another method, a huge header, a slow client,
// a missing Host).
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import helmet from 'helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { INTERFACE_VERSION, VERSION } from '../lib/version.ts';
import { nearestName } from '../lib/nearest-name.ts';
import { NO_QUERY } from './validator.ts';
import type { PressureGauge } from './pressure.ts';

/** The liveness routes a load balancer asks (catalog/health.ts). */
const HEALTH_PATHS = new Set(['/health', '/risk/health']);

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
export const CORS_ALLOWED_HEADERS = ['x-api-key', 'payment-signature', 'x-payment', 'x-request-id'];
export const CORS_EXPOSED_HEADERS = [
  'payment-required',
  'payment-response',
  'retry-after',
  'www-authenticate',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-request-id',
];

const STRICT_API_CSP = { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } };

/** Runs helmet's middleware once against a stub response and keeps the headers it set. */
function helmetHeaders(options: Parameters<typeof helmet>[0]): Record<string, string> {
  const headers: Record<string, string> = {};
  const stub = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  helmet(options)({} as never, stub as never, () => {});
  return headers;
}

/**
 * Security headers, computed once with helmet (@fastify/helmet rebuilds helmet's middleware on every
 * request, measured as the largest single cost of a cached answer; and every header costs CPU on every
 * response). JSON answers get what OWASP's REST Security Cheat Sheet lists for APIs: a CSP that
 * forbids everything (default-src 'none', frame-ancestors 'none': no framing, which every current
 * browser honours, so X-Frame-Options, its legacy form, is left to the HTML pages), nosniff, and HSTS
 * when the request came over HTTPS (browsers ignore it over plain HTTP). HTML pages (/docs) get
 * helmet's full set; Swagger UI then replaces the CSP with its own (openapi.ts).
 */
export const SECURITY_HEADERS = {
  api: helmetHeaders({
    contentSecurityPolicy: STRICT_API_CSP,
    xFrameOptions: false,
    strictTransportSecurity: false,
    // Meaningless for JSON answers (they are not documents that navigate, embed or are embedded):
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    referrerPolicy: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  }),
  hsts: helmetHeaders({
    strictTransportSecurity: { maxAge: 15_552_000, includeSubDomains: true },
    contentSecurityPolicy: false,
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    referrerPolicy: false,
    xContentTypeOptions: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xFrameOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  }),
  html: helmetHeaders({ contentSecurityPolicy: STRICT_API_CSP, crossOriginResourcePolicy: { policy: 'cross-origin' }, strictTransportSecurity: false }),
};

/** Headers every answer carries, errors included: security headers and CORS's Allow-Origin. */
const ALWAYS = { ...SECURITY_HEADERS.api, 'access-control-allow-origin': '*' };

/**
 * Fastify options this module owns: request ids, and the `{ error }` answers to what Node's parser
 * or Fastify's router reject before any hook runs — these carry the same x-request-id and security
 * headers as every other answer.
 */
const serverOptions = (requestTimeoutMs: number) => {
  const genReqId = requestIds();

  /** The JSON error written straight to a socket, for errors Node raises before Fastify sees a request. */
  function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, message] =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request not received in time']
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'request headers (or the URL) are too large']
          : [400, 'malformed HTTP request'];
    const body = JSON.stringify({ error: message });
    const id = genReqId({ headers: {} });
    this.log.debug({ code: err.code, reqId: id }, `client error: ${message}`);
    if (socket.writable) {
      const headers = Object.entries({ ...ALWAYS, 'x-request-id': id })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${headers}Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(err);
  }

  /** Errors Fastify's router raises before a route is chosen (a URL it cannot decode, an over-long parameter). */
  function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
    const message = err.code === 'FST_ERR_BAD_URL' ? 'malformed URL (invalid percent-encoding, or a host or port that is not valid)' : err.message;
    void reply.code(status).headers(ALWAYS).header('x-request-id', req.id).type('application/json; charset=utf-8').send({ error: message });
  }

  return {
    genReqId,
    clientErrorHandler,
    frameworkErrors,
    http: {
      // Node would answer a missing Host with an empty 400 of its own; let it through to the check below.
      requireHostHeader: false,
      // Node checks request timeouts on this interval (default 30 s), so a 408 comes at most this late.
      connectionsCheckingInterval: Math.min(1000, requestTimeoutMs),
      headersTimeout: requestTimeoutMs,
    },
  } as Partial<FastifyServerOptions>;
};

export interface EdgeOptions {
  /** True for a path some route serves (a known path asked with another method is a 405, not a 404). */
  knownPath(path: string): boolean;
  /** Under pressure every request is answered 503 here (pressure.ts), but for /health (unless the heap is nearly exhausted) and the operator's `exempt` paths (/metrics). */
  pressure?: PressureGauge;
  exempt?: (path: string) => boolean;
}

async function register(app: FastifyInstance, opts: EdgeOptions): Promise<void> {
  // The request id, security headers (see SECURITY_HEADERS) and CORS on every answer, in one hook
  // that runs first, so even the answers refused right here carry them. CORS: any origin may read the
  // GET answers. Allow-Origin goes on every answer (so a cache that stored an answer to curl still
  // serves a browser); the list of readable headers (payment, rate limit, request id) only when the
  // request has an Origin, as every cross-origin browser request does. The policy is static, so it is
  // these few lines rather than @fastify/cors, which costs a closure and several headers on every answer.
  const exposed = { 'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', ') };
  const pressure = opts.pressure;
  // /health says whether the instance can serve: it answers under pressure unless the heap is nearly exhausted.
  const underPressureExempt = (path: string, critical: boolean) => opts.exempt?.(path) === true || (!critical && HEALTH_PATHS.has(path));
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    reply.headers(ALWAYS);
    if (req.headers.origin !== undefined) reply.headers(exposed);
    if (req.protocol === 'https') reply.headers(SECURITY_HEADERS.hsts);
    if (pressure?.reason !== undefined && !underPressureExempt(pathOf(req.url), pressure.critical)) {
      return void reply
        .code(503)
        .header('retry-after', String(pressure.limits.retryAfterS))
        .send({ error: `the server is under pressure: ${pressure.reason}; retry later` });
    }
    if (req.raw.httpVersion === '1.1' && req.headers.host === undefined) {
      return void reply.code(400).send({ error: 'the Host header is required (HTTP/1.1)' });
    }
    // Node passes any target starting with `*` (only OPTIONS may use the asterisk form, RFC 9112 §3.2.4),
    // and the router reads what follows it as a path from / (`GET *health` served /health). Refused like
    // the other malformed targets Node itself refuses (`GET health`).
    if (req.raw.url?.startsWith('*') && req.method !== 'OPTIONS') {
      return void reply.code(400).send({ error: "malformed request target: '*' is for OPTIONS only; a path starts with /" });
    }
    done();
  });
  // Preflight: any path, answered here; the browser then makes the real request.
  const preflight = {
    ...exposed,
    'access-control-allow-methods': 'GET, HEAD',
    'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
    'access-control-max-age': '86400',
  };
  app.options('*', { schema: { hide: true } }, (req, reply) => {
    if (req.headers.origin === undefined || req.headers['access-control-request-method'] === undefined) {
      return void reply.code(400).send({ error: 'a CORS preflight needs the Origin and Access-Control-Request-Method headers' });
    }
    void reply.code(204).headers(preflight).send();
  });

  // Another method on a known path is a 405 that says which ones it takes; an unknown path a 404 naming the
  // nearest route and /docs. Answered in onRequest for any method but GET, HEAD and OPTIONS (QUERY, PROPFIND,
  // anything Node accepts), before Fastify looks for a body: QUERY would otherwise be a 400 for its missing
  // Content-Type, and a body no route takes is never read.
  const getPaths: string[] = [];
  app.addHook('onRoute', (route) => {
    const methods = ([] as string[]).concat(route.method);
    if (methods.includes('GET') && !/[*:]/.test(route.url) && !getPaths.includes(route.url)) getPaths.push(route.url);
  });
  const notFound = (req: FastifyRequest, reply: FastifyReply): void => {
    const path = pathOf(req.url);
    const known = opts.knownPath(path) || hasGetRoute(app, path);
    if (known && req.method !== 'GET' && req.method !== 'HEAD') {
      return void reply.code(405).header('allow', 'GET, HEAD').send({ error: `method ${req.method} not allowed on ${path}; use GET` });
    }
    if (known) return void reply.code(404).send({ error: `no route for ${req.method} ${path}` });
    const nearest = nearestPath(path, getPaths);
    const hint = nearest === undefined ? '.' : `; did you mean ${nearest}?`;
    void reply.code(404).send({ error: `no route for ${req.method} ${req.url.split('?')[0]}${hint} Every route is listed at /docs.` });
  };
  app.addHook('onRequest', (req, reply, done) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return done();
    notFound(req, reply);
  });
  app.setNotFoundHandler(notFound);

  // A small index instead of a 404 at the root (it takes no parameters, as no route takes one it does not declare).
  app.get('/', { schema: { hide: true, querystring: NO_QUERY } }, async () => ({
    name: 'marketgate',
    version: VERSION,
    interfaces: { token_risk: { path: '/risk', version: INTERFACE_VERSION.risk }, market_data: { path: '/v1', version: INTERFACE_VERSION.market } },
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

/** The path of a request target: origin-form as it is; absolute-form (`http://host/path`) without scheme and host. */
export function pathOf(url: string): string {
  const path = url.split('?')[0]!;
  if (path.startsWith('/')) return path;
  const afterScheme = /^[^/]*:\/\/[^/]*(\/.*)?$/.exec(path);
  return afterScheme ? (afterScheme[1] ?? '/') : path;
}

/** A request target in origin form: absolute-form (`http://host/path?q`) as `/path?q`; any other form as it is. */
export function originForm(url: string): string {
  if (url.startsWith('/')) return url;
  const path = pathOf(url);
  if (!path.startsWith('/')) return url;
  const query = url.indexOf('?');
  return query < 0 ? path : `${path}${url.slice(query)}`;
}

/**
 * The route a mistyped path most likely meant: the same path without a trailing slash or in another case,
 * else the nearest by edit distance (a typo or two). Undefined when nothing is near.
 */
export function nearestPath(path: string, paths: readonly string[]): string | undefined {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const same = paths.find((p) => p.toLowerCase() === trimmed.toLowerCase());
  if (same !== undefined && same !== path) return same;
  return nearestName(trimmed, paths, 3);
}

/** Whether a GET route serves `path`; false for a path the router cannot even look up. */
function hasGetRoute(app: FastifyInstance, path: string): boolean {
  try {
    return app.hasRoute({ method: 'GET', url: path });
  } catch {
    return false;
  }
}

export const registerEdge = Object.assign(register, { serverOptions });

/**
 * On RISK_HOSTNAME, interface A also answers at the root: /v1/token-risk → /risk/v1/token-risk (Fastify's
 * rewriteUrl). An absolute-form target (`http://risk.example.com/v1/token-risk`, which HTTP/1.1 servers must
 * accept) is read by its path, or it would become /riskhttp://….
 */
export function riskHostRewrite(hostname: string) {
  return (req: { url?: string; headers: { host?: string } }): string => {
    const given = req.url ?? '/';
    const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
    if (host !== hostname) return given;
    const url = originForm(given);
    if (!url.startsWith('/') || url === '/risk' || url.startsWith('/risk/') || url.startsWith('/risk?')) return url;
    return `/risk${url}`;
  };
}
