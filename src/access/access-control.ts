// The access policy of interface B, enforced per route from its declaration (`access` in defineRoute),
// always from the route Fastify matched (never from the raw URL: an absolute-form request line, HEAD
// or an odd path shape reaches the same route and meets the same checks):
//   free route            → anyone, limited per client IP (FREE_RATE_LIMIT);
//   paid, x-api-key sent  → must be a valid key (else 401), limited per key (KEY_RATE_LIMIT), no payment;
//                           a key this instance's copy does not hold (it may be new) is limited per client
//                           IP, then looked up in the database: 503 (source "database") when it cannot say;
//   paid, no key          → limited per client IP (PAID_IP_RATE_LIMIT) *before* any payment is looked
//                           at, then x402 (402 with the price; verified before, settled after the handler);
//   paid, x402 not set up → 401 saying an API key is required, and how to ask for one (OPERATOR_CONTACT).
// A paid handler's answer is delivered only with a grant for its route (grant.ts): that check is the
// invariant. The one way a paid route's work starts earlier is the x402 prefetch, also in grant.ts: once a
// payment goes to the facilitator's verify, its answer is computed meanwhile and held, unsent, for the grant.
// Routes declared `rateLimited: false` (/health) are never limited; status pages (`reference: true`)
// count in a bucket of their own, with the reference documents (src/reference/reference-routes.ts). Payment
// headers on free routes are ignored. A request admitted (free, or a valid key for a paid route: its grant)
// whose answer is remembered and fresh is answered from the access hook itself (the fast lane,
// answer-memo.ts): the same checks, limits and usage count, no handler. So is a repeat voucher for such an
// answer, once the payment gate has verified it for the matched route (payForAnswer), settled as on send.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CatalogEntry } from '../catalog/route.ts';
import { AppError } from '../lib/errors.ts';
import { unauthorized } from './challenge.ts';
import { clientBucketName } from './rate-limit/client-bucket.ts';
import { howToGetKey } from './keys/key-contact.ts';
import { catalogEntryOf, grantRequired, matchedEntry, paidEntryOf } from './grant.ts';
import type { KeyIdentity, KeyStore } from './keys/keys.ts';
import type { UsageCounter } from '../db/usage.ts';
import { countKeyedCall, keyOnlyRefusal, needsCredential } from './usage.ts';
import { afterLimit, type Limit, type RateLimiter } from './rate-limit/rate-limit.ts';
import { sendRemembered, type AnswerMemo, type RememberedBody } from '../edge/answer-memo.ts';
import { withHook } from '../edge/route-hooks.ts';

export interface PaymentGate {
  /** Runs before the handler of `entry`: answers 402/503 itself, or grants the request once its payment is verified. */
  preHandler(req: FastifyRequest, reply: FastifyReply, entry: CatalogEntry): Promise<unknown>;
  /**
   * Pays for a remembered answer (`remembered()`, taken once the payment is granted) with the request's payment when
   * its scheme decides that payment alone (a repeat voucher): answers the request itself (true: the data and
   * PAYMENT-RESPONSE, or a refusal) without the route; false: the route runs, and either decides the payment itself
   * (nothing held) or makes the answer for the grant it finds (the remembered one was no longer fresh).
   */
  payForAnswer?(req: FastifyRequest, reply: FastifyReply, entry: CatalogEntry, remembered: () => RememberedBody | undefined): Promise<boolean>;
  /** Runs on send: settles on success, cancels on failure. */
  onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown>;
  /** Runs once the answer is sent: whatever did not end in a stored success gives up its payment identifier. */
  onResponse(req: FastifyRequest): Promise<void>;
}

export interface AccessControlOptions {
  keys: KeyStore;
  limits: { keyPerMinute: number; paidIpPerMinute: number; freePerMinute: number };
  /** Counts the requests of each bucket: in this process, or in Redis shared by the instances (REDIS_URL). */
  limiter: RateLimiter<LimitScope>;
  /** Answers served again while their sources are fresh, once a request is admitted. */
  answers?: AnswerMemo;
  /** undefined when x402 is off (X402_ENABLED=false or X402_PAY_TO unset). */
  payments: PaymentGate | undefined;
  /** Counts keyed calls per key, day and route (GET /v1/usage). */
  usage?: UsageCounter;
  /** OPERATOR_CONTACT: where to ask for an API key, said by every 401 that asks for one (key-contact.ts). */
  operatorContact?: string;
}

