// A retry of a payment that its scheme recognises itself, instead of by its payment identifier's claim in the ledger.
//
// The payment-identifier store (idempotency.ts) costs two ledger writes on every paid call (the claim, then the
// answer), before and after the handler: fine beside `exact`'s settlement on chain, most of a batch-settlement
// voucher's cost. A voucher needs none of it: a channel takes one call at a time, a client retries the call it is
// waiting for, so the retry of a voucher is always the channel's last voucher (or the one running), and the
// answer that voucher paid for is kept with the channel's state, by the one instance that holds the channel
// (channel-lease.ts), written behind with it and handed over with it. A scheme that can do this says so
// (PaymentScheme.replays); verify.ts and settle.ts then ask it instead of the store.
//
// The identifier is still read and checked (a malformed one is a 400); it is not claimed: a retry is recognised
// by the payment itself, whatever identifier it carries.
import type { PaymentPayload } from '@x402/core/types';
import type { StoredResponse } from '../../db/payment-ids.ts';

export interface SchemeReplays {
  /** Whether this payload's retries are recognised here (a voucher: yes; a deposit, settled on chain: no). */
  covers(payload: PaymentPayload): boolean;
  /**
   * The answer this very payment was given for `request`, if it was (a payment running on this instance is waited
   * for first); else the ticket under which it runs now, which a retry of it waits for.
   */
  open(payload: PaymentPayload, request: string): Promise<{ answer: StoredResponse } | { ticket: ReplayTicket }>;
}

export interface ReplayTicket {
  /** The payment was admitted (verified): what it pays with stays on this instance until close(). */
  admitted(): void;
  /** Its answer, kept before it is sent: a retry gets the same. */
  keep(response: StoredResponse): void;
  /** The request is over, whatever became of it. */
  close(): void;
}
