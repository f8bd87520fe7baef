// Batch-settlement channel state held in memory by its single writer, written behind to the ledger.
//
// The single writer: one instance at a time holds a channel's lease, a row claim in the ledger's x402_channels
// (lease_owner, lease_until: src/db/x402-channels.ts). Only the holder changes the channel, in memory, one change
// at a time (the SDK's updateChannel: reserve a voucher, commit its charge), so a voucher is checked and admitted
// with no database round trip, and no two vouchers are ever admitted against the same cumulative base, whichever
// instances they reach. The holder writes the state behind: at most every FLUSH_MS while it changes, renewing the
// lease (LEASE_MS) each time. Another instance that needs the channel marks it wanted and waits; the holder sees
// that at its next write and hands the channel over (its last state written, the lease released), as it does
// after IDLE_MS without a change. A holder admits nothing once its own conservative view of the lease has run
// out (it renews first); the ledger lets another instance take a lapsed lease only after the ledger's own clock
// says so, which is never earlier.
//
// What a crash costs: the changes of its last FLUSH_MS or so, never written. The next holder starts from the
// state last written, and the payer's client is brought back to it by the scheme's corrective 402 (its own signed
// voucher as proof): the calls served in that window are then paid for again by later vouchers covering the same
// cumulative range, so the receiver collects less than it served, and the payer never pays twice.
import { randomUUID } from 'node:crypto';
import type { Channel, ChannelStorage, ChannelUpdateResult } from '@x402/evm/batch-settlement/server';
import type { KeptAnswer, LeaseStore } from '../../../db/x402-channels.ts';

export type { KeptAnswer, LeaseStore } from '../../../db/x402-channels.ts';

export interface LeaseTiming {
  /** How long a lease lasts unless renewed. */
  leaseMs: number;
  /** Longest a changed state waits to be written. */
  flushMs: number;
  /** A channel unchanged this long is written and released. */
  idleMs: number;
  /** Longest a change waits for another instance to hand the channel over. */
  waitMs: number;
}

export const LEASE_TIMING: LeaseTiming = { leaseMs: 3000, flushMs: 200, idleMs: 1000, waitMs: 10_000 };

/** A change that could not get the channel: another instance holds it and did not hand it over in time. */
export class ChannelLeaseBusy extends Error {}

interface Held {
  state: Channel | undefined;
  /** The last admitted voucher's answer (keepAnswer), written with the state. */
  answer: KeptAnswer | undefined;
  /** performance.now() past which this instance admits nothing without renewing (before the ledger's expiry). */
  safeUntil: number;
  /** Bumped by every change; `written` is the version last written. */
  version: number;
  written: number;
  lastChange: number;
  wanted: boolean;
  writing: Promise<void> | undefined;
}

