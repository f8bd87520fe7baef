// The access policy of interface B, enforced per route from its declaration (`access` in defineRoute),
// always from the route Fastify matched (never from the raw URL: an absolute-form request line, HEAD
// or an odd path shape reaches the same route and meets the same checks):
//   free route            → anyone, limited per client IP (FREE_RATE_LIMIT);
//   paid, x-api-key sent  → must be a valid key (else 401), limited per key (KEY_RATE_LIMIT), no payment;
//   paid, no key          → limited per client IP (PAID_IP_RATE_LIMIT) *before* any payment is looked
//                           at, then x402 (402 with the price; verified before, settled after the handler);
//   paid, x402 not set up → 401 saying an API key is required.
// A paid handler's answer is delivered only with a grant for its route (grant.ts): that check is the
// invariant. The one way a paid route's work starts earlier is the x402 prefetch, also in grant.ts: once a
// payment goes to the facilitator's verify, its answer is computed meanwhile and held, unsent, for the grant.
// Routes declared `rateLimited: false` (/health) are never limited; status pages (`reference: true`)
// count in a bucket of their own. Payment headers on free routes are ignored.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import { AppError } from '../http/errors.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { clientBucket } from './client-bucket.ts';
import { grantRequired, matchedEntry, paidEntryOf } from './grant.ts';
import type { KeyIdentity, KeyStore } from './keys.ts';
import type { UsageCounter } from '../db/usage.ts';
import { countKeyedCall, keyOnlyRefusal, needsCredential } from './usage.ts';

export interface PaymentGate {
  /** Runs before the handler of `entry`: answers 402/503 itself, or grants the request once its payment is verified. */
  preHandler(req: FastifyRequest, reply: FastifyReply, entry: CatalogEntry): Promise<unknown>;
  /** Runs on send: settles on success, cancels on failure. */
  onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown>;
  /** Runs once the answer is sent: whatever did not end in a stored success gives up its payment identifier. */
  onResponse(req: FastifyRequest): Promise<void>;
}

export interface AccessControlOptions {
  keys: KeyStore;
  limits: { keyPerMinute: number; paidIpPerMinute: number; freePerMinute: number };
  /** undefined when x402 is off (X402_ENABLED=false or X402_PAY_TO unset). */
  payments: PaymentGate | undefined;
  /** Counts keyed calls per key, day and route (GET /v1/usage). */
  usage?: UsageCounter;
  /** Counts the 429s by scope. */
  metrics: Pick<Metrics, 'rateLimited'>;
}

/** Who is calling a paid route, as far as the request says. */
export type Credential =
  | { kind: 'key'; key: KeyIdentity }
  | { kind: 'invalid-key' }
  | { kind: 'x402' }
  /** No key, and x402 is not configured. */
  | { kind: 'none' };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on paid routes only; null on free ones. */
    credential: Credential | null;
  }
}

export const INVALID_KEY = 'invalid or revoked API key';
export const KEY_REQUIRED = 'an API key is required (x-api-key header); x402 payments are not configured on this server';
export const PAYMENT_REQUIRED = 'payment required';

/**
 * x-ratelimit-* go with the 429 (with Retry-After), not with every answer: three headers on every
 * response measured as a tenth of a cached answer's cost; the limits themselves are in /v1/status.
 */
export const WITHOUT_QUOTA_HEADERS = { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false };

const LIMIT_SCOPES = { key: 'per API key', paid: 'per client without an API key', free: 'per client', ref: 'per client on the status pages' } as const;

/** The per-client bucket of a free request: status pages count apart from the data routes. */
export function freeBucketOf(req: FastifyRequest): string {
  return `${matchedEntry(req)?.def.reference ? 'ref' : 'free'}:${clientBucket(req.ip)}`;
}

/** The rate-limit bucket a request counts in (its prefix names the scope). */
function bucketOf(req: FastifyRequest): string {
  const credential = req.credential;
  if (credential?.kind === 'key') return `key:${credential.key.id}`;
  if (credential) return `paid:${clientBucket(req.ip)}`;
  return freeBucketOf(req);
}

const scopeOf = (bucket: string) => bucket.slice(0, bucket.indexOf(':')) as keyof typeof LIMIT_SCOPES;

