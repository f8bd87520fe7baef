// The last line of defence: while the process is short of memory or its event loop is late, every request
// is answered 503 with Retry-After (`{ error }`, /health included: it says the truth) rather than served, so
// the process sheds load instead of dying (running out of heap ends it at once, with every answer in flight).
// Memory and the event loop's delay are sampled once a second; the check per request (edge.ts) is one
// property read in the hook every request already runs.
//
// Why not @fastify/under-pressure, which samples the same figures: its onRequest hook reads
// `req.routeOptions` on every request to find a per-route handler, and Fastify's getter builds a new object
// of a dozen fields each time; that is an allocation and a hook per request on the cached path, where this
// costs a property read.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

/** Thresholds, each 0 when it is not checked. */
export interface PressureLimits {
  /** Heap in use as a share of V8's heap limit, percent. */
  maxHeapPercent: number;
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

export class PressureGauge {
  /** Why the server is under pressure now, for the 503's body; undefined while it is not. */
  reason: string | undefined = undefined;
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
    const r = (this.last = this.read());
    const before = this.reason;
    this.reason = this.verdict(r);
    if (this.reason !== before && (before === undefined || this.reason === undefined)) this.onChange(this.reason);
  }

  private verdict(r: PressureReading): string | undefined {
    const { maxHeapPercent, maxRssBytes, maxEventLoopDelayMs } = this.limits;
    this.late = maxEventLoopDelayMs > 0 && r.eventLoopDelayMs > maxEventLoopDelayMs ? this.late + 1 : 0;
    const heapPercent = (100 * r.heapUsedBytes) / r.heapLimitBytes;
    if (maxHeapPercent > 0 && heapPercent > maxHeapPercent) {
      return `the JavaScript heap in use is ${heapPercent.toFixed(0)}% of its limit (PRESSURE_MAX_HEAP_PERCENT=${maxHeapPercent})`;
    }
    if (maxRssBytes > 0 && r.rssBytes > maxRssBytes) {
      return `resident memory is ${Math.round(r.rssBytes / MB)} MB (PRESSURE_MAX_RSS_MB=${Math.round(maxRssBytes / MB)})`;
    }
    if (this.late >= LATE_SAMPLES) {
      return `the event loop has been late by more than ${maxEventLoopDelayMs} ms for ${this.late} s (PRESSURE_MAX_EVENT_LOOP_DELAY_MS; ${Math.round(r.eventLoopDelayMs)} ms in the last second)`;
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
    return { heapUsedBytes: memory.heapUsed, heapLimitBytes: this.heapLimitBytes, rssBytes: memory.rss, eventLoopDelayMs };
  }
}
