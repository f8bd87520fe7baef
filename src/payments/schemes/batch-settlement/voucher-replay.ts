// A retry of a voucher recognised by the voucher itself (core/replay.ts): a channel takes one call at a time and a
// client retries the call it is waiting for, so a retried voucher is the channel's last admitted one, or the one
// running. Its answer is kept with the channel's state by the instance that holds the channel (channel-lease.ts:
// keepAnswer, written behind and handed over with the state, never handed over while a call on it runs), so a
// retry reaching any instance gets the answer it paid for, with no ledger write on the call's path.
//
// A retry that arrives while its twin runs here waits for it (at most RUNNING_MS: a request that never ends, a
// socket torn down without the server's onResponse, lets go of its channel then).
import { isBatchSettlementVoucherPayload } from '@x402/evm';
import type { PaymentPayload } from '@x402/core/types';
import type { StoredResponse } from '../../../db/payment-ids.ts';
import type { ReplayTicket, SchemeReplays } from '../../core/replay.ts';
import type { KeptAnswer } from './channel-lease.ts';

/** What voucher-replay.ts needs of the channels' single writer (LeasedChannels). */
export interface AnswerKeeper {
  lastAnswer(channelId: string): Promise<KeptAnswer | undefined>;
  keepAnswer(channelId: string, answer: KeptAnswer): boolean;
  enter(channelId: string): void;
  leave(channelId: string): void;
}

/** The longest a running voucher holds its retries and its channel. */
export const RUNNING_MS = 60_000;

type Voucher = { channelId: string; signature: string };

export function voucherReplays(keeper: AnswerKeeper, log: { warn(obj: object, msg: string): void }): SchemeReplays {
  /** Vouchers running here (by signature), and how to wait for each. */
  const running = new Map<string, Promise<void>>();

  return {
    covers: (payload) => isBatchSettlementVoucherPayload(payload.payload),

    async open(payload: PaymentPayload, request: string) {
      const voucher = (payload.payload as { voucher: Voucher }).voucher;
      const signature = voucher.signature.toLowerCase();
      // Its twin runs here: wait for it to finish (its answer is then kept, or nothing was charged).
      for (let twin = running.get(signature); twin; twin = running.get(signature)) await twin;
      const kept = await keeper.lastAnswer(voucher.channelId);
      if (kept && kept.signature === signature && kept.request === request) return { answer: { status: kept.status, headers: kept.headers, body: kept.body } satisfies StoredResponse };
      return { ticket: ticket(voucher, signature, request) };
    },
  };

  function ticket(voucher: Voucher, signature: string, request: string): ReplayTicket {
    let finish!: () => void;
    running.set(signature, new Promise<void>((resolve) => (finish = resolve)));
    let entered = false;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      if (entered) keeper.leave(voucher.channelId);
      running.delete(signature);
      finish();
    };
    const timer = setTimeout(close, RUNNING_MS).unref();
    return {
      admitted() {
        if (closed || entered) return;
        entered = true;
        keeper.enter(voucher.channelId);
      },
      keep(response) {
        if (!keeper.keepAnswer(voucher.channelId, { signature, request, ...response })) {
          log.warn({ channelId: voucher.channelId }, 'x402 batch settlement: a paid answer could not be kept with its channel (no longer held here); a retry of its voucher is resynchronised by the scheme');
        }
      },
      close,
    };
  }
}
