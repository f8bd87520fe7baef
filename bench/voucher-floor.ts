// The `repeat` part's floor (issue 37): the work a voucher call cannot skip, beyond what a keyed call does, each
// piece timed alone in this process with the server's own code, on a voucher header a real client sent:
//   decode   the PAYMENT-SIGNATURE header read (core/header-codec.ts: base64, its alphabet check, JSON);
//   check    the voucher checked (voucher-check.ts isNextVoucher: its EIP-712 digest, two Keccak hashes, and the
//            payer authorizer's signature recovered by libsecp256k1), against a channel state it is the next one of;
//   ledger   what the ledger writes of it on the embedded database (db/payments.ts, db/batch-events.ts): its
//            `payments` row, settled, and its `charge` event, written behind, FLUSH_MS apart in batches of
//            `perFlush` calls (200: a call every millisecond), the CPU of every thread of this process (the database
//            runs on a worker thread), after a first round unmeasured.
// Everything else a voucher call does (the payment identifier's claim, the channel's reservation and charge, the
// PAYMENT-RESPONSE header, the payload's hash) is left out: this is a lower bound, to hold against the 1.5 × keyed
// target's room, which is half a keyed call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { BatchEventRecords } from '../src/db/batch-events.ts';
import { openDatabase } from '../src/db/open.ts';
import { PaymentRecords } from '../src/db/payments.ts';
import { DatabaseService, type DbLog } from '../src/db/service.ts';
import { FLUSH_MS } from '../src/db/write-behind.ts';
import { decodePaymentHeader } from '../src/payments/core/header-codec.ts';
import { isNextVoucher, type ChannelConfig, type Voucher } from '../src/payments/schemes/batch-settlement/voucher-check.ts';

export interface VoucherFloor {
  /** µs per voucher call, each piece alone. */
  decode: number;
  check: number;
  /** Its `payments` row and its `charge` event, written together as the server writes them. */
  ledger: number;
  total: number;
}

const QUIET: DbLog = { info() {}, warn() {}, error() {} };

/** µs per call of `f`, the best of three rounds of `n` (the machine's quietest moment: a floor). */
async function timed(n: number, f: () => unknown): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await f();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1000 / n);
  }
  return best;
}

/** The floor of a voucher call whose PAYMENT-SIGNATURE header was `header` (a voucher on a channel the server accepted). */
export async function measureVoucherFloor(header: string, o: { calls?: number; perFlush?: number } = {}): Promise<VoucherFloor> {
  const calls = o.calls ?? 2000;
  const perFlush = o.perFlush ?? 200;
  const payload = decodePaymentHeader(header);
  const raw = payload.payload as { voucher: Voucher; channelConfig: ChannelConfig };
  const requirements = payload.accepted as PaymentRequirements;
  const max = BigInt(raw.voucher.maxClaimableAmount);
  // The channel's state as the server holds it when this voucher is the next one: charged up to the one before.
  const channel = {
    channelId: raw.voucher.channelId,
    channelConfig: raw.channelConfig,
    chargedCumulativeAmount: String(max - BigInt(requirements.amount)),
    signedMaxClaimable: String(max - BigInt(requirements.amount)),
    signature: raw.voucher.signature,
    balance: String(max * 2n),
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: Date.now(),
    lastRequestTimestamp: Date.now(),
  };
  if (!(await isNextVoucher(channel as never, raw.voucher, raw.channelConfig, requirements, 60_000))) throw new Error('the captured voucher is not the next one of the state built for it');

  const decode = await timed(calls, () => decodePaymentHeader(header));
  const check = await timed(calls, () => isNextVoucher(channel as never, raw.voucher, raw.channelConfig, requirements, 60_000));
  const ledger = await ledgerPerCall(payload, requirements, calls, perFlush);
  return { decode, check, ledger, total: decode + check + ledger };
}

/**
 * CPU µs (every thread) the ledger spends per voucher call: its `payments` row and its charge event, written behind
 * together (each flush's statements and commit are shared by its calls: timed apart, each would be charged them).
 * The better of two measured rounds, each after a round unmeasured.
 */
async function ledgerPerCall(payload: PaymentPayload, requirements: PaymentRequirements, calls: number, perFlush: number): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mg-floor-'));
  const db = new DatabaseService({ open: (signal) => openDatabase({ dataDir, url: undefined, timeoutMs: 30_000 }, { signal }), timeoutMs: 30_000, describe: 'floor', log: QUIET });
  db.start();
  const channelId = (payload.payload as { voucher: Voucher }).voucher.channelId;
  const payer = (payload.payload as { channelConfig: ChannelConfig }).channelConfig.payer;
  let n = 0;
  const round = async (count: number, records: PaymentRecords, events: BatchEventRecords) => {
    for (let done = 0; done < count; ) {
      for (const end = Math.min(count, done + perFlush); done < end; done++) {
        n++;
        const id = records.recordVerifiedBehind({
          requestId: `floor-${n}`,
          route: '/v1/price',
          resourceUrl: 'http://127.0.0.1/v1/price',
          scheme: requirements.scheme,
          network: requirements.network,
          asset: requirements.asset,
          amountRequired: requirements.amount,
          payTo: requirements.payTo,
          payer,
          payloadHash: n.toString(16).padStart(64, '0'),
          paymentIdentifier: `pay_floor_${n}`,
          facilitator: 'floor',
        });
        void records.recordSettled(id, { txHash: null, settledAmount: requirements.amount, payer, answered: true });
        events.recordBehind({ type: 'charge', at: new Date(), network: requirements.network, channelId, payer, amount: requirements.amount, detail: { cumulative: String(n * 1000) } });
      }
      await new Promise((r) => setTimeout(r, FLUSH_MS + 20));
    }
  };
  try {
    await db.use(async () => undefined); // opened and migrated, before anything is timed
    const warm = { records: new PaymentRecords(db, { log: QUIET }), events: new BatchEventRecords(db, QUIET) };
    await round(Math.min(calls, 1000), warm.records, warm.events);
    await Promise.all([warm.records.close(), warm.events.close()]);
    let best = Infinity;
    for (let measured = 0; measured < 2; measured++) {
      const records = new PaymentRecords(db, { log: QUIET });
      const events = new BatchEventRecords(db, QUIET);
      const cpu0 = process.cpuUsage();
      await round(calls, records, events);
      await Promise.all([records.close(), events.close()]);
      const cpu = process.cpuUsage(cpu0);
      best = Math.min(best, (cpu.user + cpu.system) / calls);
    }
    const [rows] = await db.use((d) => d.query<{ n: string }>("SELECT count(*) AS n FROM payments WHERE status = 'settled'"));
    const [charges] = await db.use((d) => d.query<{ n: string }>("SELECT count(*) AS n FROM x402_batch_events WHERE type = 'charge'"));
    if (Number(rows?.n) !== n || Number(charges?.n) !== n) throw new Error(`the ledger holds ${rows?.n} settled rows and ${charges?.n} charges of ${n} calls`);
    return best;
  } finally {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
