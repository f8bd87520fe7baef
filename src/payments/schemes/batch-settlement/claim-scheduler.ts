// Claims batch-settlement vouchers and settles the claimed funds on a schedule.
//
// Why a schedule, and why this short: a voucher is only money once it is claimed on chain. A payer may start
// a timed withdrawal of its unclaimed deposit at any time; once the channel's withdraw delay has passed it can
// finalise it, and every voucher not claimed by then is worth nothing. So every run claims everything the
// channels owe (one transaction for up to MAX_CLAIMS_PER_BATCH channels), then, if anything was claimed (or an
// earlier settle failed), settles: one transfer of everything claimed to the receiver. The interval must stay
// well inside the withdraw delay (config.ts allows at most a third of it, so a withdrawal always meets at least
// two runs before it can complete, one of which may fail). Runs never overlap; a tick that finds one running
// is skipped. Each claim and settlement is recorded as a batch event.
import type { FacilitatorClient } from '@x402/core/server';
import { SettleError, type PaymentRequirements, type SettleResponse } from '@x402/core/types';
import type { BatchSettlementEvmScheme, Channel } from '@x402/evm/batch-settlement/server';
import type { BatchEventRecorder, BatchSettlementEvent } from './batch-events.ts';

type Hex = `0x${string}`;

const NOTHING_TO_SETTLE = 'invalid_batch_settlement_evm_nothing_to_settle';

/** Vouchers per claim transaction (the SDK's default batch size). */
export const MAX_CLAIMS_PER_BATCH = 100;

export interface ClaimSchedulerOptions {
  scheme: BatchSettlementEvmScheme;
  facilitator: FacilitatorClient;
  network: `${string}:${string}`;
  /** The token the channels hold (X402_ASSET). */
  token: Hex;
  /** Milliseconds between runs; must be well below the channels' withdraw delay. */
  intervalMs: number;
  /** Where each claim and settlement is recorded. */
  events: BatchEventRecorder;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** After each run: whether claimed funds still wait to be settled (drain watches it). */
  afterRun?: (settlePending: boolean) => Promise<void> | void;
}

/** What one run did. */
export interface ClaimRun {
  claims: Extract<BatchSettlementEvent, { type: 'claim' }>[];
  settle?: Extract<BatchSettlementEvent, { type: 'settle' }>;
}

