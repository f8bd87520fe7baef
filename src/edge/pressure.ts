// The last line of defence, in two steps. Memory and the event loop's delay are sampled once a second.
//
// Memory is judged on what is really in use: the JavaScript heap in use plus the memory its buffers hold
// (`external`), read after a full collection (forced here, at most every COLLECT_EVERY_MS, and only when the
// cheap reading is over a threshold). Resident memory is only the trigger: it stays high after a load ends, since
// the allocator keeps what was freed for reuse, and heap garbage counts as "used" until a collection; judged on
// them, shedding went on for 88 s after an attacker left (issue 34 §3). Judged this way it ends at the first
// sample after the memory is freed.
//
// Over a memory threshold, the connections holding the most queued work (unsent bytes, pipelined requests
// waiting) are closed first (connection-admission.ts shedHeaviest): the client that made the memory grow pays for
// it, not everyone. Only when no connection holds queued work and memory is still over (the memory is held
// elsewhere), or while the event loop is late, every request is answered 503 with Retry-After (`{ error }`),
// /health excepted unless the heap itself is nearly exhausted (a load balancer must not take out an instance that
// can serve; running out of heap ends the process at once, with every answer in flight). The check per request
// (edge.ts) is one property read in the hook every request already runs.
//
// Why not @fastify/under-pressure, which samples the same figures: its onRequest hook reads
// `req.routeOptions` on every request to find a per-route handler, and Fastify's getter builds a new object
// of a dozen fields each time; that is an allocation and a hook per request on the cached path, where this
// costs a property read.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Thresholds, each 0 when it is not checked. */
export interface PressureLimits {
  /** Heap in use as a share of V8's heap limit, percent. */
  maxHeapPercent: number;
  /** Memory in use (heap in use + buffers, after a collection), checked once resident memory is over it. */
  maxRssBytes: number;
  /** The event loop's mean delay over the last sample interval, ms. */
  maxEventLoopDelayMs: number;
  /** Retry-After of the 503s, seconds. */
  retryAfterS: number;
}

/** What one sample read. */
export interface PressureReading {
  heapUsedBytes: number;
  heapLimitBytes: number;
  /** Memory held by buffers and other objects outside the heap (process.memoryUsage().external). */
  externalBytes: number;
  rssBytes: number;
  /** Mean delay of the event loop since the last sample, ms (0 when not measured). */
  eventLoopDelayMs: number;
}

/** How often the figures are read. */
export const PRESSURE_SAMPLE_MS = 1000;

/** The event-loop delay histogram's resolution, ms: its own timer fires this often, and this much of each delay is its own. */
const RESOLUTION_MS = 20;

/**
 * Samples in a row whose event-loop delay is over the threshold before requests are shed: an overload makes
 * every second late, while one long task (start-up's checks, a large parse) blocks the loop once, and the
 * sampling timer, which does not catch up on the ticks it missed, then reads a single late second.
 */
export const LATE_SAMPLES = 3;

const MB = 1_048_576;

/** A full collection is forced at most this often, only while a reading is over a memory threshold (ms). */
export const COLLECT_EVERY_MS = 2000;

/** The share of the connections holding queued work closed at each sample under memory pressure (the most first). */
export const SHED_SHARE = 0.25;

export interface PressureActions {
  /** Closes up to `share` of the connections holding queued work, the most first; returns how many it closed. */
  shed?: (share: number) => number;
  /** A full garbage collection (default: V8's, exposed on first use). */
  collect?: () => void;
  /** Told how many connections were closed at a sample. */
  onShed?: (closed: number, reading: PressureReading) => void;
}

let exposedGc: (() => void) | null | undefined;
/** V8's gc(), exposed at run time (the flag holds for contexts made after it is set). */
function fullCollection(): void {
  if (exposedGc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      exposedGc = runInNewContext('gc') as () => void;
    } catch {
      exposedGc = null;
    }
  }
  exposedGc?.();
}

export class PressureGauge {
  /** Why every request is answered 503 now, for the 503's body; undefined while it is not. */
  reason: string | undefined = undefined;
  /** The heap is nearly exhausted: /health answers 503 too (the instance really cannot serve). */
  critical = false;
  /** Connections closed under memory pressure since start. */
  shedTotal = 0;
  private lastCollect = -Infinity;
  /** The last sample. */
  last: PressureReading | undefined = undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Samples in a row whose event-loop delay was over the threshold. */
  private late = 0;
  private histogram: IntervalHistogram | undefined;
  private readonly heapLimitBytes = getHeapStatistics().heap_size_limit;

