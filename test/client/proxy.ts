// An HTTP proxy on 127.0.0.1 that loses answers on purpose, for the retry tests: what a load balancer or a
// flaky network does between a client and marketgate (or between marketgate and its facilitator), or a server
// that lies about what it charged. Each request is forwarded, or not, as `decide` says for it; every request is
// recorded with its payment header and API key.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyAction =
  /** Forward and pass the answer on. */
  | { kind: 'forward' }
  /** Forward, wait for the answer, then close the client's connection without sending it. */
  | { kind: 'drop-after' }
  /** Forward, then hold the answer this long before sending it. */
  | { kind: 'delay'; ms: number }
  /** Forward, then send this instead of the answer (the answer is lost). */
  | { kind: 'replace'; status: number; headers?: Record<string, string>; body?: string }
  /** Answer this without forwarding. */
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body?: string }
  /** Forward, then send the answer as `edit` changes it (a server lying about what it charged). */
  | { kind: 'rewrite'; edit: (answer: ProxiedAnswer) => ProxiedAnswer };

export interface ProxiedAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

export interface ProxiedRequest {
  method: string;
  path: string;
  paymentSignature: string | undefined;
  /** The x-api-key it carried. */
  apiKey: string | undefined;
  /** performance.now() when it arrived. */
  at: number;
}

export class LossyProxy {
  readonly seen: ProxiedRequest[] = [];
  url = '';
  /** Decides what happens to each request (the default forwards everything). */
  decide: (req: ProxiedRequest) => ProxyAction = () => ({ kind: 'forward' });
  private server: Server | undefined;

  constructor(private readonly target: string) {}

  /** Requests that carried a PAYMENT-SIGNATURE. */
  paid(): ProxiedRequest[] {
    return this.seen.filter((r) => r.paymentSignature !== undefined);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(
        (out) => {
          if (out === 'drop') return void req.socket.destroy();
          res.writeHead(out.status, out.headers);
          res.end(out.body);
        },
        () => req.socket.destroy(),
      );
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }

  private async handle(req: IncomingMessage): Promise<'drop' | ProxiedAnswer> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const sig = req.headers['payment-signature'];
    const key = req.headers['x-api-key'];
    const seen: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      paymentSignature: typeof sig === 'string' ? sig : undefined,
      apiKey: typeof key === 'string' ? key : undefined,
      at: performance.now(),
    };
    this.seen.push(seen);
    const action = this.decide(seen);
    if (action.kind === 'answer') return { status: action.status, headers: action.headers ?? {}, body: action.body ?? '' };
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
    const upstream = await fetch(`${this.target}${req.url}`, { method: req.method, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (action.kind === 'drop-after') return 'drop';
    if (action.kind === 'replace') return { status: action.status, headers: action.headers ?? {}, body: action.body ?? '' };
    if (action.kind === 'delay') await new Promise((r) => setTimeout(r, action.ms));
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (!['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding'].includes(k)) out[k] = v;
    });
    return action.kind === 'rewrite' ? action.edit({ status: upstream.status, headers: out, body }) : { status: upstream.status, headers: out, body };
  }
}
