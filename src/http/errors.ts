// Typed errors with short messages. Every error that reaches a client is one of these;
// anything else becomes a plain 500 with no internals.

/** Base of every error whose message is safe to show to a client. */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly statusCode: number,
    message: string,
    /** The upstream provider this error is about, when there is one. */
    readonly source?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
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

export type UpstreamFailure =
  | 'network' // connection refused / reset / DNS
  | 'timeout' // connect, headers or body timeout
  | 'http' // non-2xx status
  | 'provider' // 2xx with a provider error code in the body
  | 'malformed' // body is not parseable
  | 'schema' // body parsed but does not have the documented shape
  | 'too_large'; // body exceeded the configured bound

/** 502 (or 503): an upstream provider failed. `source` names the provider. */
export class UpstreamError extends AppError {
  override name = 'UpstreamError';
  constructor(
    source: string,
    readonly failure: UpstreamFailure,
    message: string,
    options?: { cause?: unknown; status?: number; statusCode?: 502 | 503 },
  ) {
    super(options?.statusCode ?? 502, message, source, options);
    this.upstreamStatus = options?.status;
  }
  /** The upstream's HTTP status, when the failure is an HTTP one. */
  readonly upstreamStatus: number | undefined;
}

export interface ErrorBody {
  error: string;
  source?: string;
}
