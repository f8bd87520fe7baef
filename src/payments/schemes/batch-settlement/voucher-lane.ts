// batch-settlement's lane (core/lane.ts): a repeat voucher admitted and charged here, without the SDK's per-call work.
//
// Admitted only when the SDK, in effect, already checked it: the SDK's verify accepted a voucher of the same channel
// for the same route (voucher-check.ts keeps that payload), and this payload equals it in every part but
// the three that change per call: the voucher's cumulative amount and signature, and the payment identifier (whose
// format the gate has checked: idempotency.ts). Everything the SDK matched and validated before (the requirements
// the payload accepted, the channel's config and its id, the extensions it echoes) is then the same; the payment
// table is built once per process (resource-server.ts), so what matched then matches now. The changing parts are
// checked as the SDK's local check does (voucher-check.ts isNextVoucher: the next cumulative amount, within the
// balance, above the claimed total, the on-chain state fresh, signed by the payer authorizer).
//
// The channel is then reserved and, once the call is answered, charged, with the SDK's own state changes
// (@x402/evm batch-settlement server: handleAfterVerify's reservation of a locally verified voucher,
// handleBeforeSettle's commit, clearPendingRequest's release), through the same storage, so the SDK's path and
// this one share one state and one writer (channel-lease.ts). The charge event is recorded as recordBatchEvents
// records it, written behind. A busy channel, a changed state, anything unexpected: the SDK decides instead.
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { isBatchSettlementVoucherPayload } from '@x402/evm';
import type { BatchSettlementEvmScheme, Channel } from '@x402/evm/batch-settlement/server';
import type { LaneAdmission, SchemeLane } from '../../core/scheme.ts';
import type { BatchEventRecorder } from './batch-events.ts';
import { isNextVoucher, nextPendingId, type AcceptedChannels, type ChannelConfig, type Voucher } from './voucher-check.ts';

/** The SDK's reasons (@x402/evm batch-settlement), as its settle would answer them. */
const CHANNEL_BUSY = 'invalid_batch_settlement_evm_channel_busy';
const MISSING_CHANNEL = 'invalid_batch_settlement_evm_missing_channel';
const CHARGE_EXCEEDS_SIGNED = 'invalid_batch_settlement_evm_charge_exceeds_signed_cumulative';

/** How long a reservation holds when its call never ends: the SDK's bounds on maxTimeoutSeconds. */
const MIN_PENDING_TTL_MS = 5_000;
const MAX_PENDING_TTL_MS = 10 * 60 * 1000;

/** The payload's parts that change from one voucher call to the next (true: compared by type only). */
type PerCall = { readonly [key: string]: PerCall | true };
const PER_CALL: PerCall = {
  payload: { voucher: { maxClaimableAmount: true, signature: true } },
  extensions: { 'payment-identifier': { info: { id: true } } },
};

export interface LaneCounts {
  /** Vouchers the lane admitted. */
  admitted: number;
}

