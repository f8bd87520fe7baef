// Redirects: the client's API key and payments go to the origin it was configured for, and nowhere else. fetch
// follows a redirect to any origin with every header but Authorization (`x-api-key` and `PAYMENT-SIGNATURE`
// included), so the client asks for redirects by hand and follows those within the same origin (scheme, host
// and port), a few at most; a redirect elsewhere is handed back unfollowed, and the call fails with a `redirect`
// error naming where it was sent (call.ts).

/** Redirects followed within one origin before the last one is handed back as it is. */
export const MAX_REDIRECTS = 5;

/** A redirect status, or 0: a browser's opaque redirect (`redirect: 'manual'`), which hides where it points. */
export const isRedirect = (status: number): boolean => status === 0 || status === 301 || status === 302 || status === 303 || status === 307 || status === 308;

/**
 * `fetch`, following only same-origin redirects of GET and HEAD requests (all the client sends). In a browser a
 * manual redirect is opaque (status 0, no Location): it is handed back, and the call fails as redirected.
 */
export function sameOriginFetch(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    let url = new URL(request ? request.url : String(input));
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    for (let hop = 0; ; hop++) {
      const res = await inner(request ? (hop === 0 ? request : new Request(url, request)) : url, { ...init, redirect: 'manual' });
      const location = isRedirect(res.status) ? res.headers.get('location') : null;
      if (location === null || hop >= MAX_REDIRECTS || (method !== 'GET' && method !== 'HEAD')) return res;
      const next = new URL(location, url);
      if (next.origin !== url.origin) return res;
      await res.body?.cancel();
      url = next;
    }
  };
}

/** Where a redirect sends to, absolute; a browser's opaque redirect does not say. */
export function redirectTarget(from: string, headers: Headers): string {
  const location = headers.get('location');
  if (location === null) return 'a location the answer does not show';
  try {
    return new URL(location, from).href;
  } catch {
    return JSON.stringify(location);
  }
}
