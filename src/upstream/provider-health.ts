// Rolling health of one upstream provider, as measured by the guard: a ring of the last 50 calls.

const WINDOW = 50;

export interface ProviderHealthReport {
  status: 'ok' | 'degraded' | 'failing' | 'unknown';
  last_success_at: string | null;
  last_error: { at: string; message: string } | null;
  /** Over the last (at most 50) calls. */
  recent: { calls: number; failures: number; latency_ms_p50: number | null; latency_ms_max: number | null };
}

export class ProviderHealth {
  private lastSuccessAt: number | null = null;
  private lastError: { at: number; message: string } | null = null;
  private readonly latencies = new Float64Array(WINDOW);
  private readonly outcomes = new Uint8Array(WINDOW);
  private count = 0;

  recordSuccess(latencyMs: number): void {
    this.lastSuccessAt = Date.now();
    this.push(latencyMs, 1);
  }

  recordFailure(latencyMs: number, message: string): void {
    this.lastError = { at: Date.now(), message };
    this.push(latencyMs, 0);
  }

  lastErrorMessage(): string | null {
    return this.lastError?.message ?? null;
  }

  report(): ProviderHealthReport {
    const calls = Math.min(this.count, WINDOW);
    const outcomes = [...this.outcomes.subarray(0, calls)];
    const failures = outcomes.filter((ok) => ok === 0).length;
    const sorted = [...this.latencies.subarray(0, calls)].sort((a, b) => a - b);
    const last = calls === 0 ? undefined : this.outcomes[(this.count - 1) % WINDOW];
    return {
      status: calls === 0 ? 'unknown' : last === 0 ? 'failing' : failures > 0 ? 'degraded' : 'ok',
      last_success_at: this.lastSuccessAt === null ? null : new Date(this.lastSuccessAt).toISOString(),
      last_error: this.lastError ? { at: new Date(this.lastError.at).toISOString(), message: this.lastError.message } : null,
      recent: {
        calls,
        failures,
        latency_ms_p50: sorted.length ? round1(sorted[Math.floor((sorted.length - 1) / 2)]!) : null,
        latency_ms_max: sorted.length ? round1(sorted.at(-1)!) : null,
      },
    };
  }

  private push(latencyMs: number, ok: 0 | 1): void {
    const i = this.count % WINDOW;
    this.latencies[i] = latencyMs;
    this.outcomes[i] = ok;
    this.count++;
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;
