// maxSpendUsd: what one client may spend, counted in atto-dollars (10^-18 USD, bigint) so no amount is rounded.
// A payment is held before it is signed (a call that would pass the limit fails then, with nothing signed),
// then either charged (a successful PAYMENT-RESPONSE), released (an answer saying it was not taken), or left
// held when its outcome is unknown: money that may have moved counts as spent.
import { formatUnits, parseUnits } from 'viem';
import { MarketgateError } from './errors.ts';

const ATTO = 18;

export interface Hold {
  atto: bigint;
  open: boolean;
}

export interface Spending {
  limitUsd: string;
  /** Charged: calls whose PAYMENT-RESPONSE said success. */
  spentUsd: string;
  /** Held: payments signed whose outcome is not known yet (in flight, or lost with no answer). */
  heldUsd: string;
}

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

  constructor(maxSpendUsd: number) {
    if (typeof maxSpendUsd !== 'number' || !Number.isFinite(maxSpendUsd) || maxSpendUsd < 0) {
      throw new MarketgateError({ kind: 'config', path: 'maxSpendUsd', error: `must be a finite number of dollars ≥ 0, got ${String(maxSpendUsd)}` });
    }
    // The number as written (0.1 is "0.1", not 0.1000000000000000055...); toFixed only for exponent forms.
    const text = String(maxSpendUsd);
    this.limit = parseUnits(/e/i.test(text) ? maxSpendUsd.toFixed(ATTO) : text, ATTO);
  }

  /** What can still be held: the limit less what is charged and held. */
  get remaining(): bigint {
    return this.limit - this.spent - this.held;
  }

  /** Holds `atto` for a payment about to be signed; throws a spend-limit error when it does not fit. */
  hold(atto: bigint, path: string): Hold {
    if (atto > this.remaining) {
      throw new MarketgateError({
        kind: 'spend-limit',
        path,
        error: `paying $${usd(atto)} would pass maxSpendUsd ($${usd(this.limit)}: $${usd(this.spent)} charged, $${usd(this.held)} held)`,
      });
    }
    this.held += atto;
    return { atto, open: true };
  }

  /** The payment was taken: `atto` (what the answer says was charged; the held amount when it names none). */
  charge(hold: Hold, atto = hold.atto): void {
    if (!hold.open) return;
    hold.open = false;
    this.held -= hold.atto;
    this.spent += atto;
  }

  /** The payment was not taken (refused, cancelled, or never sent). */
  release(hold: Hold): void {
    if (!hold.open) return;
    hold.open = false;
    this.held -= hold.atto;
  }

  snapshot(): Spending {
    return { limitUsd: usd(this.limit), spentUsd: usd(this.spent), heldUsd: usd(this.held) };
  }
}
