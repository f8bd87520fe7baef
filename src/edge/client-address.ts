// Which client a connection's peer address stands for, for the per-client connection limits: an IPv4 address
// (also when written IPv4-mapped, ::ffff:1.2.3.4), or an IPv6 address's /64, since one IPv6 client is given a
// whole /64 and can pick any address in it.

/** The key one client's connections are counted under. */
export function clientKey(address: string | undefined): string {
  if (address === undefined) return '?';
  if (!address.includes(':')) return address;
  const lower = address.toLowerCase();
  if (lower.startsWith('::ffff:') && lower.includes('.')) return lower.slice(7);
  const zone = lower.indexOf('%');
  return `${ipv6Groups(zone === -1 ? lower : lower.slice(0, zone)).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` expanded (an embedded IPv4 tail counts as two groups). */
function ipv6Groups(address: string): string[] {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const left = part(head);
  const right = part(tail);
  const missing = Math.max(0, 8 - left.length - right.length - (address.includes('.') ? 1 : 0));
  const groups = tail === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right];
  return groups.map((g) => (g.includes('.') ? g : String(parseInt(g, 16).toString(16))));
}
