// x402 `batch-settlement` beside `exact` (X402_BATCH_SETTLEMENT auto, true or drain): the payer deposits once into an
// on-chain channel, then signs a cumulative voucher per call; the server checks the voucher locally and
// serves the call with no facilitator round trip and no transaction; a schedule claims the vouchers and
// settles the claimed funds in batches (claim-scheduler.ts). Built on @x402/evm's BatchSettlementEvmScheme.
//
// The gate asks `offer()` when it builds its resource server. The answer is the scheme (with its hooks)
// and the route's second `accepts` entry — or nothing, logged once, when the facilitator's /supported does
// not list batch-settlement for the network (or lists it without a receiver authorizer while this server
// has none): registering the scheme then would make the SDK's initialisation fail for every route, `exact`
// included. `true` makes that a start-up failure (x402.ts); `drain` offers nothing (no new channels, no
// vouchers) and keeps claiming and settling the open channels until none owes anything, then says so once
// (the log, /v1/status): X402_BATCH_SETTLEMENT=false is then safe, with nothing left unclaimed.
//
// One payer's concurrent calls on one channel are serialised: the scheme admits one call per channel at a
// time (it reserves the channel between verify and settle); a second call waits here for the first to finish
// instead of being refused at once, for as long as a call may wait for the facilitator
// (X402_FACILITATOR_TIMEOUT_MS). It then meets the channel's
// new cumulative charge, gets the corrective 402 the scheme defines, and the stock client re-signs and
// retries once. Past the wait (a first call that takes longer, or a reservation held by another server
// instance), the answer is a 402 with reason `invalid_batch_settlement_evm_channel_busy`: retry shortly.
import type { FacilitatorClient } from '@x402/core/server';
import type { SupportedKind } from '@x402/core/types';
import { BatchSettlementEvmScheme, type ChannelStorage, type ChannelUpdateResult } from '@x402/evm/batch-settlement/server';
import { getAddress, zeroAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { PaymentSettings } from '../../settings.ts';
import { recordBatchEvents, type BatchEventRecorder } from './batch-events.ts';
import { createClaimScheduler, type ClaimRun } from './claim-scheduler.ts';
import type { SchemeReplays } from '../../core/replay.ts';
import type { SchemeLane } from '../../core/scheme.ts';
import { voucherReplays, type AnswerKeeper } from './voucher-replay.ts';
import { AcceptedChannels, withFastVoucherCheck, type VoucherCheckCounts } from './voucher-check.ts';
import { voucherLane, type LaneCounts } from './voucher-lane.ts';
import { atomicAmount } from '../../core/price.ts';
import type { PaymentOption, SchemeOffer } from '../../core/scheme.ts';

export const BATCH_SETTLEMENT = 'batch-settlement';

/** The route's `accepts` entry for batch-settlement (offered after `exact`), and how the scheme and its hooks (batch events recorded, per-channel wait) register. */
export type BatchOffer = SchemeOffer;

export interface BatchSettlementOptions {
  x402: PaymentSettings;
  facilitator: FacilitatorClient;
  /** Channel state: createChannelStorage(db) over the ledger database. */
  storage: ChannelStorage;
  /** The channels' single writer when it keeps answers (channel-lease.ts): a retried voucher is then answered from it (voucher-replay.ts). */
  answers?: AnswerKeeper;
  /** Where deposits, charges, claims, settlements and refunds are recorded. */
  events: BatchEventRecorder;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Where batch settlement stands (/v1/status). */
export interface BatchSettlementStatus {
  mode: PaymentSettings['batch']['mode'];
  /**
   * offered: in every 402 beside exact; not_offered: the facilitator does not list it (or not yet asked);
   * draining: offered no more, open channels still owe; drained: none owes anything (false is safe).
   */
  state: 'offered' | 'not_offered' | 'draining' | 'drained';
  /** Channels with vouchers not yet claimed (counted at the last claim run; null before one). */
  owing: number | null;
}

export interface BatchSettlement {
  readonly scheme: BatchSettlementEvmScheme;
  /** How a retried voucher is recognised (undefined: by its payment identifier, in the ledger). */
  readonly replays: SchemeReplays | undefined;
  /** A repeat voucher admitted and charged without the SDK's per-call work (voucher-lane.ts). */
  readonly lane: SchemeLane;
  status(): BatchSettlementStatus;
  /** How many vouchers voucher-check.ts admitted itself and how many payloads it left to the SDK's check; how many the lane admitted. */
  voucherChecks(): VoucherCheckCounts & { lane: number };
  /**
   * What to offer, from the facilitator's /supported (asked once; asked again after a failure to reach it,
   * which is thrown so the gate answers 503 as for `exact`).
   */
  offer(): Promise<BatchOffer | undefined>;
  /** Starts the claim-and-settle schedule (every X402_BATCH_CLAIM_INTERVAL_S). */
  start(): void;
  /** One claim-and-settle run now. */
  claimAndSettle(): Promise<ClaimRun>;
  /** Stops the schedule (waits for a run in progress). */
  stop(): Promise<void>;
}

export function createBatchSettlement(opts: BatchSettlementOptions): BatchSettlement {
  const { x402 } = opts;
  const asset = x402.asset!;
  const payTo = x402.payTo!;
  const settings = x402.batch;
  const receiverAuthorizerSigner = settings.authorizerKey ? privateKeyToAccount(settings.authorizerKey) : undefined;
  const channels = new ChannelWatch(opts.storage);
  const voucherChecks: VoucherCheckCounts = { fast: 0, passed: 0 };
  const laneCounts: LaneCounts = { admitted: 0 };
  // The vouchers the SDK's hook accepted, by channel: what the fast check and the lane admit repeats of.
  const accepted = new AcceptedChannels();
  const scheme = new BatchSettlementEvmScheme(payTo, {
    storage: channels.storage,
    withdrawDelay: settings.withdrawDelayS,
    ...(receiverAuthorizerSigner ? { receiverAuthorizerSigner } : {}),
  });
  const accepts: PaymentOption = {
    scheme: BATCH_SETTLEMENT,
    network: x402.network,
    payTo,
    price: {
      amount: atomicAmount(x402.price, asset.decimals),
      asset: asset.address,
      // minDeposit: what a channel is asked to hold when it opens or runs dry (clients may cap it lower).
      extra: { name: asset.name, version: asset.version, minDeposit: atomicAmount(settings.deposit, asset.decimals) },
    },
    maxTimeoutSeconds: x402.maxTimeoutS,
  };
  const offered: BatchOffer = {
    accepts,
    register(resourceServer) {
      // A repeat voucher is checked by voucher-check.ts first, the SDK's own hook behind it.
      resourceServer.register(x402.network, withFastVoucherCheck(scheme, voucherChecks, accepted));
      // Runs before the scheme's own after-verify hook, which would refuse a busy channel at once.
      resourceServer.onAfterVerify(async (ctx) => {
        if (ctx.requirements.scheme !== BATCH_SETTLEMENT || !ctx.result.isValid) return;
        const channelId = (ctx.paymentPayload.payload as { voucher?: { channelId?: unknown } }).voucher?.channelId;
        if (typeof channelId === 'string') await channels.waitUntilFree(channelId, x402.facilitatorTimeoutMs);
      });
      recordBatchEvents(resourceServer, opts.events, (err) => opts.log.warn({ err: String(err) }, 'x402 batch settlement: ledger write failed'));
    },
  };

  let decided: Promise<BatchOffer | undefined> | undefined;
  const status: BatchSettlementStatus = { mode: settings.mode, state: settings.mode === 'drain' ? 'draining' : 'not_offered', owing: null };
  const decide = async (): Promise<BatchOffer | undefined> => {
    if (settings.mode === 'drain') {
      opts.log.info({ network: x402.network }, 'x402: X402_BATCH_SETTLEMENT=drain: batch-settlement is not offered; the open channels are claimed and settled until none owes anything');
      return undefined;
    }
    const supported = await opts.facilitator.getSupported();
    const kind = supported.kinds.find((k) => k.x402Version === 2 && k.scheme === BATCH_SETTLEMENT && matchesNetwork(k, x402.network));
    if (!kind) {
      opts.log.info({ network: x402.network }, 'x402: the facilitator does not offer batch-settlement on this network; offering exact only');
      return undefined;
    }
    if (!receiverAuthorizerSigner && !advertisedAuthorizer(kind)) {
      opts.log.warn(
        { network: x402.network },
        'x402: the facilitator offers batch-settlement but advertises no receiverAuthorizer, and X402_BATCH_AUTHORIZER_KEY is unset; offering exact only',
      );
      return undefined;
    }
    opts.log.info(
      { network: x402.network, receiverAuthorizer: receiverAuthorizerSigner?.address ?? advertisedAuthorizer(kind), withdrawDelayS: settings.withdrawDelayS },
      'x402: offering batch-settlement beside exact',
    );
    status.state = 'offered';
    return offered;
  };

  /** Drain: done once no channel holds an unclaimed voucher and nothing claimed waits to be settled. */
  const afterRun = async (settlePending: boolean) => {
    const owing = (await channels.storage.list()).filter((c) => BigInt(c.chargedCumulativeAmount) > BigInt(c.totalClaimed)).length;
    status.owing = owing;
    if (settings.mode !== 'drain' || status.state === 'drained' || owing > 0 || settlePending) return;
    status.state = 'drained';
    opts.log.info({ network: x402.network }, 'x402 batch settlement drained: no open channel holds unclaimed vouchers and every claim is settled; X402_BATCH_SETTLEMENT=false is now safe');
  };

  const scheduler = createClaimScheduler({
    scheme,
    facilitator: opts.facilitator,
    network: x402.network,
    token: asset.address,
    intervalMs: settings.claimIntervalS * 1000,
    events: opts.events,
    log: opts.log,
    afterRun,
  });

  return {
    scheme,
    replays: opts.answers && voucherReplays(opts.answers, opts.log),
    lane: voucherLane(scheme, accepted, opts.events, laneCounts),
    status: () => ({ ...status }),
    voucherChecks: () => ({ ...voucherChecks, lane: laneCounts.admitted }),
    offer() {
      decided ??= decide().catch((err) => {
        decided = undefined;
        throw err;
      });
      return decided;
    },
    start() {
      scheduler.start();
      // Draining: the first run now, not one interval later.
      if (settings.mode === 'drain') void scheduler.runOnce();
    },
    claimAndSettle: () => scheduler.runOnce(),
    stop: () => scheduler.stop(),
  };
}

function matchesNetwork(kind: SupportedKind, network: string): boolean {
  return kind.network === network || (kind.network.endsWith(':*') && network.startsWith(kind.network.slice(0, -1)));
}

function advertisedAuthorizer(kind: SupportedKind): `0x${string}` | undefined {
  const a = kind.extra?.receiverAuthorizer;
  if (typeof a !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(a)) return undefined;
  const address = getAddress(a);
  return address === zeroAddress ? undefined : address;
}

/**
 * The channel storage, plus a way to wait until a channel is not reserved by a call in flight. Changes made
 * through this process wake waiters at once; a reservation held by another instance is noticed by polling.
 */
class ChannelWatch {
  private readonly waiters = new Map<string, Set<() => void>>();
  readonly storage: ChannelStorage;

  constructor(inner: ChannelStorage) {
    this.storage = {
      get: (id) => inner.get(id),
      list: () => inner.list(),
      updateChannel: async (id, update): Promise<ChannelUpdateResult> => {
        const result = await inner.updateChannel(id, update);
        if (result.status !== 'unchanged') this.wake(id);
        return result;
      },
    };
  }

  async waitUntilFree(channelId: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = (await this.storage.get(channelId))?.pendingRequest;
      const now = Date.now();
      if (!pending || pending.expiresAt <= now || now >= deadline) return;
      await this.changeOf(channelId, Math.min(deadline, pending.expiresAt) - now);
    }
  }

  private changeOf(channelId: string, maxMs: number): Promise<void> {
    const key = channelId.toLowerCase();
    return new Promise((resolve) => {
      const set = this.waiters.get(key) ?? new Set();
      this.waiters.set(key, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, Math.min(maxMs, 50)); // poll for changes made by other instances
      set.add(done);
    });
  }

  private wake(channelId: string) {
    for (const done of [...(this.waiters.get(channelId.toLowerCase()) ?? [])]) done();
  }
}
