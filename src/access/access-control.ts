// The access policy of interface B, enforced per route from its declaration (`access` in defineRoute):
//   free route            → anyone, limited per client IP (FREE_RATE_LIMIT);
//   paid, x-api-key sent  → must be a valid key (else 401), limited per key (KEY_RATE_LIMIT), no payment;
//   paid, no key          → limited per client IP (PAID_IP_RATE_LIMIT) *before* any payment is looked
//                           at, then x402 (402 with the price; verified before, settled after the handler);
//   paid, x402 not set up → 401 saying an API key is required.
// Routes declared `rateLimited: false` (/health) are never limited. Payment headers on free routes are ignored.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../http/errors.ts';
import { clientBucket } from './client-bucket.ts';
import type { KeyIdentity, KeyStore } from './keys.ts';
import type { UsageCounter } from '../db/usage.ts';
import { countKeyedCall, keyOnlyRefusal, needsCredential } from './usage.ts';

export interface PaymentGate {
  /** Runs before the handler: answers 402/503 itself or marks the request as paid-pending. */
  preHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  /** Runs on send: settles on success, cancels on failure. */
  onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown>;
}

export interface AccessControlOptions {
  keys: KeyStore;
  limits: { keyPerMinute: number; paidIpPerMinute: number; freePerMinute: number };
  /** undefined when x402 is off (X402_ENABLED=false or X402_PAY_TO unset). */
  payments: PaymentGate | undefined;
  /** Counts keyed calls per key, day and route (GET /v1/usage). */
  usage?: UsageCounter;
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

/**
 * x-ratelimit-* go with the 429 (with Retry-After), not with every answer: three headers on every
 * response measured as a tenth of a cached answer's cost; the limits themselves are in /v1/status.
 */
export const WITHOUT_QUOTA_HEADERS = { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false };

const LIMIT_SCOPES = { key: 'per API key', paid: 'per client without an API key', free: 'per client' } as const;

/** Installs the hooks on the (encapsulated) context that holds interface B's routes. Register routes after it. */
export async function installAccessControl(app: FastifyInstance, opts: AccessControlOptions): Promise<void> {
  app.decorateRequest('credential', null);

  // 1. Who is it? (No rejection yet: an invalid key still counts against its IP's limit below.)
  app.addHook('onRequest', (req, _reply, done) => {
    if (needsCredential(req.routeOptions.config.catalog?.access)) req.credential = credentialOf(req, opts);
    done();
  });

  // 2. Rate limits: one bucket per key, per paid-route client IP, or per free-route client IP.
  // The plugin adds its check to each route registered after it (route-level onRequest, so after step 1).
  const { limits } = opts;
  await app.register(rateLimit, {
    hook: 'onRequest',
    addHeadersOnExceeding: WITHOUT_QUOTA_HEADERS,
    timeWindow: 60_000,
    keyGenerator: (req) => (req.credential?.kind === 'key' ? `key:${req.credential.key.id}` : `${req.credential ? 'paid' : 'free'}:${clientBucket(req.ip)}`),
    max: (_req, bucket) => (bucket.startsWith('key:') ? limits.keyPerMinute : bucket.startsWith('paid:') ? limits.paidIpPerMinute : limits.freePerMinute),
    errorResponseBuilder: (req, ctx) => {
      const scope = LIMIT_SCOPES[req.credential?.kind === 'key' ? 'key' : req.credential ? 'paid' : 'free'];
      return new AppError(429, `rate limit exceeded: ${ctx.max} requests per minute ${scope}; retry in ${Math.ceil(ctx.ttl / 1000)} s`);
    },
  });

  // 3. Reject what the credential does not allow.
  app.addHook('preValidation', (req, _reply, done) => {
    const kind = req.credential?.kind;
    if (kind === 'invalid-key') return done(new AppError(401, INVALID_KEY));
    const keyOnly = keyOnlyRefusal(req);
    if (keyOnly) return done(keyOnly);
    if (kind === 'none') return done(new AppError(401, KEY_REQUIRED));
    countKeyedCall(req, opts.usage);
    done();
  });

  // 4. x402: verify before the handler (after validation: a bad parameter is a 400 and nothing is taken), settle after.
  const payments = opts.payments;
  if (payments) {
    app.addHook('preHandler', async (req, reply) => {
      if (req.credential?.kind !== 'x402') return;
      return payments.preHandler(req, reply);
    });
    app.addHook('onSend', async (req, reply, payload) => {
      if (req.credential?.kind !== 'x402') return payload;
      return payments.onSend(req, reply, payload);
    });
  }
}

function credentialOf(req: FastifyRequest, opts: AccessControlOptions): Credential {
  const given = req.headers['x-api-key'];
  if (given !== undefined) {
    const key = typeof given === 'string' ? opts.keys.verify(given) : null;
    return key ? { kind: 'key', key } : { kind: 'invalid-key' };
  }
  return opts.payments ? { kind: 'x402' } : { kind: 'none' };
}
