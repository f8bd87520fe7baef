// A way to pay: one scheme on one network family, as the x402 SDK itself is organised (@x402/evm/exact,
// @x402/evm/batch-settlement, @x402/svm/exact). Each lives in a folder of its own, src/payments/schemes/
// <scheme>-<family>/, behind this one interface; the core (this folder) knows schemes only through it, and no
// scheme imports another. x402.ts builds the schemes the settings ask for and hands them to the gate.
//
// What a scheme says:
//   offer()          what it offers every paid route (its `accepts` entry) and how it registers with the SDK's
//                    resource server; at once when the settings decide it, or once the facilitator's /supported
//                    says (a promise: rejected while the facilitator cannot be reached, undefined when it does
//                    not support it: then it is not offered)
//   prefetch         whether the route's work may start while its payment is verified
//   authorizationOf  the one-time authorization a payment carries: claimed (one request at a time), its
//                    validity bounded, its settle waited for until validBefore, and a crashed attempt resumed
//                    from it (resume.ts)
//   outcomes         how an outcome the facilitator did not tell is read from its chain (undefined: stays unknown)
//   chargedAmount    what a settled call was charged, when its settle result says so
//   isRefund         a payload that pays for no call (no ledger row)
//   localVerify      a payment this server can check itself, instead of the facilitator's /verify: the result,
//                    or undefined (then the facilitator verifies it; a local mismatch is never a refusal). Asked
//                    only of a payment whose authorization is new to the ledger (PaymentAttempt.firstSeen)
//   lane             a payment it admits and settles itself, without the SDK's per-call work (lane.ts): one the
//                    SDK already accepted in every part but those that change per call, which the lane checks
//                    as the SDK would; anything else is left to the SDK, never refused by the lane
import type { RouteConfig, x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import type { PaymentAuthorization } from './authorization.ts';
import type { SchemeReplays } from './replay.ts';
import type { OutcomeReader } from './outcome.ts';

/** One `accepts` entry of a route. */
export type PaymentOption = Exclude<RouteConfig['accepts'], readonly unknown[]>;

/** What a local verify reads of a payment: its payload and the terms it says it accepted. */
export interface LocalPayment {
  readonly payload: unknown;
  readonly accepted: { readonly scheme: string; readonly network: string };
}

export interface SchemeOffer {
  /** The route's `accepts` entry for this scheme (in the order the schemes are given). */
  accepts: PaymentOption;
  /** Registers the scheme (and its hooks) on the SDK's resource server. */
  register(resourceServer: x402ResourceServer): void;
}

export interface PaymentScheme {
  /** The scheme's name on the wire (`exact`, `batch-settlement`). */
  readonly scheme: string;
  /** The CAIP-2 network it takes payments on. */
  readonly network: string;
  offer(): SchemeOffer | Promise<SchemeOffer | undefined>;
  /** Its verify is a facilitator round trip worth overlapping with the route's work. */
  readonly prefetch: boolean;
  authorizationOf?(payload: Pick<PaymentPayload, 'payload'>): PaymentAuthorization | undefined;
  readonly outcomes?: OutcomeReader;
  chargedAmount?(result: SettleResponse): string | undefined;
  isRefund?(payload: unknown): boolean;
  /** The payment checked here (its facilitator's settle checks it again before moving money); undefined: ask /verify. */
  localVerify?(payment: LocalPayment, requirements: Readonly<PaymentRequirements>): Promise<VerifyResponse | undefined>;
  /**
   * A payment that moves no money by itself (a batch-settlement voucher: what is claimed later is the channel's state,
   * itself written behind): its call's ledger row is written behind too (PaymentRecords.recordVerifiedBehind).
   */
  offChain?(payload: unknown): boolean;
  /** It recognises a retry of its own payments itself (replay.ts): those need no payment-identifier claim in the ledger. */
  readonly replays?: SchemeReplays;
  /** It admits and settles some of its payments itself (lane.ts). */
  readonly lane?: SchemeLane;
}

/**
 * A scheme's own path for a payment the SDK has, in effect, already checked: a repeat batch-settlement voucher on a
 * channel whose earlier voucher the SDK accepted for the same route, with the same payload in every part but the
 * voucher's amount and signature and the payment identifier. The SDK builds the route's whole 402, matches the
 * requirements, validates the extensions and runs its hook chain on every call; the lane checks only what changed.
 */
export interface SchemeLane {
  /**
   * Reserves what `payload` pays with for the call to `route` (the matched route's URL), when the lane can decide it
   * alone; undefined: the SDK decides it (a first payment, anything that differs, anything the lane would refuse).
   */
  admit(payload: PaymentPayload, route: string): Promise<LaneAdmission | undefined>;
}

/** A payment the lane admitted: reserved until it is committed (the call answered) or released (it failed). */
export interface LaneAdmission {
  /** What the payment paid for: the route's requirements, as the SDK matched them before. */
  readonly requirements: PaymentRequirements;
  /** Who pays (as the SDK's verify result names them). */
  readonly payer: string;
  /** Commits the charge: the settle response PAYMENT-RESPONSE carries (a failure when it could not be committed). */
  commit(): Promise<SettleResponse>;
  /** Gives the reservation up: nothing is charged. */
  release(): Promise<void>;
}

/** The schemes a server offers, in offer order, and what the core asks of them by a payment's requirements. */
export class PaymentSchemes {
  constructor(readonly list: readonly PaymentScheme[]) {}

  /** The scheme of a payment's requirements (its `scheme` and `network`). */
  of(r: { scheme: string; network: string } | undefined): PaymentScheme | undefined {
    return r ? this.list.find((s) => s.scheme === r.scheme && s.network === r.network) : undefined;
  }

  /** Who recognises a retry of this payment, when its scheme does it itself (replay.ts). */
  replaysOf(payload: PaymentPayload): SchemeReplays | undefined {
    const replays = this.of(payload.accepted)?.replays;
    return replays?.covers(payload) ? replays : undefined;
  }

  /** The lane of the scheme a payload says it pays with, if it has one. */
  laneOf(payload: PaymentPayload): SchemeLane | undefined {
    return this.of(payload.accepted)?.lane;
  }

  /** The authorization of a payload, read by the scheme it says it pays with (`accepted`). */
  authorizationOf(payload: Pick<PaymentPayload, 'payload'> & { accepted?: { scheme: string; network: string } }): PaymentAuthorization | undefined {
    return this.of(payload.accepted)?.authorizationOf?.(payload);
  }

  /** Where the outcomes of `network`'s payments are read (the first scheme on it that can). */
  outcomesOn(network: string): OutcomeReader | undefined {
    return this.list.find((s) => s.network === network && s.outcomes)?.outcomes;
  }

  /** The networks whose outcomes can be read, with their reader. */
  readers(): Map<string, OutcomeReader> {
    const found = new Map<string, OutcomeReader>();
    for (const s of this.list) if (s.outcomes && !found.has(s.network)) found.set(s.network, s.outcomes);
    return found;
  }

  /** A payload that pays for no call (a batch-settlement refund). */
  readonly isRefund = (payload: unknown): boolean => this.list.some((s) => s.isRefund?.(payload) ?? false);

  /**
   * The offers known without the facilitator, and whether they are all of them (then the payment table can
   * serve at once; else it is built again once the facilitator has said, ready()).
   */
  offersNow(): { offers: SchemeOffer[]; complete: boolean } {
    const offers: SchemeOffer[] = [];
    let complete = true;
    for (const s of this.list) {
      const o = s.offer();
      if (o instanceof Promise) {
        o.catch(() => {}); // asked again by offers()
        complete = false;
      } else offers.push(o);
    }
    return { offers, complete };
  }

  /** Every scheme's offer, the facilitator asked where needed (rejects while it cannot be reached). */
  async offers(): Promise<SchemeOffer[]> {
    const all = await Promise.all(this.list.map((s) => s.offer()));
    return all.filter((o): o is SchemeOffer => o !== undefined);
  }
}
