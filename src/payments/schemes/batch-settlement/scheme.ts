// `batch-settlement` on an EVM network (@x402/evm's BatchSettlementEvmScheme, batch-settlement.ts): one deposit
// into an on-chain channel, then a signed voucher per call, checked by this server and claimed and settled in
// batches. Offered once the facilitator's /supported lists it; never prefetched (a voucher is checked here in
// milliseconds, nothing to overlap, and a refund never runs the handler); a call's charge is its settle result's
// `extra.chargedAmount` (its `amount` is a deposit, or empty); a refund pays for no call.
import { isBatchSettlementRefundPayload, isBatchSettlementVoucherPayload } from '@x402/evm';
import type { PaymentScheme } from '../../core/scheme.ts';
import { BATCH_SETTLEMENT, type BatchSettlement } from './batch-settlement.ts';

const ATOMIC = /^\d+$/;

export function batchSettlementScheme(batch: BatchSettlement, network: string): PaymentScheme {
  return {
    scheme: BATCH_SETTLEMENT,
    network,
    offer: () => batch.offer(),
    prefetch: false,
    chargedAmount(result) {
      const charged = (result.extra as { chargedAmount?: unknown } | undefined)?.chargedAmount;
      return typeof charged === 'string' && ATOMIC.test(charged) ? charged : undefined;
    },
    isRefund: isBatchSettlementRefundPayload,
    offChain: isBatchSettlementVoucherPayload,
    replays: batch.replays,
    lane: batch.lane,
  };
}
