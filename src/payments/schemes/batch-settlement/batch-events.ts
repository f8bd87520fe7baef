// The batch-settlement events: every step money takes, from the payer's deposit to the receiver's settlement or
// the payer's refund. Where they are recorded is not here: whoever builds the app passes a BatchEventRecorder (by
// default the ledger database's x402_batch_events, src/db/batch-events.ts), and this module only turns the SDK's
// results into events for it.
//
//   deposit  the payer moved `amount` into the channel (on chain, `transaction`)
//   charge   one paid call was served and charged `amount`; the channel's cumulative charge is `cumulative`
//            (off chain: backed by the payer's signed voucher, claimable up to that cumulative amount)
//   claim    the receiver side claimed vouchers (on chain, accounting only): per channel, the new claimed total
//            and the `amount` it added
//   settle   claimed funds moved to the receiver (on chain, one transfer for every claimed channel)
//   refund   unused deposit went back to the payer (on chain)
import type { x402ResourceServer } from '@x402/core/server';
import type { SettleResultContext } from '@x402/core/types';
import { isBatchSettlementDepositPayload, isBatchSettlementRefundPayload, isBatchSettlementVoucherPayload } from '@x402/evm';
import type { BatchEvent } from '../../../db/batch-events.ts';

type Hex = `0x${string}`;

export type BatchSettlementEvent =
  | { type: 'deposit'; network: string; channelId: Hex; payer: Hex; amount: string; transaction: string }
  | { type: 'charge'; network: string; channelId: Hex; payer: Hex; amount: string; cumulative: string }
  | { type: 'claim'; network: string; transaction: string; claims: { channelId: Hex; payer: Hex; totalClaimed: string; amount: string }[] }
  | { type: 'settle'; network: string; transaction: string; receiver: Hex; token: Hex; amount: string }
  | { type: 'refund'; network: string; channelId: Hex; payer: Hex; amount: string; transaction: string };

/** Where batch-settlement events are recorded. Amounts are atomic token units. */
export interface BatchEventRecorder {
  record(event: BatchSettlementEvent & { at: Date }): void | Promise<void>;
  /** A voucher's charge, written behind with others (the ledger's: src/db/write-behind.ts); record() when absent. */
  recordBehind?(event: BatchSettlementEvent & { at: Date }): void;
}

/** Records deposits, charges and refunds as the resource server settles batch-settlement payments. */
export function recordBatchEvents(resourceServer: x402ResourceServer, events: BatchEventRecorder, onError: (err: unknown) => void): void {
  resourceServer.onAfterSettle(async (ctx) => {
    if (ctx.requirements.scheme !== 'batch-settlement') return;
    try {
      const at = new Date();
      // A voucher's call has its one charge: written behind, off the call's path (a deposit's events are not).
      const voucher = isBatchSettlementVoucherPayload(ctx.paymentPayload.payload);
      for (const event of batchEventsOf(ctx)) {
        if (voucher && events.recordBehind) events.recordBehind({ ...event, at });
        else await events.record({ ...event, at });
      }
    } catch (err) {
      onError(err);
    }
  });
}

/** The events of one successful batch-settlement settle call (a paid call, or a refund). */
export function batchEventsOf(ctx: SettleResultContext): BatchSettlementEvent[] {
  const raw = ctx.paymentPayload.payload as unknown;
  const { network } = ctx.requirements;
  const result = ctx.result;
  if (isBatchSettlementRefundPayload(raw)) {
    const { channelId } = raw.voucher;
    return [{ type: 'refund', network, channelId, payer: raw.channelConfig.payer, amount: result.amount ?? '0', transaction: result.transaction }];
  }
  if (!isBatchSettlementDepositPayload(raw) && !isBatchSettlementVoucherPayload(raw)) return [];
  const { channelId, maxClaimableAmount } = raw.voucher;
  const payer = raw.channelConfig.payer;
  // The server accepts a voucher only when it signs exactly (charged so far + price), and commits that charge:
  // the voucher's ceiling is the channel's cumulative charge after this call.
  const charged = (result.extra as { chargedAmount?: unknown } | undefined)?.chargedAmount;
  const charge: BatchSettlementEvent = {
    type: 'charge',
    network,
    channelId,
    payer,
    amount: typeof charged === 'string' ? charged : ctx.requirements.amount,
    cumulative: maxClaimableAmount,
  };
  if (!isBatchSettlementDepositPayload(raw)) return [charge];
  return [{ type: 'deposit', network, channelId, payer, amount: raw.deposit.amount, transaction: result.transaction }, charge];
}

/** A batch-settlement event as an `x402_batch_events` row takes it (amount at the top, the rest as detail). */
export function toBatchEventRow(e: BatchSettlementEvent & { at: Date }): BatchEvent {
  switch (e.type) {
    case 'deposit':
    case 'refund':
      return { type: e.type, at: e.at, network: e.network, channelId: e.channelId, payer: e.payer, amount: e.amount, transaction: e.transaction };
    case 'charge':
      return { type: e.type, at: e.at, network: e.network, channelId: e.channelId, payer: e.payer, amount: e.amount, detail: { cumulative: e.cumulative } };
    case 'claim':
      return { type: e.type, at: e.at, network: e.network, amount: e.claims.reduce((sum, c) => sum + BigInt(c.amount), 0n).toString(), transaction: e.transaction, detail: { claims: e.claims } };
    case 'settle':
      return { type: e.type, at: e.at, network: e.network, amount: e.amount, transaction: e.transaction, detail: { receiver: e.receiver, token: e.token } };
  }
}
