// Which connections the server takes (src/edge/connection-admission.ts): idle connections cost nobody else
// anything and are closed after the first-byte time, limits per client address refuse that client only, a
// connection flooding pipelined requests has its parse stopped where it is closed, and under memory pressure the
// connections holding the most queued work are closed first. Linux routes all of 127.0.0.0/8 to the loopback
// device, so each client here is a distinct address (the client socket bound with localAddress).
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientKey } from '../../src/edge/client-address.ts';
import { makeApp, type TestApp } from '../helpers.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

async function listening(env: Record<string, string>): Promise<number> {
  t = await makeApp({ FREE_RATE_LIMIT: '1000000', ...env });
  return Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
}

/** A connection from `from` that sends nothing; resolves once connected. Its `closed` resolves when the server closes it. */
async function idle(port: number, from: string): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, closed };
}

/** GET `path` on a fresh connection from `from`: the status line, or 'closed' when the server closed it unanswered. */
function get(port: number, from: string, path = '/health'): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from }, () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    );
    let got = '';
    socket.on('data', (d) => (got += d));
    socket.on('error', () => {});
    socket.on('close', () => resolve(got === '' ? 'closed' : got.slice(0, got.indexOf('\r\n'))));
  });
}

/** Resolves once the server holds `n` connections (accepted and admitted). */
async function serverHolds(n: number): Promise<void> {
  const server = t!.app.server;
  while ((await new Promise<number>((r) => server.getConnections((_e, c) => r(c)))) < n) await new Promise((r) => setImmediate(r));
}

