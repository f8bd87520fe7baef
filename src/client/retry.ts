// One request, sent again on a dropped connection, a timeout or a 5xx (and on a 429 or a paid twin's 409 that
// say when to come back): a few times, with exponential backoff and full jitter, honouring Retry-After, all
// within one deadline for the whole call. The caller gives the request to send; sending it again unchanged is
// what makes a paid retry safe (the same PAYMENT-SIGNATURE, identifier included, is answered once).

export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number;
  /** Longest wait for one attempt's answer, headers and body together (ms). */
  attemptTimeoutMs: number;
  /** When the whole call gives up (performance.now() time). */
  deadline: number;
  /** Backoff: the first delay's bound, doubled per attempt up to maxDelayMs (ms). */
  minDelayMs: number;
  maxDelayMs: number;
}

export type Outcome =
  /** `bytes`: the body as received (what a Content-Digest is of); `body`: the same as text. */
  | { kind: 'answer'; status: number; headers: Headers; body: string; bytes: Uint8Array }
  /** No answer: the connection failed or dropped (`network`), or the attempt's time ran out (`timeout`). */
  | { kind: 'network' | 'timeout'; error: unknown };

export interface Exchange {
  /** The last attempt's outcome: an answer, or the failure that ended the retries. */
  final: Outcome;
  /** Every attempt, in order (the last is `final`). */
  attempts: Outcome[];
}

/** The first attempt, and the retries the policy allows; `send` gets the attempt's abort signal. */
export async function exchange(send: (signal: AbortSignal) => Promise<Response>, policy: RetryPolicy): Promise<Exchange> {
  const attempts: Outcome[] = [];
  for (;;) {
    const outcome = await attempt(send, Math.min(policy.attemptTimeoutMs, policy.deadline - performance.now()));
    attempts.push(outcome);
    const wait = retryDelay(outcome, attempts.length, policy);
    if (wait === undefined || attempts.length > policy.retries || performance.now() + wait >= policy.deadline) {
      return { final: outcome, attempts };
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** Decodes as Response.text() does (UTF-8, a leading BOM dropped, bad sequences replaced). */
const utf8 = new TextDecoder();

async function attempt(send: (signal: AbortSignal) => Promise<Response>, timeoutMs: number): Promise<Outcome> {
  if (timeoutMs <= 0) return { kind: 'timeout', error: new Error('the call deadline passed') };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const res = await send(controller.signal);
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { kind: 'answer', status: res.status, headers: res.headers, body: utf8.decode(bytes), bytes };
  } catch (error) {
    return { kind: timedOut ? 'timeout' : 'network', error };
  } finally {
    clearTimeout(timer);
  }
}

/** How long to wait before the next attempt (ms), or undefined when this outcome is not retried. */
function retryDelay(outcome: Outcome, attemptsSoFar: number, policy: RetryPolicy): number | undefined {
  const backoff = Math.random() * Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** (attemptsSoFar - 1));
  if (outcome.kind !== 'answer') return backoff;
  const after = retryAfterMs(outcome.headers.get('retry-after'));
  if (outcome.status >= 500) return after === undefined ? backoff : after + Math.random() * policy.minDelayMs;
  // A rate limit, or a paid twin still being processed (409 with Retry-After): both say when to come back.
  if ((outcome.status === 429 || outcome.status === 409) && after !== undefined) return after + Math.random() * policy.minDelayMs;
  return undefined;
}

/** Retry-After as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