/** Installs the hooks on the (encapsulated) context that holds interface B's routes. Register routes after it. */
export async function installAccessControl(app: FastifyInstance, opts: AccessControlOptions): Promise<void> {
  app.decorateRequest('credential', null);
  app.decorateRequest('grant', null);

  // 0. Every paid route registered in this context (its HEAD twin included) gets the grant check
  // in front of its handler: without a grant for the matched route, the handler never runs.
  const refusal = () => (opts.payments ? new AppError(402, PAYMENT_REQUIRED) : new AppError(401, KEY_REQUIRED));
  app.addHook('onRoute', (route) => {
    const entry = paidEntryOf(route);
    if (entry) route.handler = grantRequired(entry, route.handler, refusal);
  });

  // 1. Who is it? (No rejection yet: an invalid key still counts against its IP's limit below.)
  app.addHook('onRequest', (req, _reply, done) => {
    if (needsCredential(matchedEntry(req)?.access)) req.credential = credentialOf(req, opts);
    done();
  });

  // 2. Rate limits: one bucket per key, per paid-route client IP, per free-route client IP, and per
  // client IP on the status pages. The plugin adds its check to each route registered after it
  // (route-level onRequest, so after step 1).
  const { limits } = opts;
  const max = { key: limits.keyPerMinute, paid: limits.paidIpPerMinute, free: limits.freePerMinute, ref: limits.freePerMinute };
  await app.register(rateLimit, {
    hook: 'onRequest',
    addHeadersOnExceeding: WITHOUT_QUOTA_HEADERS,
    timeWindow: 60_000,
    keyGenerator: bucketOf,
    max: (_req, bucket) => max[scopeOf(bucket)],
    onExceeded: (_req, bucket) => opts.metrics.rateLimited(scopeOf(bucket)),
    errorResponseBuilder: (req, ctx) =>
      new AppError(429, `rate limit exceeded: ${ctx.max} requests per minute ${LIMIT_SCOPES[scopeOf(bucketOf(req))]}; retry in ${Math.ceil(ctx.ttl / 1000)} s`),
  });

  // 3. Reject what the credential does not allow; a valid key is a grant for the matched route (and
  // its call is counted for the key's usage). A request with no credentials at all gets the route's
  // 402 challenge here, before its parameters are validated: the challenge takes nothing, and agent
  // catalogs probe a paid resource by its bare URL (without the parameters it needs), so they must
  // see the challenge rather than a 400.
  const payments = opts.payments;
  app.addHook('preValidation', async (req, reply) => {
    const credential = req.credential;
    if (credential?.kind === 'invalid-key') throw new AppError(401, INVALID_KEY);
    const keyOnly = keyOnlyRefusal(req);
    if (keyOnly) throw keyOnly;
    if (credential?.kind === 'none') throw new AppError(401, KEY_REQUIRED);
    if (credential?.kind === 'key') {
      req.grant = { entry: matchedEntry(req)!, via: 'key' };
      countKeyedCall(req, opts.usage);
    }
    if (credential?.kind === 'x402' && !hasPaymentHeader(req)) return payments!.preHandler(req, reply, matchedEntry(req)!);
  });

  // 4. x402 with a payment: verify before the handler, after validation (a bad parameter is a 400 and
  // nothing is taken); the gate grants the matched route once the facilitator verified the payment (and
  // meanwhile may prefetch the route's answer, held until then). Settle after.
  if (payments) {
    app.addHook('preHandler', async (req, reply) => {
      if (req.credential?.kind !== 'x402' || req.grant) return;
      return payments.preHandler(req, reply, matchedEntry(req)!);
    });
    app.addHook('onSend', async (req, reply, payload) => {
      if (req.credential?.kind !== 'x402') return payload;
      return payments.onSend(req, reply, payload);
    });
    app.addHook('onResponse', async (req) => {
      if (req.credential?.kind === 'x402') await payments.onResponse(req);
    });
  }
}

/** Whether the request carries an x402 payment header (v2 PAYMENT-SIGNATURE, or v1 X-PAYMENT). */
function hasPaymentHeader(req: FastifyRequest): boolean {
  return req.headers['payment-signature'] !== undefined || req.headers['x-payment'] !== undefined;
}

function credentialOf(req: FastifyRequest, opts: AccessControlOptions): Credential {
  const given = req.headers['x-api-key'];
  if (given !== undefined) {
    const key = typeof given === 'string' ? opts.keys.verify(given) : null;
    return key ? { kind: 'key', key } : { kind: 'invalid-key' };
  }
  return opts.payments ? { kind: 'x402' } : { kind: 'none' };
}
