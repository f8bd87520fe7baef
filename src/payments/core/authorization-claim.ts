// One authorization, one request at a time: a retry storm or a duplicating proxy sends the same
// PAYMENT-SIGNATURE many times at once; the same authorization may come under several payment identifiers, to
// several instances. Before its payment is verified, a request claims its authorization (network, payer,
// nonce: an EIP-3009 authorization, a Solana transaction) in the ledger database (src/db/authorization-claims.ts), so that only the holder reaches the facilitator:
//
//   claimed                         → processed (verify, the handler, settle); `firstSeen` when its row is new
//                                     (no earlier request of it may have moved money: its scheme may verify it
//                                     locally, resource-server.ts)
//   held by a request still running → waits for it (here without polling when it runs in this process; another
//                                     instance's: every POLL_MS), then decides again
//   settled and answered            → 402: the authorization was already used (one authorization buys one answer)
//   held past the wait              → 503 + Retry-After: resend the same payment; it is never charged twice
//
// The holder renews its lease while it runs, never past validBefore. When it ends: settled → `used`; nothing
// taken → the claim is released (a retry may pay); money may have moved without an answer → the lease ends now,
// and the next request of the authorization takes it over (resume.ts asks the chain).
import { randomUUID } from 'node:crypto';
import type { PaymentLog } from './log.ts';
import type { AuthorizationClaims, AuthorizationKey } from '../../db/authorization-claims.ts';
import { AppError } from '../../lib/errors.ts';
import { moneyMayHaveMoved, type PaymentAttempt } from './attempt.ts';
import { CHAIN_GRACE_MS } from './outcome.ts';
import { SETTLE_ANSWER_GRACE_MS } from './facilitator.ts';

/** The reason of the 402 for a request whose authorization another request already settled and was answered for. */
export const AUTHORIZATION_USED =
  'authorization_already_used: this payment\'s authorization (payer and nonce) was already settled for another request, which got the answer: one authorization pays for one answer; nothing more was charged. Sign a new payment; to get a lost answer back, send a payment with a payment identifier and resend that same payment';

/** A claim's lease (ms), renewed every third of it while its request runs. */
export const AUTHORIZATION_LEASE_MS = 5000;
/** How often a request waiting for another instance's holder asks again. */
const POLL_MS = 100;
/** How often one waiting for a holder in this process does (it is woken at the holder's end otherwise). */
const HERE_POLL_MS = 1000;

export type ClaimDecision = 'process' | 'used';

export interface AuthorizationLockOptions {
  claims: AuthorizationClaims;
  log: PaymentLog;
  leaseMs?: number;
}

interface Held {
  done: Promise<void>;
  finish: () => void;
  heartbeat: NodeJS.Timeout;
}

export class AuthorizationLocks {
  private readonly running = new Map<string, Held>();
  /** The claims this process holds, by attempt. */
  private readonly owners = new WeakMap<PaymentAttempt, { key: AuthorizationKey; owner: string; held: Held }>();

  constructor(private readonly opts: AuthorizationLockOptions) {}

  private get leaseMs(): number {
    return this.opts.leaseMs ?? AUTHORIZATION_LEASE_MS;
  }

