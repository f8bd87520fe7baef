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
  /** Accept the request and never answer. */
  hang?: boolean;
  /** Send the status line, then one header line every this many ms, forever. */
  trickleHeadersMs?: number;
  /** Send the headers, then one byte of the body every this many ms, forever. */
  trickleBodyMs?: number;
  /** Declare the whole body's length, send only this many bytes of it, then close the connection. */
  truncateAt?: number;
  /** Stream a body of this many bytes (a JSON string of 'x's), as fast as the socket takes it. */
  hugeBytes?: number;
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
  private fallback: FakeHandler | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private server: Server | undefined;
  url = '';

  /** `route('GET /api/v1/x', handler)`; a later call for the same key replaces the earlier one. */
  route(key: string, handler: FakeHandler | FakeReply): this {
    this.routes.set(key, typeof handler === 'function' ? handler : () => handler);
    return this;
  }

  /** Answers every request no route matches (any method, any path). */
  otherwise(handler: FakeHandler | FakeReply): this {
    this.fallback = typeof handler === 'function' ? handler : () => handler;
    return this;
  }

  /** Requests seen for a path (method-agnostic). */
  calls(path: string): SeenRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  reset(): void {
    this.requests.length = 0;
    this.routes.clear();
    this.fallback = undefined;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** Runs `tick` every `ms` until `done()` says the connection is gone (or the fake is reset/stopped). */
  private every(ms: number, tick: () => void, done: () => boolean): void {
    const t = setInterval(() => {
      if (done()) {
        clearInterval(t);
        this.timers.delete(t);
        return;
      }
      tick();
    }, ms);
    this.timers.add(t);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const seen: SeenRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString() };
    this.requests.push(seen);
    const handler = this.routes.get(`${seen.method} ${seen.path}`) ?? this.routes.get(`* ${seen.path}`) ?? this.fallback;
    const reply: FakeReply = handler ? await handler(seen) : { status: 404, body: { error: 'fake: no route' } };
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.reset) {
      req.socket.destroy();
      return;
    }
    if (reply.hang) return;
    if (reply.trickleHeadersMs) {
      req.socket.write('HTTP/1.1 200 OK\r\n');
      let n = 0;
      this.every(reply.trickleHeadersMs, () => req.socket.write(`x-trickle-${n++}: y\r\n`), () => req.socket.destroyed);
      return;
    }
    if (reply.trickleBodyMs) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', 'content-length': '1000000' });
      res.write('[');
      this.every(reply.trickleBodyMs, () => res.write('1'), () => res.destroyed);
      return;
    }
    if (reply.truncateAt !== undefined) {
      const full = JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(full)) });
      res.write(full.slice(0, reply.truncateAt), () => req.socket.destroy());
      return;
    }
    if (reply.hugeBytes) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      res.write('"');
      const pump = () => {
        while (sent < reply.hugeBytes! && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end('"');
      };
      pump();
      return;
    }
    const isText = typeof reply.body === 'string';
    if (res.destroyed) return;
    res.writeHead(reply.status ?? 200, { 'content-type': isText ? 'text/plain' : 'application/json', ...reply.headers });
    res.end(reply.body === undefined ? '' : isText ? (reply.body as string) : JSON.stringify(reply.body));
  }
}

