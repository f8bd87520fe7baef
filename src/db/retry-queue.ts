// The one retry queue of the ledger database's final writes: facts that already happened (a payment's final
// status, a batch-settlement event), whose write must never fail the caller. A write that failed waits here and
// is tried again in the background after the delays given (each write after its own: 1 s, 2 s, 5 s, …, the last
// one repeating), under one timer for the earliest; at most MAX_PENDING wait, past it the oldest is given up; at
// shutdown each gets a last try within a budget, and what is still pending then is given up. What giving up
// means (a log line with the write in full, a count) is the owner's: it says why with the reason.

/** Waits between attempts of a write; the last one repeats. */
export const RETRY_DELAYS_MS = [1000, 2000, 5000, 10_000, 30_000, 60_000];

/** Most writes held for retry; past it the oldest is given up. */
export const MAX_PENDING = 10_000;

/** Why a write was given up: the queue held too many, it was closed already, or the server shut down. */
export type GiveUpReason = 'full' | 'closed' | 'shutdown';

export interface RetryQueueOptions<W> {
  /** One attempt at `write` (its `attempt`-th); true when the write is done or needs nothing more. */
  attempt(write: W, attempt: number): Promise<boolean>;
  /** `write` will not be tried again, after `attempts` attempts. */
  giveUp(write: W, reason: GiveUpReason, attempts: number): void;
  /** `write` landed on its `attempts`-th attempt, after waiting here. */
  landed?(write: W, attempts: number): void;
  /** Attempts after which `write` is dropped without giving it up (a write that may well need none); none by default. */
  attemptsAtMost?(write: W): number | undefined;
  delaysMs?: readonly number[];
  clock?: () => number;
}

interface Pending<W> {
  write: W;
  attempts: number;
  nextAt: number;
}

export class RetryQueue<W> {
  private readonly pending = new Map<string, Pending<W>>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly clock: () => number;
  private readonly delays: readonly number[];

  constructor(private readonly opts: RetryQueueOptions<W>) {
    this.clock = opts.clock ?? Date.now;
    this.delays = opts.delaysMs ?? RETRY_DELAYS_MS;
  }

  /**
   * Holds `write` under `key` (a later write of the same key takes its place): after its first, failed attempt
   * (`attempts` 1, tried again after the first delay), or before any (`attempts` 0, first tried at `firstAt`).
   */
  add(key: string, write: W, attempts = 1, firstAt = this.clock()): void {
    if (this.closed) return this.opts.giveUp(write, 'closed', attempts);
    if (this.pending.size >= MAX_PENDING) {
      const [oldestKey, oldest] = this.pending.entries().next().value!;
      this.pending.delete(oldestKey);
      this.opts.giveUp(oldest.write, 'full', oldest.attempts);
    }
    const entry: Pending<W> = { write, attempts, nextAt: firstAt };
    if (attempts > 0 && !this.reschedule(key, entry)) return;
    this.pending.set(key, entry);
    this.schedule();
  }

  /** How many writes wait (those `which` keeps, when given). */
  count(which: (write: W) => boolean = () => true): number {
    let n = 0;
    for (const { write } of this.pending.values()) if (which(write)) n++;
    return n;
  }

  /** Tries every pending write once now (oldest first), until `deadline` (epoch ms); returns how many are still pending. */
  async retryNow(deadline = Infinity): Promise<number> {
    for (const [key, entry] of [...this.pending]) {
      if (Date.now() >= deadline) break;
      if (await this.tryOnce(entry)) this.pending.delete(key);
      else this.reschedule(key, entry);
    }
    this.schedule();
    return this.pending.size;
  }

  /** Last attempts within `budgetMs` (the server's shutdown is itself bounded); what is still pending is given up. */
  async close(budgetMs = 3000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    await this.retryNow(Date.now() + budgetMs);
    clearTimeout(this.timer);
    for (const { write, attempts } of this.pending.values()) this.opts.giveUp(write, 'shutdown', attempts);
    this.pending.clear();
  }

  private tryOnce(entry: Pending<W>): Promise<boolean> {
    entry.attempts++;
    return this.opts.attempt(entry.write, entry.attempts);
  }

  /** After a failed attempt: when to try again; false (and dropped) when it has had all the attempts it may. */
  private reschedule(key: string, entry: Pending<W>): boolean {
    entry.nextAt = this.clock() + this.delays[Math.min(entry.attempts - 1, this.delays.length - 1)]!;
    const most = this.opts.attemptsAtMost?.(entry.write);
    if (most === undefined || entry.attempts < most) return true;
    this.pending.delete(key);
    return false;
  }

  /** One timer, for the earliest pending write. */
  private schedule(): void {
    clearTimeout(this.timer);
    if (this.closed || this.pending.size === 0) return;
    let next = Infinity;
    for (const { nextAt } of this.pending.values()) next = Math.min(next, nextAt);
    this.timer = setTimeout(() => void this.retryDue(), Math.max(0, next - this.clock()));
    this.timer.unref();
  }

  private async retryDue(): Promise<void> {
    const now = this.clock();
    for (const [key, entry] of [...this.pending]) {
      if (entry.nextAt > now) continue;
      if (await this.tryOnce(entry)) {
        this.pending.delete(key);
        if (entry.attempts > 1) this.opts.landed?.(entry.write, entry.attempts);
      } else this.reschedule(key, entry);
    }
    this.schedule();
  }
}