export function voucherLane(scheme: BatchSettlementEvmScheme, accepted: AcceptedChannels, events: BatchEventRecorder, counts: LaneCounts = { admitted: 0 }): SchemeLane {
  return {
    async admit(payload, route) {
      const raw = payload.payload as unknown;
      if (!isBatchSettlementVoucherPayload(raw)) return undefined;
      const voucher = raw.voucher as Voucher;
      const config = raw.channelConfig as ChannelConfig;
      const before = accepted.payload(voucher.channelId, route);
      if (!before || !equalButPerCall(before, payload)) return undefined;
      const requirements = payload.accepted as PaymentRequirements;
      const storage = scheme.getStorage();
      const channel = await storage.get(voucher.channelId);
      if (!channel || pendingLive(channel, Date.now()) || !(await isNextVoucher(channel, voucher, config, requirements, scheme.getOnchainStateTtlMs()))) return undefined;

      // The reservation, as the SDK's after-verify hook makes it for a locally verified voucher; against the state
      // as it is now (what was checked above must still hold, or the SDK decides).
      const pendingId = nextPendingId();
      const now = Date.now();
      let reserved = false;
      await storage.updateChannel(voucher.channelId, (current) => {
        if (!current || pendingLive(current, now) || !sameState(current, channel)) return current;
        reserved = true;
        return {
          ...current,
          channelConfig: raw.channelConfig,
          signedMaxClaimable: voucher.maxClaimableAmount,
          signature: voucher.signature,
          lastRequestTimestamp: now,
          pendingRequest: { pendingId, signedMaxClaimable: voucher.maxClaimableAmount, expiresAt: now + pendingTtlMs(requirements.maxTimeoutSeconds) },
        };
      });
      if (!reserved) return undefined;
      counts.admitted++;
      return admission(voucher, config, requirements, pendingId);
    },
  };

  function admission(voucher: Voucher, config: ChannelConfig, requirements: PaymentRequirements, pendingId: string): LaneAdmission {
    const storage = scheme.getStorage();
    const failed = (errorReason: string): SettleResponse => ({ success: false, errorReason, errorMessage: errorReason, transaction: '', network: requirements.network });
    return {
      requirements,
      payer: config.payer,

      // The SDK's commit of a voucher's charge (handleBeforeSettle) and the settle response it answers with.
      async commit() {
        // Set inside the update (which runs before updateChannel resolves): declared wide, as the compiler cannot tell.
        let previous = undefined as Channel | undefined;
        let outcome = 'busy' as 'missing' | 'busy' | 'cap_exceeded' | 'committed';
        const increment = BigInt(requirements.amount);
        await storage.updateChannel(voucher.channelId, (current) => {
          if (!current) return ((outcome = 'missing'), current);
          if (current.pendingRequest?.pendingId !== pendingId) return ((outcome = 'busy'), current);
          const charged = BigInt(current.chargedCumulativeAmount) + increment;
          if (charged > BigInt(voucher.maxClaimableAmount)) return ((outcome = 'cap_exceeded'), { ...current, pendingRequest: undefined });
          outcome = 'committed';
          previous = current;
          return {
            ...current,
            chargedCumulativeAmount: charged.toString(),
            signedMaxClaimable: voucher.maxClaimableAmount,
            signature: voucher.signature,
            lastRequestTimestamp: Date.now(),
            pendingRequest: undefined,
          };
        });
        if (outcome === 'missing') return failed(MISSING_CHANNEL);
        if (outcome === 'cap_exceeded') return failed(CHARGE_EXCEEDS_SIGNED);
        if (outcome !== 'committed' || !previous) return failed(CHANNEL_BUSY);
        const cumulative = (BigInt(previous.chargedCumulativeAmount) + increment).toString();
        recordCharge(voucher, config, requirements, cumulative);
        return {
          success: true,
          payer: previous.channelConfig.payer.toLowerCase(),
          transaction: '',
          network: requirements.network,
          amount: '',
          extra: {
            channelState: {
              channelId: previous.channelId,
              balance: previous.balance,
              totalClaimed: previous.totalClaimed,
              withdrawRequestedAt: previous.withdrawRequestedAt,
              refundNonce: String(previous.refundNonce),
              chargedCumulativeAmount: cumulative,
            },
            chargedAmount: requirements.amount,
          },
        } as SettleResponse;
      },

      // The SDK's release of a reservation whose call failed (clearPendingRequest).
      async release() {
        await storage.updateChannel(voucher.channelId, (current) => (current && current.pendingRequest?.pendingId === pendingId ? { ...current, pendingRequest: undefined } : current));
      },
    };
  }

  /** The call's charge event, as recordBatchEvents records a voucher's (written behind). */
  function recordCharge(voucher: Voucher, config: ChannelConfig, requirements: PaymentRequirements, cumulative: string) {
    const event = { type: 'charge' as const, network: requirements.network, channelId: voucher.channelId, payer: config.payer, amount: requirements.amount, cumulative, at: new Date() };
    try {
      if (events.recordBehind) events.recordBehind(event);
      else void Promise.resolve(events.record(event)).catch(() => {});
    } catch {
      // The charge is in the channel's state either way; the event is its ledger trace (recordBatchEvents logs the same failure).
    }
  }
}

function pendingLive(channel: Channel, now: number): boolean {
  return channel.pendingRequest !== undefined && channel.pendingRequest.expiresAt > now;
}

function pendingTtlMs(maxTimeoutSeconds: number | undefined): number {
  return Math.min(MAX_PENDING_TTL_MS, Math.max(MIN_PENDING_TTL_MS, Math.max(0, maxTimeoutSeconds ?? 0) * 1000));
}

/** The state a voucher was checked against is still the channel's (nothing charged, claimed or synced since). */
function sameState(current: Channel, checked: Channel): boolean {
  return (
    current.chargedCumulativeAmount === checked.chargedCumulativeAmount &&
    current.balance === checked.balance &&
    current.totalClaimed === checked.totalClaimed &&
    current.onchainSyncedAt === checked.onchainSyncedAt &&
    current.withdrawRequestedAt === checked.withdrawRequestedAt &&
    current.refundNonce === checked.refundNonce
  );
}

/** Whether two decoded payloads are equal (as JSON values) in every part but the per-call ones. */
export function equalButPerCall(a: PaymentPayload, b: PaymentPayload): boolean {
  return equal(a, b, PER_CALL);
}

function equal(a: unknown, b: unknown, perCall: PerCall | true | undefined): boolean {
  if (perCall === true) return typeof a === typeof b;
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  // Own enumerable keys, as Object.keys lists them, walked with for…in: it allocates no array per object.
  let keys = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k)) continue;
    keys++;
    if (!Object.hasOwn(b, k)) return false;
    const part = perCall && Object.hasOwn(perCall, k) ? perCall[k] : undefined;
    if (!equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], part)) return false;
  }
  for (const k in b) if (Object.hasOwn(b, k)) keys--;
  return keys === 0;
}