describe('idle connections', () => {
  it('do not delay a fresh connection from another address, and are closed after FIRST_BYTE_TIMEOUT_MS', async () => {
    const N = 300;
    const port = await listening({ MAX_CONNECTIONS_PER_IP: '1000', MAX_PENDING_CONNECTIONS_PER_IP: '1000', NEW_CONNECTIONS_PER_IP_PER_S: '1000', FIRST_BYTE_TIMEOUT_MS: '3000' });
    const idles = await Promise.all(Array.from({ length: N }, () => idle(port, '127.0.0.2')));
    let closedIdle = 0;
    for (const c of idles) void c.closed.then(() => closedIdle++);
    await serverHolds(N);
    // Before: new connections were read four at a time, each idle one holding its place for a second (75 s here).
    expect(await get(port, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
    expect(closedIdle).toBe(0);
    // A keep-alive connection that has sent its request is not closed by the first-byte time.
    const talker = await idle(port, '127.0.0.1');
    let talkerClosed = false;
    void talker.closed.then(() => (talkerClosed = true));
    talker.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // Nor one that has sent part of its request (Node's parser reads it without 'data' events: bytesRead tells).
    const slow = await idle(port, '127.0.0.1');
    let slowClosed = false;
    void slow.closed.then(() => (slowClosed = true));
    slow.socket.write('GET /hea');
    await Promise.all(idles.map((c) => c.closed));
    expect(closedIdle).toBe(N);
    expect(talkerClosed).toBe(false);
    // The slow one was opened after the idle ones: its own first-byte time has passed once the server closes a
    // fresh idle one opened after it.
    const later = await idle(port, '127.0.0.3');
    await later.closed;
    expect(slowClosed).toBe(false);
    talker.socket.destroy();
    slow.socket.destroy();
  });
});

describe('limits per client address', () => {
  it('MAX_CONNECTIONS_PER_IP refuses one more connection from that address, and no one else', async () => {
    const port = await listening({ MAX_CONNECTIONS_PER_IP: '5', MAX_PENDING_CONNECTIONS_PER_IP: '100', FIRST_BYTE_TIMEOUT_MS: '60000' });
    const held = await Promise.all(Array.from({ length: 5 }, () => idle(port, '127.0.0.3')));
    await serverHolds(5);
    expect(await get(port, '127.0.0.3')).toBe('closed');
    expect(await get(port, '127.0.0.4')).toBe('HTTP/1.1 200 OK');
    // One of its own closes: it may connect again.
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await new Promise<void>((resolve) => {
      const tryAgain = () => void get(port, '127.0.0.3').then((s) => (s === 'closed' ? setImmediate(tryAgain) : (expect(s).toBe('HTTP/1.1 200 OK'), resolve())));
      tryAgain();
    });
    for (const c of held) c.socket.destroy();
  });

  it('MAX_PENDING_CONNECTIONS_PER_IP refuses one more connection that has not sent a request yet, from that address only', async () => {
    const port = await listening({ MAX_CONNECTIONS_PER_IP: '100', MAX_PENDING_CONNECTIONS_PER_IP: '3', FIRST_BYTE_TIMEOUT_MS: '60000' });
    const held = await Promise.all(Array.from({ length: 3 }, () => idle(port, '127.0.0.5')));
    await serverHolds(3);
    expect(await get(port, '127.0.0.5')).toBe('closed');
    expect(await get(port, '127.0.0.6')).toBe('HTTP/1.1 200 OK');
    // One of them sends its request: no longer pending, so one more from the address is taken.
    const answered = new Promise<void>((r) => held[0]!.socket.once('data', () => r()));
    held[0]!.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await answered;
    expect(await get(port, '127.0.0.5')).toBe('HTTP/1.1 200 OK');
    for (const c of held) c.socket.destroy();
  });

  it('NEW_CONNECTIONS_PER_IP_PER_S refuses a client opening connections faster (past a burst of two seconds of it), and no one else', async () => {
    const port = await listening({ NEW_CONNECTIONS_PER_IP_PER_S: '2', FIRST_BYTE_TIMEOUT_MS: '60000' });
    // Four at once (two seconds' worth) are taken; the fifth is refused; another address is not affected.
    const held = await Promise.all(Array.from({ length: 4 }, () => idle(port, '127.0.0.10')));
    await serverHolds(4);
    expect(await get(port, '127.0.0.10')).toBe('closed');
    expect(await get(port, '127.0.0.11')).toBe('HTTP/1.1 200 OK');
    // Its bucket refills at 2 a second: it is let in again.
    await new Promise<void>((resolve) => {
      const tryAgain = () => void get(port, '127.0.0.10').then((s) => (s === 'closed' ? setTimeout(tryAgain, 100) : (expect(s).toBe('HTTP/1.1 200 OK'), resolve())));
      tryAgain();
    });
    for (const c of held) c.socket.destroy();
  });

  it('a trusted proxy (TRUST_PROXY) is counted in MAX_CONNECTIONS only', async () => {
    const port = await listening({ TRUST_PROXY: '127.0.0.7', MAX_CONNECTIONS_PER_IP: '2', MAX_PENDING_CONNECTIONS_PER_IP: '2', MAX_CONNECTIONS: '6' });
    const held = await Promise.all(Array.from({ length: 5 }, () => idle(port, '127.0.0.7')));
    await serverHolds(5);
    expect(await get(port, '127.0.0.7')).toBe('HTTP/1.1 200 OK');
    // The total: 5 held + 1 more is 6.
    const sixth = await idle(port, '127.0.0.7');
    await serverHolds(6);
    expect(await get(port, '127.0.0.8')).toBe('closed');
    for (const c of [...held, sixth]) c.socket.destroy();
  });
});

describe('a connection flooding pipelined requests', () => {
  it('is closed past MAX_PIPELINED_REQUESTS and the rest of what it sent is not parsed', async () => {
    const port = await listening({ MAX_PIPELINED_REQUESTS: '8' });
    let parsed = 0;
    t!.app.server.on('request', () => parsed++);
    const flood = await idle(port, '127.0.0.9');
    flood.socket.pause(); // never reads
    const line = 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    flood.socket.write(line.repeat(2000));
    await flood.closed;
    // The one answered, 8 waiting, and the one that closed it; before, all 2,000 were parsed into requests.
    expect(parsed).toBe(10);
    expect(await get(port, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
    // Its client pays a second of its new-connection rate (PENALTY_S): its next connection is refused, no one else's.
    expect(await get(port, '127.0.0.9')).toBe('closed');
    expect(await get(port, '127.0.0.12')).toBe('HTTP/1.1 200 OK');
  });
});

describe('clientKey', () => {
  it('is the IPv4 address (also IPv4-mapped) or the IPv6 /64', () => {
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });
});
