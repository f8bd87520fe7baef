// Per-key usage: calls per API key, UTC day and route, counted in memory on the request path (a map
// increment, no I/O) and written to the database every USAGE_FLUSH_MS in one statement: one row per
// key, day and route, however many calls it counts. A flush that fails keeps its counts for the next
// one. A flush given up on at DB_TIMEOUT_MS has started a transaction that goes on (and may commit):
// its counts go back to the next flush only if that transaction fails, so they are neither lost nor
// counted twice (until it ends they are in neither place: a read meanwhile may count them short). The
// server's shutdown flushes what is left.
import type { Queryable } from './database.ts';
import type { DatabaseService, DbLog } from './service.ts';
import { waitAtMost } from '../lib/wait-at-most.ts';

/** A key's calls today and this month (UTC), what is stored plus what this process has not flushed yet. */
export interface KeyUsage {
  today: number;
  month: number;
  /** Today's calls per route. */
  today_by_route: Record<string, number>;
}

export interface UsageCounterOptions {
  /** USAGE_FLUSH_MS. */
  flushMs: number;
  log: DbLog;
  clock?: () => number;
}

/** Rows per INSERT (4 parameters each, well below PostgreSQL's 65535). */
const ROWS_PER_STATEMENT = 1000;
const SEP = '\u0000';

/** YYYY-MM-DD (UTC) of `ms`; the last day made is reused until midnight (this is on every keyed call). */
let dayStart = 0;
let dayEnd = 0;
let dayText = '';
export function utcDay(ms: number): string {
  if (ms < dayStart || ms >= dayEnd) {
    dayStart = ms - (ms % 86_400_000);
    dayEnd = dayStart + 86_400_000;
    dayText = new Date(dayStart).toISOString().slice(0, 10);
  }
  return dayText;
}

export class UsageCounter {
  /** `key \0 day \0 route` → calls not written yet. */
  private pending = new Map<string, number>();
  /** The pending keys made today, by key and route. */
  private readonly keys = new Map<string, Map<string, string>>();
  private keysDay = '';
  private flushing: Promise<number> | undefined;
  /** Transactions of flushes given up on at DB_TIMEOUT_MS, until they end (shutdown waits for them). */
  private readonly inDoubt = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly clock: () => number;

  constructor(
    private readonly db: DatabaseService,
    private readonly options: UsageCounterOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /** One call by `keyId` on `route`, now. */
  count(keyId: string, route: string): void {
    const k = this.pendingKey(keyId, utcDay(this.clock()), route);
    this.pending.set(k, (this.pending.get(k) ?? 0) + 1);
  }

  /** `key \0 day \0 route`, made once per key, route and day (this is on every keyed call). */
  private pendingKey(keyId: string, day: string, route: string): string {
    if (day !== this.keysDay) {
      this.keys.clear();
      this.keysDay = day;
    }
    let byRoute = this.keys.get(keyId);
    if (byRoute === undefined) this.keys.set(keyId, (byRoute = new Map()));
    let k = byRoute.get(route);
    if (k === undefined) byRoute.set(route, (k = `${keyId}${SEP}${day}${SEP}${route}`));
    return k;
  }

  /** Calls counted and not written yet. */
  get unflushed(): number {
    let n = 0;
    for (const v of this.pending.values()) n += v;
    return n;
  }

  /** Flushes every USAGE_FLUSH_MS while the database has been started (an app nobody started keeps its counts in memory). */
  start(): void {
    this.timer ??= setInterval(() => {
      if (this.db.state === 'idle' || this.pending.size === 0) return;
      this.flush().catch((err) => this.options.log.warn({ err: String(err?.message ?? err), unflushed: this.unflushed }, 'usage counts not written yet; kept for the next flush'));
    }, this.options.flushMs);
    this.timer.unref();
  }

  /** Writes the pending counts (one row per key, day and route); resolves with the rows written. */
  flush(): Promise<number> {
    // One flush at a time: a second caller waits for the first, then writes what came since.
    const run = async (): Promise<number> => {
      await this.flushing?.catch(() => {});
      if (this.pending.size === 0) return 0;
      const batch = this.pending;
      this.pending = new Map();
      let write: Promise<void> | undefined;
      try {
        await this.db.use((db) => (write = db.transaction((tx) => writeBatch(tx, batch))));
        return batch.size;
      } catch (err) {
        // Not started: its counts wait for the next flush. Started, then given up on: its own end decides.
        if (write === undefined) this.keep(batch);
        else {
          const ended: Promise<void> = write.then(
            () => void this.inDoubt.delete(ended),
            () => void (this.inDoubt.delete(ended), this.keep(batch)),
          );
          this.inDoubt.add(ended);
        }
        throw err;
      }
    };
    const p = run();
    this.flushing = p;
    return p;
  }

  /** Counts a flush could not write, back for the next one. */
  private keep(batch: Map<string, number>): void {
    for (const [k, v] of batch) this.pending.set(k, (this.pending.get(k) ?? 0) + v);
  }

  /** A key's use today and this month: the stored rows plus this process's unflushed counts. */
  async usageOf(keyId: string): Promise<KeyUsage> {
    await this.flushing?.catch(() => {});
    const now = this.clock();
    const today = utcDay(now);
    const monthStart = `${today.slice(0, 7)}-01`;
    // A read for the caller: right after a start it waits for the database to finish opening (DB_OPEN_WAIT_MS).
    const rows = await this.db.useOnceOpen((db) =>
      db.query<{ day: string; route: string; calls: number }>('SELECT day, route, calls FROM key_usage WHERE key_id = $1 AND day >= $2::date', [keyId, monthStart]),
    );
    for (const [k, calls] of this.pending) {
      const [key, day, route] = k.split(SEP) as [string, string, string];
      if (key === keyId && day >= monthStart) rows.push({ day, route, calls });
    }
    const usage: KeyUsage = { today: 0, month: 0, today_by_route: {} };
    for (const r of rows) {
      usage.month += r.calls;
      if (r.day !== today) continue;
      usage.today += r.calls;
      usage.today_by_route[r.route] = (usage.today_by_route[r.route] ?? 0) + r.calls;
    }
    return usage;
  }

  /** Stops the timer and writes what is left (when the database was started); what cannot be written is logged. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    // A transaction given up on may still fail and give its counts back: written below, not lost. Bounded,
    // as every use of the database is.
    if (this.inDoubt.size > 0) await waitAtMost(Promise.all(this.inDoubt), this.db.timeoutMs);
    if (this.pending.size === 0) return;
    if (this.db.state === 'idle' || this.db.state === 'closed') {
      this.options.log.warn({ unflushed: this.unflushed }, 'usage counts not written: the database was never opened');
      return;
    }
    await this.flush().catch((err) => this.options.log.error({ err: String(err?.message ?? err), unflushed: this.unflushed }, 'usage counts lost at shutdown: the database did not take them'));
  }
}

async function writeBatch(tx: Queryable, batch: Map<string, number>): Promise<void> {
  const rows = [...batch].map(([k, calls]) => [...k.split(SEP), calls] as const);
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    await tx.query(
      `INSERT INTO key_usage (key_id, day, route, calls) VALUES ${chunk.map((_, j) => `($${4 * j + 1}, $${4 * j + 2}::date, $${4 * j + 3}, $${4 * j + 4})`).join(', ')}
       ON CONFLICT (key_id, day, route) DO UPDATE SET calls = key_usage.calls + EXCLUDED.calls`,
      chunk.flat(),
    );
  }
}
