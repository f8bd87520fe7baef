// How many new connections are read at once before their first request, and how long a connection may hold an
// answer its client does not read.
//
// Node reads every connection that has data in one poll phase, and its HTTP parser parses every request of a
// chunk it has read before anything can pause it (pipelining.ts): about 25 µs a request (Node builds a request
// and a response object for each, whatever happens to them next), and as much again when the connection closes
// with them unanswered. When hundreds of connections arrive together, each with a chunk of pipelined requests,
// their data lands in one poll phase: 300 connections × 100 requests held the event loop for 0.7 s, and every
// other client — /health included — waited that long. Admitting a few new connections per turn is not enough:
// they arrive over many short turns, and their data still arrives together.
//
// Here each connection is accepted paused (net.Server's `pauseOnConnect`, which Node reads at every accept: no
// byte of it is read, so nothing is parsed) and resumed by this module while fewer than MAX_NEW admitted
// connections have not yet had their first request parsed; the others wait in arrival order and are resumed as
// those slots free (a first request, the connection closing, or NEW_GRACE_MS without a request). A client that
// opens many connections at once spreads its own cost over many turns instead of stopping everyone for one; an
// ordinary connection, which sends its request as it connects, waits for nobody. Past MAX_WAITING connections
// waiting, a new one is closed at once.
//
// A client that stops reading holds at most one answer per connection (pipelining.ts); that answer is let go
// when the connection's write buffer has not shrunk for WRITE_STALL_MS (closeStalledConnections).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Connections being read whose first request has not been parsed yet, at most (each may bring ~64 KB of requests). */
export const MAX_NEW = 4;
/** How long an admitted connection counts as new without sending a request (ms). */
export const NEW_GRACE_MS = 1000;
/** Connections waiting to be read at most; past it a new connection is closed. */
export const MAX_WAITING = 4096;
/** How long a connection's write buffer may hold bytes without shrinking: its client stopped reading (ms). */
export const WRITE_STALL_MS = 30_000;

/** Why the server closed a connection itself: too many pipelined requests, too many new connections waiting, a client that stopped reading. */
export type ConnectionClosedReason = 'pipelining' | 'waiting' | 'write_stalled';

export interface AdmissionOptions {
  maxNew?: number;
  maxWaiting?: number;
  graceMs?: number;
  /** Told each time a connection is closed because too many wait (metrics). */
  onRefused?: () => void;
}

export interface Admission {
  /** Called with each request's connection: its first one frees the connection's slot. */
  requestOn(socket: Socket): void;
}

/** Makes `server` accept its connections paused and admit them as described above. */
export function admitGradually(server: Server, options: AdmissionOptions = {}): Admission {
  const maxNew = options.maxNew ?? MAX_NEW;
  const maxWaiting = options.maxWaiting ?? MAX_WAITING;
  const graceMs = options.graceMs ?? NEW_GRACE_MS;
  // Read by net.Server at each accept (lib/net.js onconnection: `pauseOnCreate: self.pauseOnConnect`).
  (server as Server & { pauseOnConnect: boolean }).pauseOnConnect = true;
  const waiting: Socket[] = [];
  let next = 0;
  /** Admitted connections without a request yet, each with the timer that frees its slot anyway. */
  const fresh = new Map<Socket, NodeJS.Timeout>();

  const admit = (socket: Socket) => {
    const timer = setTimeout(() => release(socket), graceMs);
    timer.unref();
    fresh.set(socket, timer);
    socket.once('close', () => release(socket));
    socket.resume();
  };
  const release = (socket: Socket) => {
    const timer = fresh.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    fresh.delete(socket);
    while (fresh.size < maxNew && next < waiting.length) {
      const waited = waiting[next]!;
      waiting[next++] = undefined as never;
      if (!waited.destroyed) admit(waited);
    }
    if (next === waiting.length) waiting.length = next = 0;
    else if (next >= 1024) waiting.splice(0, next), (next = 0); // what was admitted is let go under a steady stream too
  };

  server.on('connection', (socket: Socket) => {
    if (fresh.size < maxNew && next === waiting.length) return admit(socket);
    if (waiting.length - next >= maxWaiting) {
      socket.destroy();
      options.onRefused?.();
      return;
    }
    waiting.push(socket);
  });
  return {
    requestOn(socket) {
      if (fresh.size !== 0) release(socket);
    },
  };
}

/** Stalled connections closed per turn of the event loop. */
const CLOSES_PER_TURN = 8;

/** How often the connections' write buffers are looked at for a stall (ms). */
const STALL_CHECK_MS = 5000;

/**
 * What a connection has not yet handed to the kernel: the bytes its stream holds (a large answer stays whole
 * there until written out) and, of the chunk being written, what libuv still queues (which shrinks as the client
 * reads). Either one shrinking is progress.
 */
function unsent(socket: Socket): { buffered: number; queued: number } {
  return { buffered: socket.writableLength, queued: (socket as Socket & { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0 };
}

/**
 * Closes a connection whose unsent bytes have not shrunk for `stallMs`: its client stopped reading. A slow
 * reader makes progress and keeps its connection. Checked every STALL_CHECK_MS over the open connections, so a
 * request pays nothing for it.
 */
export function closeStalledConnections(server: Server, onClosed?: () => void, stallMs = WRITE_STALL_MS, checkMs = Math.min(STALL_CHECK_MS, stallMs)): void {
  const open = new Set<Socket>();
  const stalled = new Map<Socket, { buffered: number; queued: number; since: number }>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      stalled.delete(socket);
    });
  });
  // Closing a connection makes Node abort every request it parsed and has not answered (an error with its stack
  // each): a few connections closed per turn, so a crowd of stalled clients is not let go in one long turn.
  const closing = new Set<Socket>();
  const closeSome = () => {
    let n = 0;
    for (const socket of closing) {
      if (n++ >= CLOSES_PER_TURN) break;
      closing.delete(socket);
      if (socket.destroyed) continue;
      socket.destroy();
      onClosed?.();
    }
    if (closing.size > 0) setImmediate(closeSome);
  };
  const timer = setInterval(() => {
    const now = Date.now();
    const wasClosing = closing.size > 0;
    for (const socket of open) {
      const { buffered, queued } = unsent(socket);
      const seen = stalled.get(socket);
      if (buffered === 0) {
        if (seen) stalled.delete(socket);
      } else if (seen === undefined || buffered < seen.buffered || queued < seen.queued) {
        stalled.set(socket, { buffered, queued, since: now });
      } else if (now - seen.since >= stallMs) {
        closing.add(socket);
      } else {
        seen.buffered = buffered;
        seen.queued = queued;
      }
    }
    if (closing.size > 0 && !wasClosing) setImmediate(closeSome);
  }, checkMs);
  timer.unref();
  server.once('close', () => clearInterval(timer));
}
