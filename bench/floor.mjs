// The floor each cached answer is measured against: bare Fastify (no logger, no plugins, no hooks)
// sending exactly the bytes marketgate sent for that URL, with the same response headers (the security
// headers, CORS and a fresh x-request-id per request, as every answer must carry them). Whatever
// marketgate costs beyond this is its own work per request: its hooks, validation, limits, the key
// check, the cache lookup, the envelope.
//
// BENCH_FLOOR_FILE names a JSON file: [{ path, status, headers, body (base64) }, …], captured from the
// running marketgate by bench/cached-path.ts. Each path answers its captured answer.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/** Headers Node or Fastify write themselves, or that differ per request. */
const OWN = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'x-request-id']);

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));

const answers = JSON.parse(readFileSync(process.env.BENCH_FLOOR_FILE, 'utf8'));
const boot = randomBytes(4).toString('hex');
let n = 0;
/** Each captured answer's send; a path captured with several queries (token-risk with its chain up and down) picks by URL. */
const byPath = new Map();
for (const answer of answers) {
  const body = Buffer.from(answer.body, 'base64');
  const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !OWN.has(name)));
  // A request id made the way marketgate makes its own: boot id and a counter.
  const send = (reply) => reply.code(answer.status).headers(headers).header('x-request-id', `${boot}-${(++n).toString(36)}`).send(body);
  const path = new URL(answer.path, 'http://x').pathname;
  if (!byPath.has(path)) byPath.set(path, new Map());
  byPath.get(path).set(answer.path, send);
}
for (const [path, sends] of byPath) {
  const only = sends.size === 1 ? [...sends.values()][0] : undefined;
  app.get(path, only ? (_req, reply) => only(reply) : (req, reply) => (sends.get(req.url) ?? [...sends.values()][0])(reply));
}

// Exits on SIGTERM through process.exit, so that --cpu-prof can write its profile.
process.on('SIGTERM', () => process.exit(0));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
