// The baselines: a bare Fastify hello world, no logger, no plugins, and a bare route that sends a
// given body (the same bytes as a marketgate answer, read from BENCH_SAME_BYTES_FILE) as JSON.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
const sameBytes = process.env.BENCH_SAME_BYTES_FILE ? readFileSync(process.env.BENCH_SAME_BYTES_FILE) : Buffer.from('{}');
app.get('/same-bytes', (_req, reply) => {
  reply.type('application/json; charset=utf-8').send(sameBytes);
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
