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
// 'drain' handling honour); past `maxWaiting` requests waiting the connection is closed, and its parser stops
// there: the rest of the chunk already read (64 KB of tiny requests is ~2,000 of them, 70 ms of parsing at
// ~35 µs each) is not parsed (stopParsingOnceClosed). The common case, a response with its socket, costs one
// property check.
import { createServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerFactory } from 'fastify';
import { admitConnections, closeStalledConnections, type Admission, type ConnectionClosedReason, type ConnectionLimits } from './connection-admission.ts';

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
  /** Told each time the server closes a connection for one of its bounds, and why (metrics). */
  onClosed?: (reason: ConnectionClosedReason) => void;
  /** Told of each connection closed for pipelining, before it is destroyed (its client pays: connection-admission.ts). */
  onPipeliningClosed?: (socket: Socket) => void;
  /** The connection limits (connection-admission.ts). */
  connections: ConnectionLimits;
  /** Whether a peer is a trusted proxy (TRUST_PROXY): counted in MAX_CONNECTIONS only. */
  trustedPeer?: (address: string) => boolean;
}

/** Requests waiting per connection, and which (only connections that pipeline have an entry). */
const waiting = new WeakMap<Socket, { count: number; held: Set<IncomingMessage> }>();

/**
 * Lets go of requests Fastify never saw without an error each. When a connection closes, Node destroys every
 * request it parsed and has not answered with an error whose stack it formats (abortIncoming, then the
 * stream's checkError): about 250 µs a request, so 300 connections closed with 100 requests parsed each held
 * the event loop for 200 ms at a time. A request already destroyed is passed over at no cost.
 */
function letGo(requests: Iterable<IncomingMessage>): void {
  for (const req of requests) req.destroy();
}

/** Requests waiting on a connection behind the one being answered (its queued work, for shedding). */
export function waitingOn(socket: Socket): number {
  return waiting.get(socket)?.count ?? 0;
}

/** The bytes a waiting request is counted as when the heaviest connections are chosen (its request and answer objects). */
const WAITING_REQUEST_BYTES = 4096;

/**
 * Makes the connection's parser stop at the next request once the connection is closed. Node's parser consumes
 * the socket in C++ and calls back into JavaScript for each request of the chunk it read, whatever happened to the
 * connection meanwhile; its request callback's result -1 is llhttp's "user callback error", which ends the parse
 * of the chunk there (Node then reports a client error on a destroyed socket, which is ignored). One property
 * check per request.
 */
export function stopParsingOnceClosed(socket: Socket): void {
  const parser = (socket as ServerSocket).parser as (ServerSocket['parser'] & { onIncoming?: (req: IncomingMessage, keepAlive: boolean) => number }) | null;
  const onIncoming = parser?.onIncoming;
  if (parser == null || typeof onIncoming !== 'function') return;
  parser.onIncoming = (req, keepAlive) => (socket.destroyed ? -1 : onIncoming(req, keepAlive));
}

/** Held requests whose turn has come that are handed to Fastify in one turn of the event loop at most. */
export const ANSWERS_PER_TURN = 8;

