// The remote MCP server's settings (`--http`), from its environment: where it listens, whom it believes about a
// caller's address, and nothing to pay with — its callers pay, so every setting of the local server but
// MARKETGATE_URL (a key, a wallet and how it pays) is refused rather than ignored. A bad value stops it with one
// line on stderr naming the variable.
import { isIP } from 'node:net';
import { EnvError, MCP_ENV } from './env.ts';

export const MCP_HTTP_ENV = {
  MARKETGATE_MCP_HOST: 'the address the remote MCP server listens on (default 127.0.0.1)',
  MARKETGATE_MCP_PORT: "its port (default 3100; 0: any free one, shown in the start-up line); never the API's own",
  MARKETGATE_MCP_FORWARD_IP: "true: send each caller's address to the API as X-Forwarded-For (the API's TRUST_PROXY must name this server)",
  MARKETGATE_MCP_TRUST_PROXY: "the IP addresses of the proxies in front of it, comma-separated: from them, a caller's address is their X-Forwarded-For's last",
} as const;

export interface HttpSettings {
  /** The API the remote server calls. */
  baseUrl: string;
  host: string;
  port: number;
  forwardIp: boolean;
  /** Peers whose X-Forwarded-For names the caller (exact addresses). */
  trustedProxies: string[];
}

export function readHttpEnv(env: NodeJS.ProcessEnv): HttpSettings {
  const get = (name: keyof typeof MCP_HTTP_ENV | keyof typeof MCP_ENV) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const set = (Object.keys(MCP_ENV) as (keyof typeof MCP_ENV)[]).filter((name) => name !== 'MARKETGATE_URL' && get(name) !== undefined);
  if (set.length) throw new EnvError(`${set.join(', ')}: not for --http, where each caller pays with its own key or x402 payment and this server holds none; unset ${set.length > 1 ? 'them' : 'it'}`);
  const baseUrl = (get('MARKETGATE_URL') ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  let api: URL | undefined;
  try {
    api = new URL(baseUrl);
  } catch {
    /* below */
  }
  if (!api || (api.protocol !== 'http:' && api.protocol !== 'https:')) throw new EnvError(`MARKETGATE_URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  const host = get('MARKETGATE_MCP_HOST') ?? '127.0.0.1';
  const portText = get('MARKETGATE_MCP_PORT') ?? '3100';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new EnvError(`MARKETGATE_MCP_PORT must be a port number from 1 to 65535 (0: any free one), got ${JSON.stringify(portText)}`);
  const apiPort = Number(api.port || (api.protocol === 'https:' ? 443 : 80));
  if (apiPort === port && sameHost(api.hostname, host)) throw new EnvError(`MARKETGATE_MCP_PORT ${port} is the API's own port (MARKETGATE_URL ${baseUrl}): the remote MCP server is a process of its own beside the API`);
  const forward = get('MARKETGATE_MCP_FORWARD_IP');
  if (forward !== undefined && forward !== 'true' && forward !== 'false') throw new EnvError('MARKETGATE_MCP_FORWARD_IP must be true or false');
  const trusted = (get('MARKETGATE_MCP_TRUST_PROXY') ?? '').split(',').map((a) => a.trim()).filter(Boolean);
  const bad = trusted.find((a) => isIP(a) === 0);
  if (bad !== undefined) throw new EnvError(`MARKETGATE_MCP_TRUST_PROXY must be IP addresses, comma-separated (no names, no ranges), got ${JSON.stringify(bad)}`);
  return { baseUrl, host, port, forwardIp: forward === 'true', trustedProxies: trusted };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether the API's host and this listening address are one machine's same address (0.0.0.0 and :: are all of them). */
function sameHost(api: string, listen: string): boolean {
  return api === listen || (LOOPBACK.has(api) && LOOPBACK.has(listen)) || listen === '0.0.0.0' || listen === '::';
}
