// A client that half-closes its side right after sending its request (`nc -N`, socket.end(request)) still gets the
// answer, however long that answer takes: Node's HTTP server by default aborts a request in flight on the client's
// FIN, so a slow answer was lost and the connection closed with nothing sent.
import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { recorded } from '../fixtures.ts';
import { makeApp } from '../helpers.ts';

const upstream = new FakeUpstream();
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  await upstream.start();
  upstream.route('GET /fng/', { body: recorded('alternativeme__fng.json'), delayMs: 300 });
  ({ app } = await makeApp({ ALTERNATIVE_ME_BASE_URL: upstream.url }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await app?.close();
  await upstream.stop();
});

function halfClosed(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let received = '';
    socket.on('data', (d) => (received += d));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

it('answers a request whose client half-closed before the (slow) answer was ready, then closes', async () => {
  const answer = await halfClosed('GET /v1/sentiment?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n');
  expect(answer.slice(0, 15)).toBe('HTTP/1.1 200 OK');
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).data.current.value).toBe(71);
  expect(upstream.calls('/fng/').length).toBe(1);
});
