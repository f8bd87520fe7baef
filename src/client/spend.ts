// maxSpendUsd: what one client may spend, counted in atto-dollars (10^-18 USD, bigint) so no amount is rounded.
// A payment is held before it is signed (a call that would pass the limit fails then, with nothing signed), and
// from the moment it is signed it counts as spent, at the amount signed, whatever the server then says: a signed
// `exact` authorization can be settled by whoever holds it until its validBefore, whatever the answer said was
// charged. Only the chain lowers the count: an authorization the chain shows unused once it has expired is
// released (chain.ts). A batch-settlement voucher never expires: it stays counted.
import { formatUnits, parseUnits } from 'viem';
import { MarketgateError } from './errors.ts';

const ATTO = 18;

/** An EIP-3009 authorization: what the chain is asked about once it has expired. */
export interface Expiring {
  network: string;
  /** The token's contract. */
  asset: `0x${string}`;
  payer: `0x${string}`;
  nonce: `0x${string}`;
  /** Unix seconds: from this block timestamp on, the authorization can never be used. */
  validBefore: bigint;
}

export interface Hold {
  atto: bigint;
  /**
   * `held`: being signed, or signed and its outcome not known; `spent`: known taken (a successful answer, or the
   * chain); `released`: never signed, or shown unused by the chain after it expired.
   */
  state: 'held' | 'spent' | 'released';
  /** Set once signed, for an EIP-3009 authorization: what lets the chain release it. */
  expiring?: Expiring;
}

export interface Spending {
  limitUsd: string;
  /** Known taken: a successful PAYMENT-RESPONSE, or the chain. */
  spentUsd: string;
  /** Signed, not known to be taken: counted against the limit all the same, until the chain shows it unused. */
  heldUsd: string;
}

/** What the chain says of an expiring authorization: used, unused and expired (never usable), or not yet known. */
export type ChainAnswer = 'used' | 'expired-unused' | 'open';

/** An atomic token amount in atto-dollars, the token taken as a USD stablecoin (1 token = $1). */
export function attoUsd(amount: bigint, decimals: number): bigint {
  return decimals <= ATTO ? amount * 10n ** BigInt(ATTO - decimals) : amount / 10n ** BigInt(decimals - ATTO);
}

/** Atto-dollars as atomic units of a token with `decimals` (rounded down). */
export function tokenUnits(atto: bigint, decimals: number): bigint {
  return decimals <= ATTO ? atto / 10n ** BigInt(ATTO - decimals) : atto * 10n ** BigInt(decimals - ATTO);
}

export const usd = (atto: bigint): string => formatUnits(atto, ATTO);

export class SpendLimit {
  readonly limit: bigint;
  private spent = 0n;
  private held = 0n;
  /** Held authorizations the chain may release once they have expired. */
  private readonly expiring = new Set<Hold>();

  constructor(maxSpendUsd: number) {
    if (typeof maxSpendUsd !== 'number' || !Number.isFinite(maxSpendUsd) || maxSpendUsd < 0) {
      throw new MarketgateError({ kind: 'config', path: 'maxSpendUsd', error: `must be a finite number of dollars ≥ 0, got ${String(maxSpendUsd)}` });
    }
    // The number as written (0.1 is "0.1", not 0.1000000000000000055...); toFixed only for exponent forms.
    const text = String(maxSpendUsd);
    this.limit = parseUnits(/e/i.test(text) ? maxSpendUsd.toFixed(ATTO) : text, ATTO);
  }

  /** What can still be held: the limit less what is spent and held. */
  get remaining(): bigint {
    return this.limit - this.spent - this.held;
  }

  /** Whether some held authorization could be released by the chain. */
  get releasable(): boolean {
    return this.expiring.size > 0;
  }

  /** Holds `atto` for a payment about to be signed; throws a spend-limit error when it does not fit. */
  hold(atto: bigint, path: string): Hold {
    if (atto > this.remaining) {
      const released = this.releasable ? ', not yet shown unused by the chain' : '';
      throw new MarketgateError({
        kind: 'spend-limit',
        path,
        error: `paying $${usd(atto)} would pass maxSpendUsd ($${usd(this.limit)}: $${usd(this.spent)} charged, $${usd(this.held)} held${released})`,
      });
    }
    this.held += atto;
    return { atto, state: 'held' };
  }

  /** The signed payment is an EIP-3009 authorization: the chain may release it once it has expired unused. */
  signed(hold: Hold, expiring: Expiring | undefined): void {
    if (hold.state !== 'held' || !expiring) return;
    hold.expiring = expiring;
    this.expiring.add(hold);
  }

  /** The payment was taken: counted at the amount held (signed), never at what an answer says was charged. */
  spend(hold: Hold): void {
    if (hold.state !== 'held') return;
    hold.state = 'spent';
    this.expiring.delete(hold);
    this.held -= hold.atto;
    this.spent += hold.atto;
  }

  /** Nothing was signed (signing failed). A signed payment is released only by `reconcile`. */
  unsigned(hold: Hold): void {
    if (hold.state !== 'held' || hold.expiring) return;
    this.release(hold);
  }

  /**
   * Asks `chain` about every held authorization: used → spent; unused and expired → released; otherwise held.
   * Resolves with whether anything was released.
   */
  async reconcile(chain: (expiring: Expiring[]) => Promise<ChainAnswer[]>): Promise<boolean> {
    const holds = [...this.expiring];
    if (!holds.length) return false;
    const answers = await chain(holds.map((h) => h.expiring!));
    let released = false;
    holds.forEach((hold, i) => {
      if (answers[i] === 'used') this.spend(hold);
      if (answers[i] === 'expired-unused' && hold.state === 'held') {
        this.release(hold);
        released = true;
      }
    });
    return released;
  }

  snapshot(): Spending {
    return { limitUsd: usd(this.limit), spentUsd: usd(this.spent), heldUsd: usd(this.held) };
  }

  private release(hold: Hold): void {
    hold.state = 'released';
    this.expiring.delete(hold);
    this.held -= hold.atto;
  }
}