export interface ClaimScheduler {
  /** Starts running every `intervalMs` (again after stop(); a no-op while started). */
  start(): void;
  /** One claim-and-settle run now (after a run in progress, never beside it). */
  runOnce(): Promise<ClaimRun>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

export function createClaimScheduler(opts: ClaimSchedulerOptions): ClaimScheduler {
  const manager = opts.scheme.createChannelManager(opts.facilitator, opts.network, opts.token);
  const receiver = opts.scheme.getReceiverAddress();
  // True at start: funds claimed before a restart but not yet settled are settled by the first run.
  let settlePending = true;
  let running: Promise<ClaimRun> | undefined;

  const record = async (event: BatchSettlementEvent) => {
    try {
      await opts.events.record({ ...event, at: new Date() });
    } catch (err) {
      opts.log.warn({ err: String(err), event: event.type }, 'x402 batch settlement: ledger write failed');
    }
  };

  /** Claims one batch in one transaction; the manager signs it (when this server holds the receiver-authorizer
   * key), submits it through the facilitator, marks the channels claimed in storage, and throws on failure. */
  const claimBatch = async (batch: Channel[]) => {
    const [result] = await manager.claim({ selectClaimChannels: () => batch, maxClaimsPerBatch: batch.length });
    if (!result) return undefined;
    settlePending = true;
    const event = { type: 'claim' as const, network: opts.network, transaction: result.transaction, claims: batch.map(claimed) };
    await record(event);
    return event;
  };

  const claimAll = async (): Promise<ClaimRun['claims']> => {
    const owed = (await opts.scheme.getStorage().list()).filter((c) => BigInt(c.chargedCumulativeAmount) > BigInt(c.totalClaimed));
    const done: ClaimRun['claims'] = [];
    for (let i = 0; i < owed.length; i += MAX_CLAIMS_PER_BATCH) {
      const batch = owed.slice(i, i + MAX_CLAIMS_PER_BATCH);
      try {
        const event = await claimBatch(batch);
        if (event) done.push(event);
      } catch (err) {
        if (batch.length === 1) throw err;
        // One channel the contract refuses (say, its payer withdrew before its vouchers were claimed) would
        // fail the whole batch run after run: claim the batch's channels one by one, so the others are paid.
        for (const channel of batch) {
          try {
            const event = await claimBatch([channel]);
            if (event) done.push(event);
          } catch (one) {
            opts.log.warn({ err: String((one as Error)?.message ?? one), channelId: channel.channelId }, 'x402 batch settlement: a channel could not be claimed');
          }
        }
      }
    }
    return done;
  };

  const settle = async (): Promise<ClaimRun['settle']> => {
    const requirements: PaymentRequirements = {
      scheme: 'batch-settlement',
      network: opts.network,
      asset: opts.token,
      amount: '0',
      payTo: receiver,
      maxTimeoutSeconds: 0,
      extra: {},
    };
    const payload = { x402Version: 2, accepted: requirements, payload: { type: 'settle', receiver, token: opts.token } };
    // A facilitator answers a failed settle either as a failing SettleResponse or with an HTTP error (SettleError).
    const response: SettleResponse = await opts.facilitator
      .settle(payload, requirements)
      .catch((err) => (err instanceof SettleError ? { success: false, errorReason: err.errorReason, errorMessage: err.errorMessage, transaction: '', network: opts.network } : Promise.reject(err)));
    if (!response.success && response.errorReason === NOTHING_TO_SETTLE) {
      settlePending = false;
      return undefined;
    }
    if (!response.success) throw new Error(`settle failed: ${response.errorReason ?? 'unknown'} ${response.errorMessage ?? ''}`.trim());
    settlePending = false;
    const event = { type: 'settle' as const, network: opts.network, transaction: response.transaction, receiver, token: opts.token, amount: response.amount ?? '0' };
    await record(event);
    return event;
  };

  const run = async (): Promise<ClaimRun> => {
    const out: ClaimRun = { claims: [] };
    try {
      out.claims = await claimAll();
    } catch (err) {
      opts.log.warn({ err: String((err as Error)?.message ?? err) }, 'x402 batch settlement: claim failed; retried on the next run');
    }
    if (settlePending) {
      try {
        out.settle = await settle();
      } catch (err) {
        opts.log.warn({ err: String((err as Error)?.message ?? err) }, 'x402 batch settlement: settle failed; retried on the next run');
      }
    }
    if (out.claims.length || out.settle) {
      const vouchers = out.claims.reduce((n, c) => n + c.claims.length, 0);
      opts.log.info({ vouchers, claimTransactions: out.claims.map((c) => c.transaction), settled: out.settle?.amount }, 'x402 batch settlement: claimed and settled');
    }
    await Promise.resolve(opts.afterRun?.(settlePending)).catch((err) => opts.log.warn({ err: String((err as Error)?.message ?? err) }, 'x402 batch settlement: after-run check failed'));
    return out;
  };

  const runOnce = async (): Promise<ClaimRun> => {
    while (running) await running.catch(() => undefined);
    running = run().finally(() => {
      running = undefined;
    });
    return running;
  };

  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      timer ??= setInterval(() => {
        if (!running) void runOnce();
      }, opts.intervalMs).unref();
    },
    runOnce,
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}

/** One channel's claim: up to its cumulative charge, which the latest voucher covers. */
function claimed(c: Channel) {
  return {
    channelId: c.channelId as Hex,
    payer: c.channelConfig.payer,
    totalClaimed: c.chargedCumulativeAmount,
    amount: (BigInt(c.chargedCumulativeAmount) - BigInt(c.totalClaimed)).toString(),
  };
}