/** `handler` (Fastify's), with the pipelined requests of each connection held until their turn (see above). */
export function oneAnswerAtATime(handler: RequestHandler, options: PipeliningOptions): RequestHandler {
  const { maxWaiting, onClosed, onPipeliningClosed } = options;
  const runInTurns = fewPerTurn(handler, ANSWERS_PER_TURN);
  return function pipelined(req, res) {
    if (res.socket !== null) return handler(req, res);
    const socket = req.socket as ServerSocket;
    // The rest of a chunk whose connection was closed below: Node still parses it; nothing is done with it.
    if (socket.destroyed) return letGo([req]);
    let queue = waiting.get(socket);
    if (queue === undefined) {
      const held = new Set<IncomingMessage>();
      waiting.set(socket, (queue = { count: 0, held }));
      // Before Node's own 'close' listener aborts them one error each (letGo), whoever closes the connection.
      socket.prependOnceListener('close', () => letGo(held));
    }
    if (queue.count >= maxWaiting) {
      letGo([req]);
      socket.destroy();
      onClosed?.('pipelining');
      onPipeliningClosed?.(socket);
      return;
    }
    queue.count++;
    queue.held.add(req);
    stopReading(socket);
    const turn = queue;
    res.once('socket', () => {
      turn.count--;
      turn.held.delete(req);
      if (turn.count === 0) resumeReading(socket);
      // Node hands the socket over as soon as the answer before has been written into it, read by the client or
      // not: the next answer is made only once the client has taken the last one (no drain pending), so a client
      // that does not read holds one answer, not one per request it sent. And in a later turn, after Node's
      // resOnFinish has handed the socket over (assignSocket flushes once 'socket' returns).
      const run = () => runInTurns(req, res);
      if (socket.writableNeedDrain) socket.once('drain', run);
      else run();
    });
  };
}

/**
 * `handler`, called for the requests given to it in later turns of the event loop, `perTurn` per turn in the
 * order given. Not one setImmediate each: Node runs every immediate queued before its check phase in that one
 * phase, so 300 connections each with its next pipelined request ready (300 answers of 226 KB) made one task of
 * 215 ms, and a request from anyone else waited for it. A few per turn lets the poll phase (every other
 * connection) in between.
 */
function fewPerTurn(handler: RequestHandler, perTurn: number): RequestHandler {
  const ready: Array<[IncomingMessage, ServerResponse]> = [];
  let next = 0;
  let scheduled = false;
  const runSome = () => {
    scheduled = false;
    for (let n = 0; n < perTurn && next < ready.length; n++) {
      const [req, res] = ready[next]!;
      ready[next++] = undefined as never;
      // A connection closed while its request waited: Node has let its request go; Fastify never saw it.
      if (!req.socket.destroyed) handler(req, res);
    }
    if (next === ready.length) ready.length = next = 0;
    else {
      if (next >= 1024) ready.splice(0, next), (next = 0); // what was run is let go under a steady stream too
      schedule();
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(runSome);
  };
  return (req, res) => {
    ready.push([req, res]);
    schedule();
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
export function pipeliningServer(options: PipeliningOptions): FastifyServerFactory & { admissions: Set<Admission> } {
  /** One per address Fastify listens on. */
  const admissions = new Set<Admission>();
  const factory: FastifyServerFactory = (handler, opts) => {
    const answer = oneAnswerAtATime(handler as RequestHandler, { ...options, onPipeliningClosed: (socket) => admission?.penalize(socket) });
    let admission: Admission | undefined;
    const server = createServer((opts.http ?? {}) as ServerOptions, (req, res) => {
      admission!.requestOn(req.socket);
      answer(req, res);
    });
    // A client that half-closes after sending its request (`nc -N`, a socket.end(request)) still gets its answer: Node's
    // default aborts a request in flight on the client's FIN, so only answers already made came back. (A property of
    // node:http's Server since Node 0.x that @types/node does not declare.)
    (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    server.keepAliveTimeout = opts.keepAliveTimeout as number;
    server.requestTimeout = opts.requestTimeout as number;
    server.setTimeout(opts.connectionTimeout as number);
    if ((opts.maxRequestsPerSocket as number) > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket as number;
    // Connections admitted per client before Node's HTTP server sees them; a connection whose client stopped reading is let go.
    const admitted = admitConnections(server, {
      ...options.connections,
      trusted: options.trustedPeer,
      onClosed: options.onClosed,
      onAdmitted: stopParsingOnceClosed,
      queuedWork: (socket) => waitingOn(socket) * WAITING_REQUEST_BYTES,
    });
    admission = admitted;
    admissions.add(admitted);
    server.once('close', () => admissions.delete(admitted));
    closeStalledConnections(server, () => options.onClosed?.('write_stalled'));
    return server;
  };
  return Object.assign(factory, { admissions });
}
