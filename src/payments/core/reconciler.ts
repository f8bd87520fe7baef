// Reconciliation from the chain, by the server itself: at start-up and every X402_RECONCILE_INTERVAL_S, the
// ledger rows left `verified` (a crash or restart between verify and the final write) or `unknown` (nobody
// could tell the outcome) are given the status the chain says, for every `exact` payment whose EIP-3009
// authorization it recorded:
//
//   used, by a transfer of the amount to pay_to → settled (the transaction, found from its AuthorizationUsed
//                                                 event; null, with the reason, when it cannot be found); the
//                                                 same authorization already settled on another row → that
//                                                 row keeps it, this one is cancelled as its duplicate
//   used otherwise (canceled by the payer, or another transfer) → settle_failed
//   unused, and the chain is past validBefore   → cancelled (a `verified` row) or settle_failed (`unknown`):
//                                                 it can never land; nothing was charged
//   unused and still valid, or no answer        → left as it is; what the chain said is recorded, and it is
//                                                 asked again next time
//
// What the chain said is kept in the row (chain_state, chain_checked_at). Each network with a reader (its
// scheme's OutcomeReader: X402_RPC_URL, X402_SVM_RPC_URL) is asked about its own rows; rows the chain cannot tell
// about (no authorization nonce, a network with no reader) are left for `npm run payments -- resolve`.
import type { PaymentLog } from './log.ts';
import type { PaymentRecord } from '../../db/payment-rows.ts';
import type { PaymentRecords } from '../../db/payments.ts';
import { authorizationRef, type OutcomeReader } from './outcome.ts';

export interface ReconcilerOptions {
  records: PaymentRecords;
  /** The reader of each network whose rows are reconciled (CAIP-2 → reader); rows of other networks are not asked about. */
  chains: ReadonlyMap<string, OutcomeReader>;
  intervalMs: number;
  log: PaymentLog;
  /** Rows per pass. */
  batch?: number;
  /** Resolves once the ledger database is open (the first pass waits for it: PGlite takes seconds to open). */
  ready?: () => Promise<unknown>;
}

export interface ReconcileCounts {
  checked: number;
  settled: number;
  closed: number;
  undecided: number;
}

export class PaymentReconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReconcileCounts> | undefined;
  private stopped = false;

  constructor(private readonly opts: ReconcilerOptions) {}

  /** A pass as soon as the database is open, then one every interval. */
  start(): void {
    if (this.stopped || this.timer) return;
    let opened = false;
    const tick = () => {
      const open = opened ? Promise.resolve() : Promise.resolve(this.opts.ready?.()).then(() => void (opened = true));
      void open
        .then(() => (this.stopped ? undefined : this.runOnce()))
        .catch((err) => this.opts.log.warn({ err: String((err as Error)?.message ?? err) }, 'x402 reconciliation: the ledger could not be read; trying again later'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.opts.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => {});
  }

  /** One pass over the unfinished rows (one at a time: a pass already running is joined). */
  runOnce(): Promise<ReconcileCounts> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<ReconcileCounts> {
    const counts: ReconcileCounts = { checked: 0, settled: 0, closed: 0, undecided: 0 };
    // A row the chain could not decide is asked again after one interval, not on every pass.
    for (const [network, chain] of this.opts.chains) {
      const rows = await this.opts.records.unfinished(network, this.opts.intervalMs, this.opts.batch ?? 100);
      for (const row of rows) {
        if (this.stopped) break;
        counts.checked++;
        counts[await this.reconcile(row, chain)]++;
      }
    }
    if (counts.checked) this.opts.log.info(counts, 'x402 reconciliation: unfinished payments checked on chain');
    return counts;
  }

  private async reconcile(row: PaymentRecord, chain: OutcomeReader): Promise<'settled' | 'closed' | 'undecided'> {
    const ref = authorizationRef(
      { asset: row.asset, payTo: row.pay_to, amount: row.amount_required },
      { payer: row.payer!, nonce: row.authorization_nonce!, validBefore: Math.floor(Date.parse(row.valid_before!) / 1000) },
      Date.parse(row.verified_at),
    );
    const verdict = await chain.check(ref);
    const { records, log } = this.opts;
    switch (verdict.kind) {
      case 'landed':
        await records.recordSettled(row.id, { txHash: verdict.txHash, settledAmount: row.amount_required, payer: row.payer, chain: verdict.state });
        log.info({ payment: row.id, tx: verdict.txHash }, 'x402 reconciliation: the transfer landed; settled');
        return 'settled';
      case 'used_elsewhere':
        await records.recordSettleFailed(row.id, { errorReason: 'the authorization was used without paying this call', chain: verdict.state });
        return 'closed';
      case 'not_landed':
        await (row.status === 'unknown'
          ? records.recordSettleFailed(row.id, { errorReason: 'the transfer never landed: nothing was charged', chain: verdict.state })
          : records.recordCancelled(row.id, 'never settled: the authorization was not used in time; nothing was charged', verdict.state));
        return 'closed';
      default:
        await records.noteChain(row.id, verdict.state);
        return 'undecided';
    }
  }
}
