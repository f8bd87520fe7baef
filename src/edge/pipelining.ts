// What one connection may hold unsent: its pipelined requests are answered one at a time, and only so
// many may wait.
//
// Node's HTTP server (lib/_http_server.js, Node 20 and 22) parses every request of a chunk it has read and
// emits 'request' for each before anything pauses the socket: parserOnIncoming pauses it (socket._paused,
// then the parser once the chunk is done) only for the reads after it, and only once the answers queued on
// it hold more than socket.writableHighWaterMark or its write buffer needs a drain. A response that arrives
// behind an unfinished one is queued (state.outgoing) with its bytes kept in memory (outputData) until
// every answer before it is sent. So a client that writes 1,000 pipelined GETs in one 40 KB write and
// never reads had 1,000 answers made and kept.
//
// Here, before Fastify sees it, a request whose response Node queued (its `socket` is null until its turn,
// when Node assigns the socket and emits 'socket') is held, and handed to Fastify when its turn comes: at
// most one answer per connection is being made or written at a time, whatever the client sends. While
// requests wait the connection is not read (Node's own pause, socket._paused, which its parser and its
// 'drain' handling honour); past `maxWaiting` requests waiting (the rest of a chunk already read) the
// connection is closed. The common case, a response with its socket, costs one property check.
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerFactory } from 'fastify';

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The parts of Node's HTTP server socket this module uses (private to Node; the same in Node 20 and 22). */
interface ServerSocket extends Socket {
  _paused: boolean;
  parser: { resume(): void } | null;
  _writableState: { needDrain: boolean };
}

export interface PipeliningOptions {
  /** Requests that may wait on one connection behind the one being answered; one more closes the connection. */
  maxWaiting: number;
  /** Told each time a connection is closed for sending more (metrics). */
  onClosed?: () => void;
}

/** Requests waiting per connection (only connections that pipeline have an entry). */
const waiting = new WeakMap<Socket, { count: number }>();

/** `handler` (Fastify's), with the pipelined requests of each connection held until their turn (see above). */
export function oneAnswerAtATime(handler: RequestHandler, options: PipeliningOptions): RequestHandler {
  const { maxWaiting, onClosed } = options;
  return function pipelined(req, res) {
    if (res.socket !== null) return handler(req, res);
    const socket = req.socket as ServerSocket;
    // The rest of a chunk whose connection was closed below: Node still parses it; nothing is done with it.
    if (socket.destroyed) return;
    let queue = waiting.get(socket);
    if (queue === undefined) waiting.set(socket, (queue = { count: 0 }));
    if (queue.count >= maxWaiting) {
      socket.destroy();
      onClosed?.();
      return;
    }
    queue.count++;
    stopReading(socket);
    const turn = queue;
    res.once('socket', () => {
      turn.count--;
      if (turn.count === 0) resumeReading(socket);
      // After Node's resOnFinish has handed the socket over (assignSocket flushes once 'socket' returns).
      process.nextTick(handler, req, res);
    });
  };
}

/** Node's own pause: the handle stops reading now, the parser once the chunk at hand is parsed. */
function stopReading(socket: ServerSocket): void {
  if (socket._paused) return;
  socket._paused = true;
  socket.pause();
}

/** As Node's socketOnDrain resumes; a socket whose writes back up is resumed by Node on its 'drain'. */
function resumeReading(socket: ServerSocket): void {
  if (!socket._paused || socket.destroyed || socket._writableState.needDrain) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}

/**
 * Fastify's `serverFactory`: the HTTP/1.1 server Fastify would make itself (fastify/lib/server.js: its
 * `http` options, keep-alive, request and connection timeouts), with its request handler behind
 * oneAnswerAtATime. Fastify calls it for every address it listens on.
 */
export function pipeliningServer(options: PipeliningOptions): FastifyServerFactory {
  return (handler, opts) => {
    const server = createServer((opts.http ?? {}) as ServerOptions, oneAnswerAtATime(handler as RequestHandler, options));
    server.keepAliveTimeout = opts.keepAliveTimeout as number;
    server.requestTimeout = opts.requestTimeout as number;
    server.setTimeout(opts.connectionTimeout as number);
    if ((opts.maxRequestsPerSocket as number) > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket as number;
    return server;
  };
}
