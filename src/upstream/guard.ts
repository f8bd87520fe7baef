// The guard every upstream call runs under, whatever the client (the undici pool of http-client.ts,
// viem's transport through guardedFetch, or any other promise):
//   - one total deadline per call: the call gets an AbortSignal and the guard stops waiting at the
//     deadline even if the client ignores it, so a trickling upstream can never hold a request;
//   - a circuit breaker per provider (cockatiel): after BREAKER_FAILURES consecutive failures calls
//     fail fast with 503 + Retry-After for BREAKER_COOLDOWN_MS, then one probe is let through;
//     an answer such as "unknown symbol" is not a failure;
//   - health figures per provider (latency, last success, last error, breaker state) for /v1/status;
//   - every call's outcome, latency and breaker state handed to a recorder (the metrics, when on).
import { CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen, isBrokenCircuitError } from 'cockatiel';
import { NotFoundError, UpstreamError, type UpstreamFailure } from '../lib/errors.ts';
import type { HttpOutcome } from './http-client.ts';
import { ProviderHealth, type ProviderHealthReport } from './provider-health.ts';

export interface GuardOptions {
  /** Default total deadline of one upstream call, ms. */
  deadlineMs: number;
  /** Consecutive failures that open a provider's circuit. */
  breakerFailures: number;
  /** How long an open circuit fails fast before one probe is let through, ms. */
  breakerCooldownMs: number;
}

export interface RunOptions {
  /** This call's total deadline, ms (default: the guard's). */
  deadlineMs?: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * How one guarded call ended: answered (`ok`), answered "no such item" (`not_found`), or failed with
 * an upstream failure kind (`circuit_open`: refused by the breaker, no request made); `error` is
 * anything else a call threw (a defect, not a provider's failure).
 */
export type UpstreamOutcome = 'ok' | 'not_found' | UpstreamFailure | 'error';

/** Where the guard reports what it sees (metrics); the default records nothing. */
export interface UpstreamRecorder {
  /** One call of `provider` ended with `outcome` after `seconds` (null when no request was made: circuit open). */
  call(provider: string, outcome: UpstreamOutcome, seconds: number | null): void;
  /** `provider`'s breaker is now in `state` (also said once when the provider is first called). */
  breaker(provider: string, state: BreakerState): void;
}

export const NO_UPSTREAM_RECORDER: UpstreamRecorder = { call() {}, breaker() {} };

/** A source's HTTP answer "no such item" (HttpOutcome with found false) is an answer, counted apart. */
const isNotFoundAnswer = (value: unknown) => typeof value === 'object' && value !== null && (value as Partial<HttpOutcome<unknown>>).found === false;

function outcomeOf(err: unknown): UpstreamOutcome {
  if (err instanceof UpstreamError) return err.failure;
  return err instanceof NotFoundError ? 'not_found' : 'error';
}

export interface GuardReport extends ProviderHealthReport {
  breaker: {
    state: BreakerState;
    consecutive_failures: number;
    opens_after: number;
    cooldown_s: number;
    opened_at: string | null;
    retry_after_s: number | null;
  };
}

/** A call that failed with an error that is an answer (404 and the like) still counts as a success. */
const isFailure = (err: Error) => err instanceof UpstreamError && err.failure !== 'circuit_open';

const STATE_NAMES: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'open',
};

class ProviderGuard {
  readonly health = new ProviderHealth();
  private readonly counter: ConsecutiveBreaker;
  private readonly breaker: CircuitBreakerPolicy;
  private openedAt: number | null = null;

  constructor(
    readonly source: string,
    private readonly options: GuardOptions,
    private readonly recorder: UpstreamRecorder,
  ) {
    this.counter = new ConsecutiveBreaker(options.breakerFailures);
    this.breaker = circuitBreaker(handleWhen(isFailure), { halfOpenAfter: options.breakerCooldownMs, breaker: this.counter });
    this.breaker.onBreak(() => (this.openedAt = Date.now()));
    this.breaker.onReset(() => (this.openedAt = null));
    this.breaker.onStateChange((state) => recorder.breaker(source, STATE_NAMES[state]));
    recorder.breaker(source, 'closed');
  }

