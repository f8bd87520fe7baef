// TRUST_PROXY: which peers are reverse proxies whose X-Forwarded-For names the client. Fastify reads it with
// @fastify/proxy-addr; the connection limits (connection-admission.ts) read it too, to count a proxy's
// connections in the total only (behind a proxy every client arrives from the proxy's address).
//
// A hop count is refused: Fastify 5 cannot check the immediate peer with a count, so it treats one as "trust no
// proxy" (fastify/lib/request.js getTrustProxyFn), and `TRUST_PROXY=1` left every client behind a proxy one client
// (issue 34 §2).
import proxyAddr from '@fastify/proxy-addr';
import { z } from 'zod';

/** false: the socket's peer is the client; true: any X-Forwarded-For is believed; a list: these proxies' headers are. */
export type TrustProxy = boolean | string[];

/** The names @fastify/proxy-addr gives ranges of addresses. */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

export const TRUST_PROXY_ACCEPTED =
  'false, true, or a comma-separated list of proxy addresses, CIDR ranges and the names loopback, linklocal, uniquelocal (e.g. 127.0.0.1 or loopback,10.0.0.0/8)';

export const trustProxySchema = z.string().transform((v, ctx): TrustProxy => {
  const lower = v.toLowerCase();
  if (lower === 'false') return false;
  if (lower === 'true') return true;
  if (/^\d+$/.test(v)) {
    ctx.addIssue({
      code: 'custom',
      message:
        `a hop count (${v}) is not accepted: Fastify cannot check the proxy with a count and would trust none, so every client behind the proxy would share its address. ` +
        `Write the proxy's address instead: 127.0.0.1 (a proxy on this host), loopback, a CIDR range such as 172.16.0.0/12 (a Docker network), or a comma-separated list of them`,
    });
    return z.NEVER;
  }
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.find((s) => !RANGE_NAMES.includes(s) && !validRange(s));
  if (list.length === 0 || bad !== undefined) {
    ctx.addIssue({ code: 'custom', message: `${bad === undefined ? '' : `'${bad}' is neither an address nor a range: `}${TRUST_PROXY_ACCEPTED}` });
    return z.NEVER;
  }
  return list;
});

function validRange(entry: string): boolean {
  try {
    proxyAddr.compile([entry]);
    return true;
  } catch {
    return false;
  }
}

/** Whether a peer address is a trusted proxy (its connections are then counted in the total only). */
export function trustsPeer(trust: TrustProxy): (address: string) => boolean {
  if (trust === true) return () => true;
  if (trust === false) return () => false;
  const fn = proxyAddr.compile(trust);
  return (address) => fn(address, 0);
}

/** The start-up warning for TRUST_PROXY=true. */
export function trustProxyWarning(trust: TrustProxy): string | undefined {
  if (trust !== true) return undefined;
  return (
    'TRUST_PROXY=true believes any X-Forwarded-For: unless this port is reachable through the proxy alone, any client can choose its own address ' +
    "and so escape every per-IP limit; and every peer counts as a proxy, so the per-IP connection limits do not apply. Set TRUST_PROXY to the proxy's address or range instead (127.0.0.1, loopback, 172.16.0.0/12)."
  );
}
