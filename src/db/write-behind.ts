// Rows written behind: gathered for FLUSH_MS, then written together in one statement (one round trip and one commit
// for a whole batch, where a row each would cost both every call). For what the ledger records of a batch-settlement
// voucher's call, which moves no money on its own (the channel's state, written behind the same way, is what is
// claimed): a crash loses at most the last FLUSH_MS of them, never a settlement.
//
// A write that fails keeps its rows and is tried again at the next flush; past MAX_PENDING rows waiting, the oldest
// are given up (logged in full by the owner). close() makes the last attempts.
import { MAX_PENDING } from './retry-queue.ts';

/** Longest a row waits before its batch is written. */
export const FLUSH_MS = 200;

export interface WriteBehindOptions<T> {
  /** Writes a batch (in order); rejects when nothing of it was written. */
  write(rows: T[]): Promise<void>;
  /** A batch could not be written (it is kept and tried again). */
  failed(err: unknown, rows: number): void;
  /** Rows given up: too many waiting, or still unwritten at close. */
  lost(rows: T[], why: string): void;
  flushMs?: number;
  maxPending?: number;
}

export class WriteBehind<T> {
  private pending: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly opts: WriteBehindOptions<T>) {}

  /** Rows waiting to be written (the batch being written included). */
  get size(): number {
    return this.pending.length + this.inFlight;
  }
  private inFlight = 0;

  add(row: T): void {
    if (this.closed) return this.opts.lost([row], 'the ledger is closed');
    this.pending.push(row);
    const max = this.opts.maxPending ?? MAX_PENDING;
    if (this.pending.length > max) this.opts.lost(this.pending.splice(0, this.pending.length - max), `more than ${max} rows waiting to be written`);
    this.schedule();
  }

  /** Writes what waits now (after a write in progress). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.inFlight = batch.length;
    this.writing = this.opts.write(batch).then(
      () => undefined,
      (err: unknown) => {
        this.opts.failed(err, batch.length);
        this.pending = batch.concat(this.pending);
      },
    );
    await this.writing;
    this.writing = undefined;
    this.inFlight = 0;
    if (this.pending.length > 0 && !this.closed) this.schedule();
  }

  /** Last attempts (at most `tries`); what is still unwritten is given up. */
  async close(tries = 3): Promise<void> {
    this.closed = true;
    for (let i = 0; i < tries && (this.pending.length > 0 || this.writing); i++) await this.flush();
    clearTimeout(this.timer);
    if (this.pending.length > 0) this.opts.lost(this.pending.splice(0), 'still unwritten when the ledger closed');
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), this.opts.flushMs ?? FLUSH_MS);
    this.timer.unref();
  }
}
