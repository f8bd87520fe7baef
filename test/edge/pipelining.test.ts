// What one connection may hold unsent (src/edge/pipelining.ts): pipelined requests are answered one at a
// time, the connection is not read while some wait, and one more than MAX_PIPELINED_REQUESTS closes it. Each
// test opens a raw socket to the listening app and counts the handler's invocations: a client that never
// reads gets a bounded number of answers made, whatever it writes.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../src/catalog/route.ts';
import { envelope } from '../../src/upstream/envelope.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const MAX_WAITING = 8;

/** Handler invocations of the test routes, and how many ran at once at most. */
const counts = { calls: 0, running: 0, mostAtOnce: 0 };
/** A 32 MB answer: more than loopback's socket buffers take from a client that does not read. */
const BIG = 'x'.repeat(32 * 1024 * 1024);

const counted = (path: string, data: () => unknown) =>
  defineRoute({
    path,
    summary: 'test',
    description: 'test',
    tag: 'Test',
    access: 'free',
    query: z.object({ i: z.string().optional().describe('echoed') }),
    data: z.unknown(),
    handler: async (req) => {
      counts.calls++;
      counts.mostAtOnce = Math.max(counts.mostAtOnce, ++counts.running);
      await new Promise((r) => setImmediate(r));
      counts.running--;
      return envelope({ i: req.query.i ?? null, value: data() }, []);
    },
  });

let t: TestApp;
let url: URL;
/** The server's side of each connection, in the order they were accepted. */
const accepted: Socket[] = [];

beforeAll(async () => {
  t = await makeApp({ FREE_RATE_LIMIT: '1000000', MAX_PIPELINED_REQUESTS: String(MAX_WAITING), METRICS_TOKEN: 'a-metrics-token-of-16+' }, undefined, [
    counted('/v1/test-small', () => 1),
    counted('/v1/test-big', () => BIG),
  ]);
  t.app.server.on('connection', (s: Socket) => accepted.push(s));
  url = new URL(await t.app.listen({ host: '127.0.0.1', port: 0 }));
});
afterAll(async () => {
  await t.app.close();
});

/** Each client its own loopback address: a connection closed for pipelining costs its address a second of new connections (connection-admission.ts PENALTY_S). */
let clients = 0;
const nextAddress = () => `127.0.3.${++clients}`;

const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`;

/** A raw connection that never reads (paused before anything arrives), and the server's side of it. */
async function silentClient(): Promise<{ client: Socket; server: Socket }> {
  const before = accepted.length;
  const client = connect({ port: Number(url.port), host: '127.0.0.1', localAddress: nextAddress() });
  client.pause();
  await new Promise((r) => client.once('connect', r));
  await vi.waitFor(() => expect(accepted.length).toBe(before + 1));
  return { client, server: accepted[before]! };
}

function reset(): void {
  Object.assign(counts, { calls: 0, running: 0, mostAtOnce: 0 });
}

describe('pipelined requests on one connection', () => {
  it('1,000 in one write, never read: the connection is closed and at most the bound of answers is made', async () => {
    reset();
    const { client, server } = await silentClient();
    const closed = new Promise<void>((r) => server.once('close', () => r()));
    // Before: every request of the chunk got its answer made and queued (1,000 handler calls); this ends the wait then too.
    const everyAnswerMade = vi.waitFor(() => expect(counts.calls).toBe(1000), { timeout: 60_000 });
    client.write(Array.from({ length: 1000 }, (_, i) => request(`/v1/test-small?i=${i}`)).join(''));
    await Promise.race([closed, everyAnswerMade.catch(() => {})]);
    expect(server.destroyed).toBe(true);
    expect(counts.calls).toBeLessThanOrEqual(1 + MAX_WAITING);
    const metrics = await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer a-metrics-token-of-16+' } });
    expect(metrics.body).toMatch(/^marketgate_connections_closed_total\{reason="pipelining"\} 1$/m);
    client.destroy();
  });

  it('within the bound, they are answered in order, one at a time', async () => {
    reset();
    const client = connect({ port: Number(url.port), host: '127.0.0.1', localAddress: nextAddress() });
    await new Promise((r) => client.once('connect', r));
    let received = '';
    client.setEncoding('latin1');
    client.on('data', (chunk: string) => (received += chunk));
    client.write(Array.from({ length: MAX_WAITING }, (_, i) => request(`/v1/test-small?i=${i}`)).join(''));
    await vi.waitFor(() => expect(received.match(/HTTP\/1\.1 200/g)?.length ?? 0).toBe(MAX_WAITING));
    const order = [...received.matchAll(/"data":\{"i":"(\d+)"/g)].map((m) => Number(m[1]));
    expect(order).toEqual(Array.from({ length: MAX_WAITING }, (_, i) => i));
    // Before: every handler of the chunk ran at once.
    expect(counts.mostAtOnce).toBe(1);
    client.destroy();
  });

  it('while an answer cannot be written (the client does not read), the next ones wait unmade and the connection is not read', async () => {
    reset();
    const { client, server } = await silentClient();
    client.write(Array.from({ length: 4 }, (_, i) => request(`/v1/test-big?i=${i}`)).join(''));
    // The first answer is stuck in this process's write buffer (the kernel took what it could).
    await vi.waitFor(() => expect(server.writableLength).toBeGreaterThan(0), { timeout: 30_000 });
    // Before: the four answers were made at once (32 MB each), three of them queued in memory.
    expect(counts.calls).toBe(1);
    expect((server as Socket & { _paused: boolean })._paused).toBe(true);
    // Once the client reads, all four come, in order, and the connection is read again.
    let bytes = 0;
    let answers = 0;
    let carry = ''; // a status line may be split between two chunks
    const statusLines = (text: string) => text.match(/HTTP\/1\.1 200/g)?.length ?? 0;
    client.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      const text = carry + chunk.toString('latin1');
      answers += statusLines(text) - statusLines(carry);
      carry = text.slice(-16);
    });
    client.resume();
    await vi.waitFor(() => expect(answers).toBe(4), { timeout: 60_000 });
    await vi.waitFor(() => expect(bytes).toBeGreaterThan(4 * BIG.length));
    expect(counts.calls).toBe(4);
    expect(counts.mostAtOnce).toBe(1);
    expect((server as Socket & { _paused: boolean })._paused).toBe(false);
    client.destroy();
  });
});