  /**
   * Claims the attempt's authorization before it is verified; waits while another request holds it. `process`:
   * this request holds it (or the payment carries none); `used`: answered already (the caller's 402). Throws a 503
   * when the holder is still at work past the longest it can take, a DatabaseUnavailableError (503) when the
   * ledger cannot be asked.
   */
  async acquire(attempt: PaymentAttempt): Promise<ClaimDecision> {
    const auth = attempt.authorization;
    if (!auth) return 'process';
    const key: AuthorizationKey = { network: auth.network, payer: auth.payer, nonce: auth.nonce };
    const validBeforeMs = auth.validBefore * 1000;
    // The holder's settle may be listened to until validBefore (+ its grace), then the chain until it is sure.
    const waitUntil = validBeforeMs + SETTLE_ANSWER_GRACE_MS + CHAIN_GRACE_MS;
    const owner = randomUUID();
    // Once it was found held, it is never new to the ledger again for this request (firstSeen stays false).
    for (let seen = false; ; seen = true) {
      const now = Date.now();
      const claim = await this.opts.claims.claim(key, owner, Math.min(now + this.leaseMs, validBeforeMs), validBeforeMs, seen);
      if (claim.state === 'claimed') {
        attempt.firstSeen = claim.fresh;
        this.owners.set(attempt, { key, owner, held: this.hold(name(key), key, owner, validBeforeMs) });
        return 'process';
      }
      if (claim.state === 'used') return 'used';
      const left = waitUntil - now;
      if (left <= 0) throw stillProcessing();
      // A lease that lapsed meanwhile (or a claim released between two statements): claimed again at once.
      await this.settleOrPoll(name(key), Math.min(left, claim.live ? POLL_MS : 10), left);
    }
  }

  /** The request is over: its claim becomes `used`, is released, or its lease ends (see the header). Never throws. */
  async finish(attempt: PaymentAttempt): Promise<void> {
    const held = this.owners.get(attempt);
    if (!held) return;
    this.owners.delete(attempt);
    const { key, owner } = held;
    const id = name(key);
    try {
      if (attempt.settlement === 'settled' || attempt.resume?.kind === 'landed') await this.opts.claims.used(key, owner);
      else if (moneyMayHaveMoved(attempt)) await this.opts.claims.lapse(key, owner);
      else await this.opts.claims.release(key, owner);
    } catch (err) {
      // Its lease lapses on its own: the next request of the authorization takes it over.
      this.opts.log.warn({ err: String((err as Error)?.message ?? err), payer: key.payer, nonce: key.nonce }, "x402: an authorization's claim could not be ended");
    } finally {
      // A request that took over a lapsed lease in this process holds its own entry.
      if (this.running.get(id) === held.held) this.running.delete(id);
      clearInterval(held.held.heartbeat);
      held.held.finish();
    }
  }

  private hold(id: string, key: AuthorizationKey, owner: string, validBeforeMs: number): Held {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const heartbeat = setInterval(() => {
      const until = Math.min(Date.now() + this.leaseMs, validBeforeMs);
      if (until <= Date.now()) return clearInterval(heartbeat);
      this.opts.claims.renew(key, owner, until).catch((err) => this.opts.log.warn({ err: String((err as Error)?.message ?? err) }, "x402: an authorization claim's lease could not be renewed"));
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    heartbeat.unref();
    const held = { done, finish, heartbeat };
    this.running.set(id, held);
    return held;
  }

  /**
   * Waits until the holder finishes when it runs here (asking the ledger again every HERE_POLL_MS all the same: a
   * request that never reaches its end leaves only its lease), else `ms` (another instance's: poll).
   */
  private async settleOrPoll(id: string, ms: number, left: number): Promise<void> {
    const here = this.running.get(id)?.done;
    let timer: NodeJS.Timeout | undefined;
    const wait = new Promise<void>((resolve) => (timer = setTimeout(resolve, here ? Math.min(left, HERE_POLL_MS) : ms)));
    await Promise.race([wait, here ?? wait]);
    clearTimeout(timer);
  }
}

const name = (key: AuthorizationKey) => `${key.network} ${key.payer.toLowerCase()} ${key.nonce.toLowerCase()}`;

/** Seconds a request whose authorization is still being processed elsewhere is told to wait. */
const RETRY_AFTER_S = 5;

function stillProcessing(): AppError {
  return new AppError(
    503,
    "another request with this payment's authorization is still being processed and its outcome cannot be told yet: resend this same PAYMENT-SIGNATURE (with the same payment identifier, if it has one) after Retry-After to get the answer; it will not be charged twice; do not sign a new payment",
    'facilitator',
    { retryAfterS: RETRY_AFTER_S },
  );
}
