// Which connections the HTTP server gets at all, and which it lets go under memory pressure.
//
// A connection is judged as it arrives, before Node's HTTP server sees it: Node's own 'connection' listener (the
// one that gives the socket a parser) is called only for a connection admitted here, so a refused one costs an
// accept and a close. It is refused when all clients together hold MAX_CONNECTIONS, when its client (clientKey:
// an address, an IPv6 /64) holds MAX_CONNECTIONS_PER_IP, or MAX_PENDING_CONNECTIONS_PER_IP that have not yet sent
// a whole first request, or when it opens more than NEW_CONNECTIONS_PER_IP_PER_S (on average over 2 s); never
// because of another client. A peer TRUST_PROXY names is a proxy carrying many
// clients: its connections count in the total only.
//
// Nothing waits in line here: an admitted connection is read by Node whenever it has data, so a connection that
// sends nothing costs nobody else anything; one that has sent nothing after FIRST_BYTE_TIMEOUT_MS is closed
// (one that is sending its request has REQUEST_TIMEOUT_MS, Node's headersTimeout). What one client's bytes can
// cost others is bounded by its connections: each is parsed up to its MAX_PIPELINED_REQUESTS waiting requests
// and closed there, its parser stopped on the spot (pipelining.ts).
//
// A client that stops reading holds at most one answer per connection (pipelining.ts); that answer is let go
// when the connection's write buffer has not shrunk for WRITE_STALL_MS (closeStalledConnections). Under memory
// pressure the connections holding the most queued work are closed first (shedHeaviest, pressure.ts).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientKey } from './client-address.ts';

/** How long a connection's write buffer may hold bytes without shrinking: its client stopped reading (ms). */
export const WRITE_STALL_MS = 30_000;

/** Why the server closed a connection itself. */
export type ConnectionClosedReason =
  | 'pipelining'
  | 'write_stalled'
  | 'too_many_connections'
  | 'too_many_from_ip'
  | 'too_many_pending_from_ip'
  | 'too_many_new_from_ip'
  | 'first_byte_timeout'
  | 'memory_pressure';

export interface ConnectionLimits {
  /** Open connections at most, all clients together. */
  maxConnections: number;
  /** Open connections at most from one client. */
  maxPerIp: number;
  /** Connections from one client without a whole first request yet, at most. */
  maxPendingPerIp: number;
  /** A connection that has sent no byte this long after opening is closed (ms). */
  firstByteMs: number;
  /** New connections from one client per second, on average over NEW_BURST_S (a bucket of rate × NEW_BURST_S). */
  newPerIpPerS: number;
}

/** The seconds of new connections a client may open at once (the bucket's size, in seconds of its rate). */
export const NEW_BURST_S = 2;

/**
 * What a connection closed for pipelining costs its client, in seconds of its new-connection rate (at most a
 * MAX_DEBT_S owed): each one has had up to MAX_PIPELINED_REQUESTS requests parsed (~2 ms of the server's time), and a
 * client that reconnects as soon as it is closed would otherwise spend that much of everyone's time, a hundred
 * times a second. An honest client never has one closed: it never has that many requests waiting.
 */
export const PENALTY_S = 1;

/** The most a client can owe, in seconds of its rate: a client behind a shared address is locked out this long at most. */
export const MAX_DEBT_S = 10;

export interface AdmissionOptions extends ConnectionLimits {
  /** Whether a peer is a trusted proxy (TRUST_PROXY): counted in the total only. */
  trusted?: (address: string) => boolean;
  /** Told each connection the server refuses or closes here, and why (metrics). */
  onClosed?: (reason: ConnectionClosedReason) => void;
  /** Called with each admitted connection once Node's HTTP server has it (pipelining.ts stops its parser when closed). */
  onAdmitted?: (socket: Socket) => void;
  /** The queued work a connection holds besides its unsent bytes (pipelined requests waiting), in bytes' worth. */
  queuedWork?: (socket: Socket) => number;
}

/** One client's connections. */
interface ClientCount {
  open: number;
  pending: number;
}

interface Admitted {
  client: ClientCount | undefined;
  /** No whole first request yet; the timer that closes it if it sends nothing. */
  pending: NodeJS.Timeout | undefined;
}

export interface Admission {
  /** Called with each request's connection: its first one ends its pending state. */
  requestOn(socket: Socket): void;
  /** Open connections, all, and those without a first request yet; by client (tests, the bench). */
  counts(): { open: number; pending: number; clients: number };
  /** A connection of its client was closed for pipelining: the client's new connections wait PENALTY_S of its rate. */
  penalize(socket: Socket): void;
  /** Closes up to `share` (0..1, at least one) of the connections holding queued work, the most first; returns how many. */
  shedHeaviest(share: number): number;
}

