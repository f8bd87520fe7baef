// Enforces the access policy on interface B's paid routes:
//   x-api-key present → must be a valid key (else 401), rate-limited per key, no payment taken;
//   no key            → x402 payment (402 with the price; verified before, settled after the handler);
//   x402 not set up   → 401 saying an API key is required.
// Free routes are untouched, and payment headers on them are ignored.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../http/errors.ts';
import type { KeyIdentity, KeyStore } from './keys.ts';

export interface PaymentGate {
  /** Runs before the handler: answers 402/503 itself or marks the request as paid-pending. */
  preHandler(req: FastifyRequest, reply: import('fastify').FastifyReply): Promise<unknown>;
  /** Runs on send: settles on success, cancels on failure. */
  onSend(req: FastifyRequest, reply: import('fastify').FastifyReply, payload: unknown): Promise<unknown>;
}

export interface AccessControlOptions {
  keys: KeyStore;
  keyRateLimitPerMinute: number;
  /** undefined when x402 is off (X402_ENABLED=false or X402_PAY_TO unset). */
  payments: PaymentGate | undefined;
}

export type Credential = { kind: 'key'; key: KeyIdentity } | { kind: 'x402' };

declare module 'fastify' {
  interface FastifyRequest {
    credential: Credential | null;
  }
}

export const INVALID_KEY = 'invalid or revoked API key';
export const KEY_REQUIRED = 'an API key is required (x-api-key header); x402 payments are not configured on this server';

/** Installs the hooks on the (encapsulated) context that holds interface B's routes. */
export async function installAccessControl(app: FastifyInstance, opts: AccessControlOptions): Promise<void> {
  app.decorateRequest('credential', null);

  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.config.catalog?.access !== 'paid') return;
    const given = req.headers['x-api-key'];
    if (given !== undefined) {
      const key = typeof given === 'string' ? opts.keys.verify(given) : null;
      if (!key) throw new AppError(401, INVALID_KEY);
      req.credential = { kind: 'key', key };
      return;
    }
    if (!opts.payments) throw new AppError(401, KEY_REQUIRED);
    req.credential = { kind: 'x402' };
  });

  // Per-key limit; requests without a key are not counted here.
  await app.register(rateLimit, {
    max: opts.keyRateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: (req) => (req.credential?.kind === 'key' ? `key:${req.credential.key.id}` : 'none'),
    allowList: (req) => req.credential?.kind !== 'key',
    errorResponseBuilder: (_req, ctx) =>
      new AppError(429, `rate limit exceeded: ${ctx.max} requests per minute per API key; retry in ${Math.ceil(ctx.ttl / 1000)} s`),
  });

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
