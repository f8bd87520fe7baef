// Typed errors with short messages. Every error that reaches a client is one of these;
// anything else becomes a plain 500 with no internals.

/** Base of every error whose message is safe to show to a client. */
export class AppError extends Error {
  override name = 'AppError';
  /** Seconds after which a retry may succeed (sent as Retry-After), when known. */
  readonly retryAfterS: number | undefined;
  /** Headers the answer carries (a 401's WWW-Authenticate), when there are any. */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    readonly statusCode: number,
    message: string,
    /** The upstream provider (or service: facilitator, database) this error is about, when there is one. */
    readonly source?: string,
    options?: { cause?: unknown; retryAfterS?: number; headers?: Record<string, string> },
  ) {
    super(message, options);
    this.retryAfterS = options?.retryAfterS;
    this.headers = options?.headers;
  }
}

/** 400: a parameter is missing, malformed or out of bounds. */
export class BadRequestError extends AppError {
  override name = 'BadRequestError';
  constructor(message: string) {
    super(400, message);
  }
}

/** 404: well-formed, but unknown to the source (a symbol the venue does not list). */
export class NotFoundError extends AppError {
  override name = 'NotFoundError';
  constructor(message: string, source?: string) {
    super(404, message, source);
  }
}

/** What went wrong with an upstream call; each kind has its own wording in the message. */
export type UpstreamFailure =
  | 'timeout' // the total deadline passed (connect, headers and body together)
  | 'reset' // the connection was reset or closed before an answer
  | 'network' // refused, DNS, TLS: no connection
  | 'truncated' // the connection closed in the middle of the body
  | 'http' // an HTTP error status the provider's protocol does not explain
  | 'provider' // the provider's own error code or message (often with HTTP 200)
  | 'rate_limited' // the provider is limiting this server (HTTP 429, its own code)
  | 'malformed' // the body is not what the format promises (not JSON, HTML)
  | 'schema' // parsed, but not the documented shape
  | 'too_large' // the body exceeded the configured bound
  | 'circuit_open'; // the provider failed repeatedly; calls are paused

/** Failures that mean "try again later" rather than "the provider broke": 503 with Retry-After. */
const UNAVAILABLE: ReadonlySet<UpstreamFailure> = new Set(['rate_limited', 'circuit_open']);

/** 502 (or 503 when the provider is paused or limiting us): an upstream provider failed. */
export class UpstreamError extends AppError {
  override name = 'UpstreamError';
  /** The upstream's HTTP status, when the failure is an HTTP one. */
  readonly upstreamStatus: number | undefined;

  constructor(
    source: string,
    readonly failure: UpstreamFailure,
    message: string,
    options?: { cause?: unknown; status?: number; retryAfterS?: number },
  ) {
    super(UNAVAILABLE.has(failure) ? 503 : 502, message, source, options);
    this.upstreamStatus = options?.status;
  }
}

export interface ErrorBody {
  error: string;
  source?: string;
}
