// Whose quota a request counts against, when it is counted per client: the client IP, with an IPv4
// client seen through an IPv6 socket (::ffff:1.2.3.4) counted as its IPv4 address, and an IPv6 client
// counted by its /64 prefix: one host is usually given a whole /64, so counting single addresses would
// let it rotate through them to escape its limit.

/** The quota bucket of a client IP. */
export function clientBucket(ip: string): string {
  if (!ip.includes(':')) return ip;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const hextets = expandIPv6(ip);
  return hextets ? `${hextets.slice(0, 4).join(':')}::/64` : ip;
}

/** The eight hextets of an IPv6 address (lower case, no leading zeros), or null when it is not one. */
function expandIPv6(ip: string): string[] | null {
  const zone = ip.indexOf('%');
  const addr = (zone === -1 ? ip : ip.slice(0, zone)).toLowerCase();
  const halves = addr.split('::');
  if (halves.length > 2) return null;
  const part = (s: string) => (s === '' ? [] : s.split(':'));
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (!all.every((h) => /^[0-9a-f]{1,4}$/.test(h))) return null;
  return all.map((h) => String(parseInt(h, 16).toString(16)));
}

/** A connection's bucket names by scope, for the client address they were made for. */
interface SocketBuckets {
  ip: string;
  names: Map<string, string>;
}
const bySocket = new WeakMap<object, SocketBuckets>();

/**
 * `<scope>:<client bucket>`, the name a per-client limit counts under. Kept per connection while its client
 * address stays the same (always, unless TRUST_PROXY reads it from each request's headers), so a keep-alive
 * client's requests count under one string whose hash is computed once rather than a new one per request.
 */
export function clientBucketName(scope: string, ip: string, socket: object): string {
  let buckets = bySocket.get(socket);
  if (buckets === undefined || buckets.ip !== ip) bySocket.set(socket, (buckets = { ip, names: new Map() }));
  let name = buckets.names.get(scope);
  if (name === undefined) buckets.names.set(scope, (name = `${scope}:${clientBucket(ip)}`));
  return name;
}