/** Takes the connections of `server` through the admission described above. */
export function admitConnections(server: Server, options: AdmissionOptions): Admission {
  const { maxConnections, maxPerIp, maxPendingPerIp, firstByteMs, newPerIpPerS, trusted, onClosed, onAdmitted } = options;
  const queuedWork = options.queuedWork ?? (() => 0);
  // Node's HTTP server's own listener (lib/_http_server.js connectionListener), and any other, now called from here.
  const nodeListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const admitted = new Map<Socket, Admitted>();
  const clients = new Map<string, ClientCount>();
  let pendingTotal = 0;
  // New connections per client: a bucket each, kept while it is not full (a client that reconnects as soon as it is
  // closed keeps its empty bucket, and pays for each connection the parse of its first chunk: 2 ms or so).
  const burst = newPerIpPerS * NEW_BURST_S;
  const buckets = new Map<string, { tokens: number; at: number }>();
  const takeNew = (key: string, now: number): boolean => {
    const b = buckets.get(key);
    if (b === undefined) return buckets.set(key, { tokens: burst - 1, at: now }), true;
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) * newPerIpPerS) / 1000);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens--;
    return true;
  };
  const penalize = (key: string, now: number) => {
    const b = buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(b.tokens + ((now - b.at) * newPerIpPerS) / 1000, burst);
    b.at = now;
    b.tokens = Math.max(-MAX_DEBT_S * newPerIpPerS, Math.min(b.tokens, 0) - PENALTY_S * newPerIpPerS);
    buckets.set(key, b);
  };
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [key, b] of buckets) if (b.tokens + ((now - b.at) * newPerIpPerS) / 1000 >= burst) buckets.delete(key);
  }, NEW_BURST_S * 1000);
  sweeper.unref();
  server.once('close', () => clearInterval(sweeper));

  const endPending = (socket: Socket, entry: Admitted) => {
    if (entry.pending === undefined) return;
    clearTimeout(entry.pending);
    entry.pending = undefined;
    pendingTotal--;
    if (entry.client) entry.client.pending--;
  };
  const refuse = (socket: Socket, reason: ConnectionClosedReason) => {
    socket.destroy();
    onClosed?.(reason);
  };

  server.on('connection', (socket: Socket) => {
    if (admitted.size >= maxConnections) return refuse(socket, 'too_many_connections');
    const address = socket.remoteAddress;
    let client: ClientCount | undefined;
    if (address === undefined || !trusted?.(address)) {
      const key = clientKey(address);
      if (!takeNew(key, Date.now())) return refuse(socket, 'too_many_new_from_ip');
      client = clients.get(key);
      if (client === undefined) clients.set(key, (client = { open: 0, pending: 0 }));
      else if (client.open >= maxPerIp) return refuse(socket, 'too_many_from_ip');
      else if (client.pending >= maxPendingPerIp) return refuse(socket, 'too_many_pending_from_ip');
      client.open++;
      client.pending++;
      socket.once('close', () => {
        if (--client!.open === 0) clients.delete(key);
      });
    }
    pendingTotal++;
    const entry: Admitted = { client, pending: undefined };
    entry.pending = setTimeout(() => {
      // bytesRead counts what the handle read, also when Node's parser consumes it directly (no 'data' events).
      if (socket.bytesRead === 0 && !socket.destroyed) refuse(socket, 'first_byte_timeout');
      else endPending(socket, entry);
    }, firstByteMs);
    entry.pending.unref();
    admitted.set(socket, entry);
    socket.once('close', () => {
      endPending(socket, entry);
      admitted.delete(socket);
    });
    for (const listener of nodeListeners) listener.call(server, socket);
    onAdmitted?.(socket);
  });

  return {
    requestOn(socket) {
      if (pendingTotal === 0) return;
      const entry = admitted.get(socket);
      if (entry !== undefined) endPending(socket, entry);
    },
    counts: () => ({ open: admitted.size, pending: pendingTotal, clients: clients.size }),
    penalize(socket) {
      const address = socket.remoteAddress;
      if (address !== undefined && trusted?.(address)) return;
      penalize(clientKey(address), Date.now());
    },
    shedHeaviest(share) {
      const loaded: Array<[Socket, number]> = [];
      for (const socket of admitted.keys()) {
        const { buffered, queued } = unsent(socket);
        const work = buffered + queued + queuedWork(socket);
        if (work > 0 && !socket.destroyed) loaded.push([socket, work]);
      }
      loaded.sort((a, b) => b[1] - a[1]);
      const n = Math.min(loaded.length, Math.max(1, Math.ceil(loaded.length * share)));
      for (let i = 0; i < n; i++) refuse(loaded[i]![0], 'memory_pressure');
      return n;
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