/** Who is calling a paid route, as far as the request says. */
export type Credential =
  | { kind: 'key'; key: KeyIdentity }
  | { kind: 'invalid-key' }
  /** A key this instance's copy does not hold: looked up in the database after the rate limit. */
  | { kind: 'unverified-key' }
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

type LimitScope = 'key' | 'paid' | 'free' | 'ref';

/** The per-client bucket of a free request: status pages count apart from the data routes. */
export function freeBucketOf(req: FastifyRequest, entry: CatalogEntry): string {
  return clientBucketName(entry.def.reference ? 'ref' : 'free', req.ip, req.raw.socket);
}

/** `<prefix>:<key id>`, made once per key rather than per request. */
function keyBuckets(prefix: string): (id: string) => string {
  const names = new Map<string, string>();
  return (id) => {
    let name = names.get(id);
    if (name === undefined) {
      if (names.size >= 10_000) names.clear(); // a bound: keys come and go
      names.set(id, (name = `${prefix}:${id}`));
    }
    return name;
  };
}

/** Installs the hooks on the (encapsulated) context that holds interface B's routes. Register routes after it. */
export async function installAccessControl(app: FastifyInstance, opts: AccessControlOptions): Promise<void> {
  app.decorateRequest('credential', null);
  app.decorateRequest('grant', null);

  // 0. Every paid route registered in this context (its HEAD twin included) gets the grant check
  // in front of its handler: without a grant for the matched route, the handler never runs.
  const getAKey = howToGetKey(opts.operatorContact);
  const keyRequired = `${KEY_REQUIRED}. ${getAKey}`;
  const refusal = () => (opts.payments ? new AppError(402, PAYMENT_REQUIRED) : unauthorized(keyRequired, false));
  app.addHook('onRoute', (route) => {
    const entry = paidEntryOf(route);
    if (entry) route.handler = grantRequired(entry, route.handler, refusal);
  });

  // 1. Who is it, and is it within its limit? One bucket per key, per paid-route client IP (no key, or
  // an invalid one: it still counts against its IP before it is refused), per free-route client IP, and
  // per client IP on the status pages (apart from the data routes). Routes declared rateLimited: false
  // (/health) are never limited. A key-only route (/v1/usage) counts apart from the key's paid calls.
  const { limits, limiter } = opts;
  const LIMITS: Record<LimitScope, Limit<LimitScope>> = {
    key: { scope: 'key', max: limits.keyPerMinute, per: 'per API key' },
    paid: { scope: 'paid', max: limits.paidIpPerMinute, per: 'per client without an API key' },
    free: { scope: 'free', max: limits.freePerMinute, per: 'per client' },
    ref: { scope: 'ref', max: limits.freePerMinute, per: 'per client on the reference pages' },
  };
  // Each route of the catalog gets this check as a hook of its own, made for its entry when it is
  // registered (so nothing is looked up per request; HEAD twins included).
  const keyBucket = keyBuckets('key');
  const keyOnlyBucket = keyBuckets('key-only');
  const accessHook = (entry: CatalogEntry) => (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    req.catalogEntry = entry;
    const credential = needsCredential(entry.access) ? (req.credential = credentialOf(req, opts)) : null;
    if (entry.def.rateLimited === false) return done();
    // Within its limit, a remembered answer is served here (see serveRemembered), else the route runs.
    const verdict =
      credential?.kind === 'key'
        ? limiter.check((entry.access === 'key' ? keyOnlyBucket : keyBucket)(credential.key.id), LIMITS.key, reply)
        : credential
          ? limiter.check(clientBucketName('paid', req.ip, req.raw.socket), LIMITS.paid, reply)
          : limiter.check(freeBucketOf(req, entry), entry.def.reference ? LIMITS.ref : LIMITS.free, reply);
    afterLimit(verdict, req, reply, serveRemembered, done);
  };
  app.addHook('onRoute', (route) => {
    const entry = catalogEntryOf(route);
    if (entry) route.onRequest = withHook(route.onRequest, accessHook(entry));
  });

  // The cached path's fast lane: a GET on a free route, or on a paid one with a valid key (which is its
  // grant for the matched route, made and counted by check() exactly as on the full path), whose answer is
  // remembered and still fresh (answer-memo.ts), is answered here. So is a paid one with a payment its scheme
  // decides alone (a repeat voucher: the gate verifies it for the matched route and settles it as on the full
  // path, payForAnswer). Anything else — another payment, an unknown, invalid or missing key, HEAD, an answer not
  // remembered — takes the full path.
  const answers = opts.answers;
  const payForAnswer = opts.payments?.payForAnswer?.bind(opts.payments);
  const serveRemembered = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): boolean => {
    if (answers === undefined || req.method !== 'GET') return false;
    const credential = req.credential;
    if (credential?.kind === 'x402') return payForAnswer !== undefined && req.headers['payment-signature'] !== undefined && paidFromMemo(req, reply, done);
    if (credential !== null && credential.kind !== 'key') return false;
    const remembered = answers.serve(req.catalogEntry!.url, req.url);
    if (remembered === undefined) return false;
    if (credential !== null && check(req, reply) !== undefined) return false;
    sendRemembered(reply, remembered);
    return true;
  };
  const paidFromMemo = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): boolean => {
    const entry = req.catalogEntry!;
    if (!answers!.holds(entry.url, req.url)) return false;
    payForAnswer!(req, reply, entry, () => answers!.serve(entry.url, req.url)).then((answered) => (answered ? undefined : done()), done);
    return true;
  };

  // 3. Reject what the credential does not allow; a valid key is a grant for the matched route (and
  // its call is counted for the key's usage). A request with no credentials at all gets the route's
  // 402 challenge here, before its parameters are validated: the challenge takes nothing, and agent
  // catalogs probe a paid resource by its bare URL (without the parameters it needs), so they must
  // see the challenge rather than a 400.
  const payments = opts.payments;
  // (A free route's request has no credential: nothing to do. Only an unknown key, looked up in the
  // database, and the x402 challenge wait for anything; the rest is decided without a promise.)
  const check = (req: FastifyRequest, reply: FastifyReply): Promise<unknown> | undefined => {
    const credential = req.credential;
    if (credential?.kind === 'unverified-key') return lookedUp(req, opts.keys).then((known) => ((req.credential = known), check(req, reply)));
    if (credential?.kind === 'invalid-key') throw unauthorized(INVALID_KEY, payments !== undefined && matchedEntry(req)?.access === 'paid');
    const keyOnly = keyOnlyRefusal(req, getAKey);
    if (keyOnly) throw keyOnly;
    if (credential?.kind === 'none') throw unauthorized(keyRequired, false);
    if (credential?.kind === 'key') {
      req.grant = { entry: matchedEntry(req)!, via: 'key' };
      countKeyedCall(req, opts.usage);
    }
    if (credential?.kind === 'x402' && !hasPaymentHeader(req)) return payments!.preHandler(req, reply, matchedEntry(req)!);
    return undefined;
  };
  app.addHook('preValidation', (req, reply, done) => {
    if (req.credential === null) return done();
    let pending: Promise<unknown> | undefined;
    try {
      pending = check(req, reply);
    } catch (err) {
      return done(err as Error);
    }
    if (!pending) return done();
    // The challenge (402) is sent by the gate itself: then the request ends here.
    pending.then(() => (reply.sent ? undefined : done()), done);
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

const INVALID: Credential = { kind: 'invalid-key' };
const UNVERIFIED: Credential = { kind: 'unverified-key' };

/** Who is calling, from this instance's copy of the keys alone (never waits). */
function credentialOf(req: FastifyRequest, opts: AccessControlOptions): Credential {
  const given = req.headers['x-api-key'];
  if (given !== undefined) {
    const verdict = typeof given === 'string' ? opts.keys.verify(given) : null;
    if (verdict === 'unknown') return UNVERIFIED;
    return verdict ? { kind: 'key', key: verdict } : INVALID;
  }
  return opts.payments ? { kind: 'x402' } : { kind: 'none' };
}

/** The database's verdict on a key the copy does not hold; DatabaseUnavailableError (503) when it cannot answer. */
async function lookedUp(req: FastifyRequest, keys: KeyStore): Promise<Credential> {
  const key = await keys.lookup(req.headers['x-api-key'] as string);
  return key ? { kind: 'key', key } : INVALID;
}
