// New connections are read a few at a time until their first request (a flood of connections cannot stop every
// other client for one long turn), too many waiting are refused, and a connection whose client stopped reading is let
// go (src/edge/connection-admission.ts).
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { admitGradually, closeStalledConnections } from '../../src/edge/connection-admission.ts';

/** A socket as far as the admission looks at it: resumed or destroyed. */
class FakeSocket extends EventEmitter {
  resumed = false;
  destroyed = false;
  resume() {
    this.resumed = true;
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

const resumed = (sockets: FakeSocket[]) => sockets.map((s) => s.resumed);

describe('admitGradually', () => {
  it('reads at most maxNew connections before their first request; each first request, close or grace admits the next, in arrival order', async () => {
    const server = new EventEmitter() as unknown as Server;
    const admission = admitGradually(server, { maxNew: 2, graceMs: 50 });
    expect((server as unknown as { pauseOnConnect: boolean }).pauseOnConnect).toBe(true);
    const sockets = Array.from({ length: 6 }, () => new FakeSocket());
    for (const s of sockets) server.emit('connection', s);
    expect(resumed(sockets)).toEqual([true, true, false, false, false, false]);
    admission.requestOn(sockets[0] as unknown as Socket);
    expect(resumed(sockets)).toEqual([true, true, true, false, false, false]);
    admission.requestOn(sockets[0] as unknown as Socket); // its second request frees nothing more
    expect(resumed(sockets)).toEqual([true, true, true, false, false, false]);
    sockets[1]!.destroy(); // gone before sending anything
    expect(resumed(sockets)).toEqual([true, true, true, true, false, false]);
    // Neither 2 nor 3 sends a request: after the grace both slots free.
    await new Promise<void>((r) => {
      const wait = () => (sockets[5]!.resumed ? r() : setTimeout(wait, 10));
      wait();
    });
    expect(resumed(sockets)).toEqual([true, true, true, true, true, true]);
  });

  it('refuses a new connection at once while maxWaiting wait; a destroyed waiting one is skipped', () => {
    const server = new EventEmitter() as unknown as Server;
    let refused = 0;
    const admission = admitGradually(server, { maxNew: 1, maxWaiting: 2, onRefused: () => refused++ });
    const sockets = Array.from({ length: 5 }, () => new FakeSocket());
    for (const s of sockets) server.emit('connection', s);
    expect(sockets.map((s) => [s.resumed, s.destroyed])).toEqual([
      [true, false],
      [false, false],
      [false, false],
      [false, true],
      [false, true],
    ]);
    expect(refused).toBe(2);
    sockets[1]!.destroyed = true; // the client went away while it waited
    admission.requestOn(sockets[0] as unknown as Socket);
    expect(sockets[1]!.resumed).toBe(false);
    expect(sockets[2]!.resumed).toBe(true);
    sockets[0]!.destroy();
    sockets[2]!.destroy();
  });
});

describe('a real server with admitGradually', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? (server.closeAllConnections(), server.close(() => r())) : r())));

  it('serves every connection of a burst, pipelined requests included, with at most maxNew new connections read at once', async () => {
    let firstRequestsAtOnce = 0;
    let inFirstChunk = 0;
    const seen = new Set<Socket>();
    server = createServer((req, res) => {
      if (!seen.has(req.socket)) {
        seen.add(req.socket);
        // First requests parsed in the same turn (before the next check phase) come from connections read together.
        firstRequestsAtOnce = Math.max(firstRequestsAtOnce, ++inFirstChunk);
        setImmediate(() => inFirstChunk--);
      }
      admission.requestOn(req.socket);
      res.end('ok');
    });
    const admission = admitGradually(server, { maxNew: 2 });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => new Promise<number>((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(3)));
        let got = '';
        s.on('data', (d) => {
          got += d;
          const n = got.split('HTTP/1.1 200').length - 1;
          if (n === 3) (s.destroy(), resolve(n));
        });
        s.on('error', reject);
      })),
    );
    expect(answers).toEqual(Array(12).fill(3));
    expect(seen.size).toBe(12);
    expect(firstRequestsAtOnce).toBeGreaterThanOrEqual(1);
    expect(firstRequestsAtOnce).toBeLessThanOrEqual(2);
  });
});

describe('closeStalledConnections', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? (server.closeAllConnections(), server.close(() => r())) : r())));

  it('closes a connection whose client reads none of a large answer; keeps one that reads slowly', async () => {
    const big = Buffer.alloc(32 * 1024 * 1024, 'x');
    server = createServer((req, res) => res.end(big));
    let closedByServer = 0;
    // libuv's write queue is seen to shrink in steps a few hundred ms apart: the stall bound is well above that.
    closeStalledConnections(server, () => closedByServer++, 3000, 100);
    const serverSide: Socket[] = [];
    server.on('connection', (s) => serverSide.push(s));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;

    // A client that never reads: its connection is closed by the server.
    const stuck = connect(port, '127.0.0.1', () => stuck.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    stuck.pause();
    stuck.on('error', () => {});
    await new Promise<void>((r) => {
      const wait = () => (serverSide[0] ? serverSide[0].once('close', () => r()) : setImmediate(wait));
      wait();
    });
    expect(closedByServer).toBe(1);
    stuck.destroy();

    // A client that reads, a little at a time: its whole answer arrives.
    const slow = connect(port, '127.0.0.1', () => slow.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      slow.on('data', (d) => {
        received += d.length;
        slow.pause();
        setTimeout(() => slow.resume(), 5);
      });
      slow.on('end', () => resolve());
      slow.on('error', reject);
    });
    expect(received).toBeGreaterThan(big.length);
    expect(closedByServer).toBe(1);
  }, 60_000);
});
