// The remote MCP server (`npm run mcp -- --http`): the same tools over Streamable HTTP at POST /mcp, as a process
// of its own beside the API. Stateless: each request gets a fresh protocol instance over the cached tool list,
// 2026-07-28 clients and 2025 ones (the SDK's legacy lane) alike. What a caller sends on the connection (its API
// key) and its address (behind a trusted proxy, the one the proxy saw) reach the call through the SDK's
// pass-through auth info; nothing about a caller is kept.
// Bounded: a request body is at most 1 MiB, at most MAX_IN_FLIGHT requests run at once (more get 503 and
// Retry-After), and a request that does not finish in time is closed. On a loopback address the Host and Origin
// headers are checked (DNS rebinding).
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { mcpServer } from './protocol.ts';
import { callRemote, type Caller, type RemoteOptions } from './remote-call.ts';
import type { ToolList } from './tool-list.ts';

export const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_IN_FLIGHT = 256;
/** Longest a request may take: the API client's own deadline (30 s) and some. */
const REQUEST_TIMEOUT_MS = 45_000;

export interface HttpOptions {
  host: string;
  port: number;
  /** Peers whose X-Forwarded-For names the caller (the proxies in front of this server). */
  trustedProxies: string[];
  tools: ToolList;
  remote: RemoteOptions;
  onError?: (err: Error) => void;
}

export interface RunningHttp {
  url: string;
  close(): Promise<void>;
}

export async function serveHttp(o: HttpOptions): Promise<RunningHttp> {
  const handler = createMcpHandler(
    async ({ authInfo }) => {
      const tools = await o.tools.get();
      const caller: Caller = { apiKey: authInfo?.token || undefined, ip: typeof authInfo?.extra?.ip === 'string' ? authInfo.extra.ip : undefined };
      return mcpServer(tools, (tool, args, meta) => callRemote(o.remote, caller, tool, args, meta));
    },
    { maxRequestBodySize: MAX_BODY_BYTES, ...(o.onError ? { onerror: o.onError } : {}) },
  );
  const node = toNodeHandler(handler, { maxRequestBodySize: MAX_BODY_BYTES, ...(o.onError ? { onerror: o.onError } : {}) });
  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(o.host);
  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();
  const trusted = new Set(o.trustedProxies.map(plainIp));
  let inFlight = 0;
  const server: HttpServer = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== MCP_PATH) return json(res, 404, { error: `not found: the MCP endpoint is ${MCP_PATH}` });
    if (loopback && (!validHost(req, res) || !validOrigin(req, res))) return;
    if (inFlight >= MAX_IN_FLIGHT) return json(res, 503, { error: 'too many requests at once; retry shortly' }, { 'retry-after': '1' });
    inFlight++;
    res.once('close', () => inFlight--);
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authOf(req, trusted);
    void node(req as IncomingMessage & { auth?: AuthInfo }, res);
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${shown}:${port}${MCP_PATH}`,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The caller's API key (x-api-key, or Authorization: Bearer) and address, handed to the call as the SDK's auth info. */
function authOf(req: IncomingMessage, trusted: ReadonlySet<string>): AuthInfo {
  const header = req.headers['x-api-key'];
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const apiKey = (Array.isArray(header) ? header[0] : header) || bearer || '';
  return { token: apiKey, clientId: 'marketgate-mcp-caller', scopes: [], extra: { ip: callerIp(req, trusted) } };
}

/**
 * The socket's peer; when that peer is a proxy named in MARKETGATE_MCP_TRUST_PROXY, the last address of its
 * X-Forwarded-For (the one it saw; anything before it the caller could have written).
 */
export function callerIp(req: Pick<IncomingMessage, 'headers' | 'socket'>, trusted: ReadonlySet<string>): string | undefined {
  const peer = req.socket.remoteAddress === undefined ? undefined : plainIp(req.socket.remoteAddress);
  if (peer === undefined || !trusted.has(peer)) return peer;
  const forwarded = [req.headers['x-forwarded-for']].flat().join(',').split(',').map((a) => a.trim()).filter(Boolean).at(-1);
  return forwarded !== undefined && isIP(plainIp(forwarded)) !== 0 ? plainIp(forwarded) : peer;
}

/** `::ffff:203.0.113.7` (IPv4 on a dual-stack socket) as `203.0.113.7`. */
function plainIp(address: string): string {
  return address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
