// How a provider says "no". Each source declares its protocol once, at module level: given the
// parsed body and the HTTP status, it tells an answer (ok, or "no such thing") from a failure (the
// provider's error code, its rate limit). The HTTP client applies it to every response before the
// schema, so the schemas describe only the documented success body.

export type Verdict =
  | { kind: 'ok' }
  /** The provider answered that the thing asked for does not exist: our 404, not a failure. */
  | { kind: 'not_found'; detail?: string }
  /** The provider reported an error of its own (a code or message in the body). */
  | { kind: 'provider_error'; detail: string }
  /** The provider is limiting this server. */
  | { kind: 'rate_limited'; detail: string; retryAfterS?: number };

export interface Protocol {
  /**
   * Reads a parsed body (JSON, or the text for text formats) and its HTTP status. Returns undefined
   * when the body says nothing special, and then the status decides (2xx ok, 429 rate limited,
   * anything else an HTTP failure).
   */
  classify(body: unknown, status: number): Verdict | undefined;
  /** The shape every success body of this protocol has (checked by fetchFn, whose caller parses the rest). */
  envelope?: import('zod').ZodType;
}

export const OK: Verdict = { kind: 'ok' };

/** Providers whose errors are plain HTTP statuses. */
export const HTTP_STATUS_ONLY: Protocol = { classify: () => undefined };

export const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Retry-After in seconds from a header value (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Math.max(1, Number(v.trim()));
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(1, Math.ceil((at - now) / 1000));
}
