// The baselines, in one bare Fastify process (no logger, no plugins):
//   /            hello world;
//   /same-bytes  sends a given body (the bytes of a cached token-risk answer, BENCH_SAME_BYTES_FILE) as JSON;
//   /floor       the least any answer here can cost: a cached ~250-byte JSON string with the headers every
//                answer must carry (CSP, nosniff, CORS allow-origin, x-request-id) and one query parameter
//                validated with zod, as the routes do.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';

const app = Fastify({ logger: false });
app.setValidatorCompiler(validatorCompiler);
app.get('/', async () => ({ hello: 'world' }));

const sameBytes = process.env.BENCH_SAME_BYTES_FILE ? readFileSync(process.env.BENCH_SAME_BYTES_FILE) : Buffer.from('{}');
app.get('/same-bytes', (_req, reply) => {
  reply.type('application/json; charset=utf-8').send(sameBytes);
});

const headers = { 'content-security-policy': "default-src 'none';frame-ancestors 'none'", 'x-content-type-options': 'nosniff', 'access-control-allow-origin': '*' };
const data = JSON.stringify({ symbol: 'BTC/USDT', asset_class: 'crypto', price: 4.000002, currency: 'USDT', as_of: '2017-07-12T14:31:39.040Z' });
let id = 0;
app.get(
  '/floor',
  {
    schema: { querystring: z.object({ symbol: z.string().regex(/^[A-Za-z0-9.\-/]+$/) }) },
    onRequest: (_req, reply, done) => {
      reply.headers(headers).header('x-request-id', `bench-${++id}`);
      done();
    },
  },
  async (_req, reply) => {
    reply.type('application/json; charset=utf-8');
    return `{"data":${data},"meta":{"timestamp":"${new Date().toISOString()}","sources":[{"provider":"binance","fetched_at":"2026-11-23T19:00:00.000Z","cached":true,"age_s":1.2}]}}`;
  },
);

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
