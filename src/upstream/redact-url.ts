// Configured upstream URLs often carry secrets: a provider key in the path (Alchemy, Infura: the
// usual style of an RPC_URL_*), in the query, or a `user:pass@` login. Wherever such a
// URL is shown (/v1/status, /risk/v1/status, the agent card) only its origin appears, and wherever
// something is logged, the secret parts of every configured URL are replaced before the line is written.

/** Scheme, host and port of `url`; never its path, query or credentials. "[invalid URL]" if it is not one. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '[invalid URL]';
  }
}

/** The parts of configured URLs that must never be printed: userinfo, and path + query beyond "/". */
export function secretParts(urls: Iterable<string>): string[] {
  const parts = new Set<string>();
  for (const raw of urls) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      continue;
    }
    if (url.username) parts.add(url.username);
    if (url.password) parts.add(url.password);
    const rest = `${url.pathname}${url.search}`;
    if (rest !== '/' && rest !== '') {
      // As written in the variable, and as URL serialises it (percent-encoding may differ).
      parts.add(rest);
      const given = raw.slice(raw.indexOf(url.host) + url.host.length);
      if (given.length > 1) parts.add(given);
    }
  }
  // Longest first, so a path is replaced whole before a shorter part of it is considered.
  return [...parts].filter((p) => p.length >= 3).sort((a, b) => b.length - a.length);
}

export const REDACTED = '[redacted]';

/** `text` with every secret part replaced. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * A pino `formatters.log` that scrubs a log line's string fields and the messages (and causes) of
 * errors in it. Shallow by design: log objects here are small, and this runs on every line.
 */
export function scrubLogObject(secrets: readonly string[]) {
  const clean = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return scrub(value, secrets);
    if (value instanceof Error && depth < 4) {
      const e = value as Error & { shortMessage?: string; details?: string; cause?: unknown };
      return {
        type: e.name,
        message: scrub(e.message, secrets),
        ...(e.shortMessage ? { shortMessage: scrub(e.shortMessage, secrets) } : {}),
        ...(e.details ? { details: scrub(e.details, secrets) } : {}),
        ...(e.stack ? { stack: scrub(e.stack, secrets) } : {}),
        ...(e.cause !== undefined ? { cause: clean(e.cause, depth + 1) } : {}),
      };
    }
    return value;
  };
  return (object: Record<string, unknown>): Record<string, unknown> => {
    if (secrets.length === 0) return object;
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(object)) {
      const value = object[key];
      const cleaned = clean(value, 0);
      if (cleaned !== value) (out ??= { ...object })[key] = cleaned;
    }
    return out ?? object;
  };
}