  async run<T>(call: (signal: AbortSignal) => Promise<T>, deadlineMs: number): Promise<T> {
    const started = performance.now();
    try {
      const value = await this.breaker.execute(() => withDeadline(this.source, deadlineMs, call));
      const ms = performance.now() - started;
      this.health.recordSuccess(ms);
      this.recorder.call(this.source, isNotFoundAnswer(value) ? 'not_found' : 'ok', ms / 1000);
      return value;
    } catch (err) {
      if (isBrokenCircuitError(err)) {
        this.recorder.call(this.source, 'circuit_open', null);
        throw this.openError();
      }
      const ms = performance.now() - started;
      if (err instanceof Error && isFailure(err)) this.health.recordFailure(ms, err.message);
      else this.health.recordSuccess(ms);
      this.recorder.call(this.source, outcomeOf(err), ms / 1000);
      throw err;
    }
  }

  report(): GuardReport {
    const state = STATE_NAMES[this.breaker.state];
    const base = this.health.report();
    return {
      ...base,
      status: state === 'closed' ? base.status : 'failing',
      breaker: {
        state,
        consecutive_failures: this.counter.state,
        opens_after: this.options.breakerFailures,
        cooldown_s: this.options.breakerCooldownMs / 1000,
        opened_at: this.openedAt === null ? null : new Date(this.openedAt).toISOString(),
        retry_after_s: state === 'open' ? this.retryAfterS() : null,
      },
    };
  }

  private retryAfterS(): number {
    const left = (this.openedAt ?? Date.now()) + this.options.breakerCooldownMs - Date.now();
    return Math.max(1, Math.ceil(left / 1000));
  }

  private openError(): UpstreamError {
    const retryAfterS = this.retryAfterS();
    const last = this.health.lastErrorMessage();
    return new UpstreamError(
      this.source,
      'circuit_open',
      `${this.source} is failing (${this.options.breakerFailures} failures in a row${last ? `, last: ${last}` : ''}); calls are paused, retry in ${retryAfterS} s`,
      { retryAfterS },
    );
  }
}

/** Runs `call` with an AbortSignal that fires at the deadline, and stops waiting for it then. */
export async function withDeadline<T>(source: string, deadlineMs: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new UpstreamError(source, 'timeout', `${source} did not answer within ${deadlineMs} ms`);
      controller.abort(err);
      reject(err);
    }, deadlineMs);
  });
  try {
    return await Promise.race([call(controller.signal), expired]);
  } catch (err) {
    // A client that noticed the abort reports it in its own words; the deadline is what happened.
    if (controller.signal.aborted) throw controller.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** One guard per app: a breaker and health figures per provider name, created on first use. */
export class UpstreamGuard {
  private readonly providers = new Map<string, ProviderGuard>();

  constructor(
    readonly options: GuardOptions,
    private readonly recorder: UpstreamRecorder = NO_UPSTREAM_RECORDER,
  ) {}

  /** Runs one upstream call of `source` under its deadline and breaker. */
  run<T>(source: string, call: (signal: AbortSignal) => Promise<T>, options: RunOptions = {}): Promise<T> {
    return this.of(source).run(call, options.deadlineMs ?? this.options.deadlineMs);
  }

  /** Health and breaker state of every provider called so far, by name. */
  report(): Record<string, GuardReport> {
    return Object.fromEntries([...this.providers].map(([name, p]) => [name, p.report()]));
  }

  /** Forgets every breaker and figure (tests start each case clean). */
  reset(): void {
    this.providers.clear();
  }

  private of(source: string): ProviderGuard {
    let p = this.providers.get(source);
    if (!p) this.providers.set(source, (p = new ProviderGuard(source, this.options, this.recorder)));
    return p;
  }
}
