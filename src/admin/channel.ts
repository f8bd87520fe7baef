// The admin channel: a tiny HTTP server on a Unix socket, DATA_DIR/admin.sock (mode 0600, in DATA_DIR
// made owner-only first: see db/data-dir.ts), through
// which the operator's CLIs ask the running server for what only it may read (the embedded database
// belongs to the server's process). Never on the public port: nothing about payers or revenue is
// served there.
//
// Why a Unix socket rather than a loopback port with a token: the file's permissions are the
// authentication (only the server's own user, or root, can connect: no secret to create, store,
// rotate or leak), it cannot be reached from the network even by a misconfigured HOST, it needs no
// free port, and it sits beside the data it serves (`docker exec` reaches it in a container).
//
// Handlers are registered per method and path (payments now; the keys CLI can add its own later);
// each answers `{ data }` or `{ error }` as JSON.
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { keepFilesOwnerOnly, prepareDataDir } from '../db/data-dir.ts';
import { acquireLock, DirLockedError } from '../db/dir-lock.ts';
import { AppError } from '../lib/errors.ts';

export interface AdminRequest {
  query: URLSearchParams;
  /** The parsed JSON body of a POST (undefined for a GET). */
  body: unknown;
}

export type AdminHandler = (req: AdminRequest) => Promise<unknown>;

export interface AdminLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Unix socket paths are limited to 107 bytes by the kernel (sun_path). */
const MAX_SOCKET_PATH = 107;
const MAX_BODY = 64 * 1024;

export class AdminChannel {
  private readonly routes = new Map<string, AdminHandler>();
  private server: Server | undefined;

  constructor(
    readonly socketPath: string,
    private readonly log: AdminLog,
  ) {}

  /** Adds a handler for `METHOD /path`. */
  route(method: 'GET' | 'POST', path: string, handler: AdminHandler): this {
    this.routes.set(`${method} ${path}`, handler);
    return this;
  }

  /**
   * Listens on the socket (mode 0600). Its directory is checked and made owner-only first (an unsafe one
   * is an UnsafeDataDirError), so no other user can connect even in the instant before the chmod. A stale
   * socket left by a dead server is replaced; one a live server answers on is an error: this DATA_DIR is
   * another instance's.
   */
  async listen(): Promise<void> {
    if (this.server) return;
    if (Buffer.byteLength(this.socketPath) > MAX_SOCKET_PATH) {
      throw new Error(`admin socket path ${this.socketPath} is longer than ${MAX_SOCKET_PATH} bytes: use a shorter DATA_DIR`);
    }
    keepFilesOwnerOnly();
    const narrowed = prepareDataDir(dirname(this.socketPath));
    if (narrowed.length) this.log.warn({ dataDir: dirname(this.socketPath), narrowed: narrowed.length, first: narrowed[0] }, 'DATA_DIR had files others could read: narrowed to their owner');
    // Held from the stale-socket check to the bind: two instances starting at once after a crash would each
    // find the socket stale, and the second would unlink the first one's new socket and take its place.
    let lock;
    try {
      lock = acquireLock(`${this.socketPath}.lock`);
    } catch (err) {
      if (err instanceof DirLockedError) throw new Error(secondInstance(this.socketPath));
      throw err;
    }
    const server = createServer((req, res) => void this.handle(req, res));
    try {
      await removeStaleSocket(this.socketPath);
      await this.bind(server);
    } finally {
      lock.release();
    }
    this.server = server;
    this.log.info({ socket: this.socketPath }, 'admin channel listening');
  }

  private async bind(server: Server): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // Created under a umask of at least 077 (keepFilesOwnerOnly), in a directory only this user may enter.
      server.listen(this.socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((err: NodeJS.ErrnoException) => {
      // Two instances starting at once: the other one bound the socket between our check and our listen.
      if (err.code === 'EADDRINUSE') throw new Error(secondInstance(this.socketPath));
      throw err;
    });
    chmodSync(this.socketPath, 0o600);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://admin');
    const handler = this.routes.get(`${req.method} ${url.pathname}`);
    try {
      if (!handler) throw new AppError(404, `no admin route ${req.method} ${url.pathname}`);
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      send(res, 200, { data: await handler({ query: url.searchParams, body }) });
    } catch (err) {
      const status = err instanceof AppError ? err.statusCode : 500;
      if (status === 500) this.log.error({ err, route: url.pathname }, 'admin request failed');
      send(res, status, { error: err instanceof AppError ? err.message : 'internal error' });
    }
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new AppError(413, 'admin request body too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  } catch {
    throw new AppError(400, 'admin request body is not JSON');
  }
}

/** Removes a socket file nobody listens on; throws when a live server answers on it. */
async function removeStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return; // nothing there
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket`);
  const live = await new Promise<boolean>((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (live) throw new Error(secondInstance(path));
  unlinkSync(path);
}

const secondInstance = (socket: string) =>
  `another marketgate instance is running on DATA_DIR ${dirname(socket)} (its admin socket ${socket} answers): ` +
  'give each instance its own DATA_DIR (several instances share a PostgreSQL server through DATABASE_URL, not a DATA_DIR)';

/** An admin request's query or body read with `schema`; its first problem is a 400 naming the field. */
export function parseAdminInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new AppError(400, `${issue.path.join('.') || 'request'}: ${issue.message}`);
  }
  return r.data;
}
