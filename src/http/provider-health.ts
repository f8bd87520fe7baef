// Rolling health of one upstream provider, as measured by the upstream client.

const WINDOW = 50;

export interface ProviderHealthReport {
  status: 'ok' | 'degraded' | 'failing' | 'unknown';
  last_success_at: string | null;
  last_error: { at: string; message: string } | null;
  /** Over the last (at most 50) calls. */
  recent: { calls: number; failures: number; latency_ms_p50: number | null; latency_ms_max: number | null };
}

export class ProviderHealth {
  private lastSuccessAt: Date | null = null;
  private lastError: { at: Date; message: string } | null = null;
  private readonly latencies: number[] = [];
  private readonly outcomes: boolean[] = [];

  recordSuccess(latencyMs: number): void {
    this.lastSuccessAt = new Date();
    this.push(latencyMs, true);
  }

  recordFailure(latencyMs: number, message: string): void {
    this.lastError = { at: new Date(), message };
    this.push(latencyMs, false);
  }

  report(): ProviderHealthReport {
    const calls = this.outcomes.length;
    const failures = this.outcomes.filter((ok) => !ok).length;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const last = this.outcomes.at(-1);
    return {
      status: calls === 0 ? 'unknown' : last === false ? 'failing' : failures > 0 ? 'degraded' : 'ok',
      last_success_at: this.lastSuccessAt?.toISOString() ?? null,
      last_error: this.lastError ? { at: this.lastError.at.toISOString(), message: this.lastError.message } : null,
      recent: {
        calls,
        failures,
        latency_ms_p50: sorted.length ? round1(sorted[Math.floor((sorted.length - 1) / 2)]!) : null,
        latency_ms_max: sorted.length ? round1(sorted.at(-1)!) : null,
      },
    };
  }

  private push(latencyMs: number, ok: boolean): void {
    this.latencies.push(latencyMs);
    this.outcomes.push(ok);
    if (this.latencies.length > WINDOW) {
      this.latencies.shift();
      this.outcomes.shift();
    }
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;
