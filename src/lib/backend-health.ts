// The health of a backend the server depends on but can serve without for a while (Redis, the database):
// `ok`, or `degraded` since when and why. A change is logged once (not on every failed call) and reported
// to the metrics; /v1/status shows a block per backend.

export type BackendName = 'redis' | 'database';

export interface BackendState {
  status: 'ok' | 'degraded';
  /** ISO-8601 time of the last change; null while nothing has been seen. */
  since: string | null;
  /** Why it is degraded (the last error's message); null when ok. */
  reason: string | null;
}

export interface BackendHealthOptions {
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Called on every report (the metrics' backend gauge). */
  onReport?: (name: BackendName, up: boolean) => void;
  /** What the degraded state means for requests, for the log line (e.g. "rate limits count per instance"). */
  effect: string;
}

export class BackendHealth {
  private state: BackendState = { status: 'ok', since: null, reason: null };

  constructor(
    readonly name: BackendName,
    private readonly options: BackendHealthOptions,
  ) {}

  get degraded(): boolean {
    return this.state.status === 'degraded';
  }

  /** A call succeeded (or the connection is ready). */
  ok(): void {
    this.options.onReport?.(this.name, true);
    if (this.state.status === 'ok') {
      this.state.since ??= new Date().toISOString();
      return;
    }
    const down = this.state.since;
    this.state = { status: 'ok', since: new Date().toISOString(), reason: null };
    this.options.log.info({ backend: this.name, degraded_since: down }, `${this.name} recovered`);
  }

  /** A call failed in a way that says the backend is unreachable or broken. */
  failed(err: unknown): void {
    this.options.onReport?.(this.name, false);
    const reason = String((err as Error)?.message ?? err);
    if (this.state.status === 'degraded') {
      this.state.reason = reason;
      return;
    }
    this.state = { status: 'degraded', since: new Date().toISOString(), reason };
    this.options.log.warn({ backend: this.name, reason }, `${this.name} unavailable: ${this.options.effect}; recovery is automatic`);
  }

  report(): BackendState {
    return { ...this.state };
  }
}
