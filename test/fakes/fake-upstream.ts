// A fake upstream HTTP server on 127.0.0.1 for tests: routes by method + path, serves recorded
// payloads, and can misbehave on purpose (delay, reset the connection, send garbage).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  status?: number;
  /** Object → JSON; string → sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Destroy the socket instead of answering. */
  reset?: boolean;
}

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export type FakeHandler = (req: SeenRequest) => FakeReply | Promise<FakeReply>;

export class FakeUpstream {
  readonly requests: SeenRequest[] = [];
  private readonly routes = new Map<string, FakeHandler>();
  private server: Server | undefined;
  url = '';

  /** `route('GET /api/v1/x', handler)`; a later call for the same key replaces the earlier one. */
  route(key: string, handler: FakeHandler | FakeReply): this {
    this.routes.set(key, typeof handler === 'function' ? handler : () => handler);
    return this;
  }

  /** Requests seen for a path (method-agnostic). */
  calls(path: string): SeenRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  reset(): void {
    this.requests.length = 0;
    this.routes.clear();
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const seen: SeenRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString() };
    this.requests.push(seen);
    const handler = this.routes.get(`${seen.method} ${seen.path}`) ?? this.routes.get(`* ${seen.path}`);
    const reply: FakeReply = handler ? await handler(seen) : { status: 404, body: { error: 'fake: no route' } };
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.reset) {
      req.socket.destroy();
      return;
    }
    const isText = typeof reply.body === 'string';
    res.writeHead(reply.status ?? 200, { 'content-type': isText ? 'text/plain' : 'application/json', ...reply.headers });
    res.end(reply.body === undefined ? '' : isText ? (reply.body as string) : JSON.stringify(reply.body));
  }
}