  constructor(
    readonly limits: PressureLimits,
    /** Told when the pressure starts (its reason) and ends (undefined). */
    private readonly onChange: (reason: string | undefined) => void = () => {},
    /** Reads the figures (tests give their own). */
    private readonly read: () => PressureReading = () => this.measure(),
    private readonly actions: PressureActions = {},
  ) {}

  /** Samples now, then every PRESSURE_SAMPLE_MS until stop(). */
  start(): void {
    if (this.timer) return;
    if (this.limits.maxEventLoopDelayMs > 0) {
      this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
      this.histogram.enable();
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), PRESSURE_SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.histogram?.disable();
    this.histogram = undefined;
  }

  /** Reads the figures and decides whether the server is under pressure until the next sample. */
  sample(): void {
    let r = (this.last = this.read());
    this.late = this.limits.maxEventLoopDelayMs > 0 && r.eventLoopDelayMs > this.limits.maxEventLoopDelayMs ? this.late + 1 : 0;
    // Over a memory threshold: confirmed after a full collection (garbage is not pressure), at most every COLLECT_EVERY_MS.
    if (this.memoryOver(r) !== undefined && Date.now() - this.lastCollect >= COLLECT_EVERY_MS) {
      (this.actions.collect ?? fullCollection)();
      this.lastCollect = Date.now();
      r = this.last = { ...this.read(), eventLoopDelayMs: r.eventLoopDelayMs };
    }
    const memory = this.memoryOver(r);
    let reason = memory?.reason;
    // The connections holding the most queued work go first; requests are refused only when none is left to close.
    if (memory !== undefined && this.actions.shed) {
      const closed = this.actions.shed(SHED_SHARE);
      if (closed > 0) {
        this.shedTotal += closed;
        this.actions.onShed?.(closed, r);
        reason = undefined;
      }
    }
    this.critical = memory?.critical === true;
    if (reason === undefined && this.late >= LATE_SAMPLES) {
      reason = `the event loop has been late by more than ${this.limits.maxEventLoopDelayMs} ms for ${this.late} s (PRESSURE_MAX_EVENT_LOOP_DELAY_MS; ${Math.round(r.eventLoopDelayMs)} ms in the last second)`;
    }
    const before = this.reason;
    this.reason = reason;
    if (this.reason !== before && (before === undefined || this.reason === undefined)) this.onChange(this.reason);
  }

  /** Which memory threshold a reading is over, if any; the heap's is critical. */
  private memoryOver(r: PressureReading): { reason: string; critical: boolean } | undefined {
    const { maxHeapPercent, maxRssBytes } = this.limits;
    const heapPercent = (100 * r.heapUsedBytes) / r.heapLimitBytes;
    if (maxHeapPercent > 0 && heapPercent > maxHeapPercent) {
      return { reason: `the JavaScript heap in use is ${heapPercent.toFixed(0)}% of its limit (PRESSURE_MAX_HEAP_PERCENT=${maxHeapPercent})`, critical: true };
    }
    const inUse = r.heapUsedBytes + r.externalBytes;
    if (maxRssBytes > 0 && r.rssBytes > maxRssBytes && inUse > maxRssBytes) {
      return {
        reason: `memory in use is ${Math.round(inUse / MB)} MB, resident ${Math.round(r.rssBytes / MB)} MB (PRESSURE_MAX_RSS_MB=${Math.round(maxRssBytes / MB)})`,
        critical: false,
      };
    }
    return undefined;
  }

  private measure(): PressureReading {
    const memory = process.memoryUsage();
    let eventLoopDelayMs = 0;
    if (this.histogram) {
      // Mean over the interval less the histogram's own resolution (as @fastify/under-pressure reads it); no sample yet: not late.
      const mean = this.histogram.mean;
      eventLoopDelayMs = Number.isNaN(mean) ? 0 : Math.max(0, mean / 1e6 - RESOLUTION_MS);
      this.histogram.reset();
    }
    return { heapUsedBytes: memory.heapUsed, heapLimitBytes: this.heapLimitBytes, externalBytes: memory.external, rssBytes: memory.rss, eventLoopDelayMs };
  }
}