const key = (channelId: string) => channelId.toLowerCase();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LeasedChannels implements ChannelStorage {
  /** This instance's name in lease_owner. */
  readonly owner = `instance-${randomUUID()}`;
  private readonly held = new Map<string, Held>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Calls admitted on a channel and not yet answered: the channel is not handed over meanwhile (its answer is kept first). */
  private readonly busy = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private asking: Promise<void> | undefined;
  private closing = false;

  constructor(
    private readonly store: LeaseStore,
    private readonly timing: LeaseTiming = LEASE_TIMING,
    private readonly log: { error(obj: object, msg: string): void } = { error: () => {} },
  ) {}

  /**
   * The channel's live state: taken here first (a payment's checks read it, and its change follows), so it is
   * never an older copy another instance has moved on from. When it cannot be taken in time, the state last
   * written: whatever is decided from it is checked again under the lease before anything is admitted.
   */
  async get(channelId: string): Promise<Channel | undefined> {
    return (await this.live(channelId))?.state;
  }

  /** Every open channel as written: the ledger's, the ones held here written first. */
  async list(): Promise<Channel[]> {
    // What is listed is what is written: the held channels' latest changes are written first. A claim is made from
    // this list, and a claim must never be ahead of the written state, or a crash would leave the state below what
    // the chain has claimed, and every later voucher of the channel refused as below it.
    await Promise.all([...this.held].filter(([, h]) => h.version !== h.written).map(([id, h]) => this.serialized(id, () => this.write(id, h, false))));
    const all = new Map((await this.store.list()).map((c) => [key(c.channelId), c]));
    for (const [id, h] of this.held) {
      if (h.version !== h.written) continue; // its latest could not be written: as the ledger has it
      if (h.state) all.set(id, h.state);
      else all.delete(id);
    }
    return [...all.values()];
  }

  /**
   * The channel's last admitted voucher and the answer it paid for, from its live state (taken here first when another
   * instance holds it, as get() does); undefined when none was kept.
   */
  async lastAnswer(channelId: string): Promise<KeptAnswer | undefined> {
    return (await this.live(channelId))?.answer;
  }

  /** The channel as get() and lastAnswer() read it: held here, else taken from its holder, else as last written. */
  private async live(channelId: string): Promise<{ state: Channel | undefined; answer: KeptAnswer | undefined } | undefined> {
    const id = key(channelId);
    const here = this.held.get(id);
    if (here && here.safeUntil > performance.now()) return here;
    // Held by no one: the ledger's state is the channel's (and an unknown channel creates nothing here).
    const row = await this.store.peek(id, this.owner);
    if (!row?.leasedElsewhere) return row;
    try {
      return await this.serialized(id, () => this.lease(id));
    } catch (err) {
      if (!(err instanceof ChannelLeaseBusy)) throw err;
      return row;
    }
  }

  /** Keeps the answer of the voucher just admitted on a channel held here (written behind with its state). */
  keepAnswer(channelId: string, answer: KeptAnswer): boolean {
    const h = this.held.get(key(channelId));
    if (!h) return false;
    h.answer = answer;
    h.version++;
    h.lastChange = performance.now();
    return true;
  }

  /** A call was admitted on the channel: it is not handed over until leave(). */
  enter(channelId: string): void {
    const id = key(channelId);
    this.busy.set(id, (this.busy.get(id) ?? 0) + 1);
  }

  leave(channelId: string): void {
    const id = key(channelId);
    const n = (this.busy.get(id) ?? 1) - 1;
    if (n > 0) this.busy.set(id, n);
    else this.busy.delete(id);
  }

  updateChannel(channelId: string, update: (current: Channel | undefined) => Channel | undefined): Promise<ChannelUpdateResult> {
    return this.serialized(key(channelId), async () => {
      const h = await this.lease(key(channelId));
      const current = h.state;
      const next = update(current);
      if (next === current) return { channel: current, status: 'unchanged' as const };
      h.state = next;
      h.version++;
      h.lastChange = performance.now();
      return next ? { channel: next, status: 'updated' as const } : { channel: undefined, status: current ? ('deleted' as const) : ('unchanged' as const) };
    });
  }

  /** How many channels this instance holds (for tests and the log). */
  get holding(): number {
    return this.held.size;
  }

  /** Writes every held channel and releases it (the app is closing). */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([...this.held.keys()].map((id) => this.serialized(id, () => this.release(id))));
  }

  /** Runs `fn` after every earlier change of the channel in this instance (one at a time). */
  private serialized<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(id) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.queues.set(id, tail);
    void tail.then(() => {
      if (this.queues.get(id) === tail) this.queues.delete(id);
    });
    return run;
  }

  /** The channel held here, its lease renewed or taken first when needed; waits for another holder to hand it over. */
  private async lease(id: string): Promise<Held> {
    const deadline = performance.now() + this.timing.waitMs;
    for (;;) {
      if (this.closing) throw new ChannelLeaseBusy('the server is closing');
      const h = this.held.get(id);
      if (h && h.safeUntil > performance.now()) return h;
      if (h) {
        // Our view of the lease ran out before a write renewed it: renew now (writing what we have). While the
        // ledger does not answer, the channel stays ours in memory and admits nothing.
        await h.writing;
        if (await this.write(id, h, false)) return h;
        if (this.held.get(id) === h) {
          if (performance.now() >= deadline) throw new ChannelLeaseBusy(`channel ${id}: its lease could not be renewed (the ledger did not answer)`);
          await sleep(20);
          continue;
        }
      }
      const asked = performance.now();
      const got = await this.store.take(id, this.owner, this.timing.leaseMs);
      if (got.taken) {
        // A lease that lapsed was its holder's last (it died, or lost the ledger for longer than the lease): a call it
        // had reserved the channel for ended with it, so its reservation, written behind with the state, is dropped
        // here rather than holding the channel busy until it expires (X402_MAX_TIMEOUT_S). A released lease carries
        // none: a holder never hands a channel over while a call on it runs.
        const left = got.lapsed && got.state?.pendingRequest;
        if (left) this.log.error({ channelId: id }, 'x402 batch settlement: took over a channel whose holder let its lease lapse; its reservation of a call in flight is dropped');
        const state = left ? { ...got.state!, pendingRequest: undefined } : got.state;
        const fresh: Held = { state, answer: got.answer, safeUntil: asked + this.timing.leaseMs * 0.9, version: left ? 1 : 0, written: 0, lastChange: performance.now(), wanted: false, writing: undefined };
        this.held.set(id, fresh);
        this.timer ??= setInterval(() => this.tick(), this.timing.flushMs).unref();
        return fresh;
      }
      if (performance.now() >= deadline) throw new ChannelLeaseBusy(`channel ${id} is held by another instance (${got.owner})`);
      await sleep(Math.min(20, Math.max(1, deadline - performance.now())));
    }
  }

  /** Every FLUSH_MS: changed channels written (the lease renewed), idle or wanted ones handed back. */
  private tick(): void {
    if (this.asking) return;
    // A write says whether its channel is wanted: only the channels with nothing to write are asked about (one query).
    const quiet = [...this.held].filter(([, h]) => !h.writing && h.version === h.written).map(([id]) => id);
    const asked = quiet.length === 0 ? Promise.resolve() : this.store.wanted(quiet, this.owner).then((ids) => ids.forEach((id) => this.held.get(id) && (this.held.get(id)!.wanted = true)), () => undefined);
    this.asking = asked.then(() => this.flush()).finally(() => (this.asking = undefined));
  }

  private flush(): void {
    const now = performance.now();
    for (const [id, h] of this.held) {
      if (h.writing) continue;
      if ((h.wanted || now - h.lastChange >= this.timing.idleMs) && !this.busy.has(id)) {
        h.writing = this.serialized(id, () => this.release(id)).finally(() => (h.writing = undefined));
      } else if (h.version !== h.written || h.safeUntil - now < this.timing.leaseMs / 2) {
        h.writing = this.write(id, h, false).then(
          () => undefined,
          () => undefined,
        );
        void h.writing.finally(() => (h.writing = undefined));
      }
    }
    if (this.held.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Writes the held state and renews the lease; false (and forgotten here) when the lease was lost. */
  private async write(id: string, h: Held, release: boolean): Promise<boolean> {
    const version = h.version;
    const asked = performance.now();
    let result: { held: boolean; wanted: boolean };
    try {
      result = await this.store.write(id, this.owner, h.state, h.answer, this.timing.leaseMs, release);
    } catch (err) {
      // The ledger did not answer: kept in memory, retried at the next tick; nothing is admitted past safeUntil.
      this.log.error({ channelId: id, err: String((err as Error)?.message ?? err) }, 'x402 batch settlement: channel state not written; retrying');
      return false;
    }
    if (!result.held) {
      this.held.delete(id);
      if (version !== h.written) this.log.error({ channelId: id }, 'x402 batch settlement: the channel lease lapsed before its last changes were written; they are lost (the payer is resynchronised, never charged twice)');
      return false;
    }
    h.written = version;
    h.wanted = result.wanted;
    if (!release) h.safeUntil = asked + this.timing.leaseMs * 0.9;
    return true;
  }

  /** Writes the channel's last state and gives its lease up (under the channel's queue: nothing changes meanwhile). */
  private async release(id: string): Promise<void> {
    const h = this.held.get(id);
    if (!h) return;
    if (await this.write(id, h, true)) this.held.delete(id);
  }
}
