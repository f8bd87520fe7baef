// The MCP server's settings, from its environment (what an agent host's `mcpServers` entry sets). A bad value
// stops it with one line on stderr naming the variable.
import { isIP } from 'node:net';
import { MarketgateError, parseAssets, type ClientOptions, type PaymentAsset } from '../client/index.ts';

export const MCP_ENV = {
  MARKETGATE_URL: 'the marketgate server to call (default http://127.0.0.1:3000)',
  MARKETGATE_API_KEY: 'an API key: paid tools are served on it, nothing is paid with x402',
  MARKETGATE_WALLET_KEY: 'a private key (0x + 64 hex digits) that pays paid tools with x402 (USDC)',
  MARKETGATE_MAX_SPEND_USD: 'the most the wallet pays while this process runs, in dollars (default 0.10)',
  MARKETGATE_BATCH: 'true: pay with batch-settlement when the server offers it (one deposit, then vouchers)',
  MARKETGATE_RPC_URL: "an RPC endpoint of the payment network, for batch-settlement's channel reads",
  MARKETGATE_ASSETS: 'tokens to pay in besides USDC, for test networks: network:address:decimals, comma-separated',
  MARKETGATE_MCP_HOST: 'with --http: the address the remote MCP server listens on (default 127.0.0.1)',
  MARKETGATE_MCP_PORT: "with --http: its port (default 3100; 0: any free one, shown in the start-up line); never the API's own",
  MARKETGATE_MCP_FORWARD_IP: "with --http, true: send each caller's address to the API as X-Forwarded-For (the API's TRUST_PROXY must name this server)",
  MARKETGATE_MCP_TRUST_PROXY: "with --http: the addresses of the proxies in front of it, comma-separated: from them, a caller's address is their X-Forwarded-For's last",
} as const;

/** What the local (stdio) server pays with; the remote one holds no funds and no key. */
const PAYING = ['MARKETGATE_API_KEY', 'MARKETGATE_WALLET_KEY', 'MARKETGATE_MAX_SPEND_USD', 'MARKETGATE_BATCH', 'MARKETGATE_RPC_URL'] as const;

export class EnvError extends Error {
  override name = 'EnvError';
}

export interface McpSettings {
  client: ClientOptions;
  /** What pays for paid tools, in words, for the start-up line and the tools' errors. */
  paysWith: 'an API key' | 'a wallet (x402)' | 'nothing';
}

const getter = (env: NodeJS.ProcessEnv) => (name: keyof typeof MCP_ENV) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);

export function readEnv(env: NodeJS.ProcessEnv): McpSettings {
  const get = getter(env);
  const url = get('MARKETGATE_URL') ?? 'http://127.0.0.1:3000';
  const wallet = get('MARKETGATE_WALLET_KEY');
  if (wallet !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(wallet)) throw new EnvError('MARKETGATE_WALLET_KEY must be a private key: 0x followed by 64 hex digits');
  const max = get('MARKETGATE_MAX_SPEND_USD');
  if (max !== undefined && !/^\d+(\.\d+)?$/.test(max)) throw new EnvError(`MARKETGATE_MAX_SPEND_USD must be a number of dollars such as 0.10, got ${JSON.stringify(max)}`);
  const batch = get('MARKETGATE_BATCH');
  if (batch !== undefined && batch !== 'true' && batch !== 'false') throw new EnvError('MARKETGATE_BATCH must be true or false');
  const rpcUrl = get('MARKETGATE_RPC_URL');
  const apiKey = get('MARKETGATE_API_KEY');
  return {
    client: {
      baseUrl: url,
      ...(apiKey ? { apiKey } : {}),
      ...(wallet ? { wallet: wallet as `0x${string}` } : {}),
      ...(max !== undefined ? { maxSpendUsd: Number(max) } : {}),
      ...(batch === 'true' ? { batch: rpcUrl ? { rpcUrl } : true } : {}),
      assets: assets(get('MARKETGATE_ASSETS')),
    },
    paysWith: apiKey ? 'an API key' : wallet ? 'a wallet (x402)' : 'nothing',
  };
}

/** `eip155:31337:0xabc…:6,…`: see parseAssets. */
function assets(value: string | undefined): PaymentAsset[] {
  try {
    return parseAssets(value ?? '');
  } catch (err) {
    throw new EnvError(`MARKETGATE_ASSETS: ${err instanceof MarketgateError ? err.error : String(err)}`);
  }
}

export interface HttpSettings {
  /** The API the remote server calls. */
  baseUrl: string;
  host: string;
  port: number;
  forwardIp: boolean;
  /** Peers whose X-Forwarded-For names the caller (exact addresses). */
  trustedProxies: string[];
}

/** The remote server's settings (`--http`): where it listens, and nothing to pay with (its callers pay). */
export function readHttpEnv(env: NodeJS.ProcessEnv): HttpSettings {
  const get = getter(env);
  const set = PAYING.filter((name) => get(name) !== undefined);
  if (set.length) throw new EnvError(`${set.join(', ')}: not for --http, where each caller pays with its own key or x402 payment and this server holds none; unset ${set.length > 1 ? 'them' : 'it'}`);
  const baseUrl = readEnv(env).client.baseUrl;
  const host = get('MARKETGATE_MCP_HOST') ?? '127.0.0.1';
  const portText = get('MARKETGATE_MCP_PORT') ?? '3100';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new EnvError(`MARKETGATE_MCP_PORT must be a port number from 1 to 65535 (0: any free one), got ${JSON.stringify(portText)}`);
  let api: URL | undefined;
  try {
    api = new URL(baseUrl);
  } catch {
    throw new EnvError(`MARKETGATE_URL must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
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

function sameHost(a: string, b: string): boolean {
  return a === b || (LOOPBACK.has(a) && LOOPBACK.has(b)) || a === '0.0.0.0' || b === '0.0.0.0' || b === '::';
}
