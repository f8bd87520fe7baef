// The edge bench's probe (bench/edge.ts), in a process of its own so what is timed is the server's answer, not the
// event loop of the process that attacks: every PROBE_MS a fresh connection from 127.0.0.1 (no pooled connection:
// the clients a read queue locked out), alternately `GET /health` and a keyed `GET /v1/price?symbol=BTC` (cached),
// timed from connect to the end of the answer. Its parent names the phase ({ phase }); on 'stop' it sends back every
// sample and exits.
import { connect } from 'node:net';

export interface ProbeSample {
  phase: string;
  path: string;
  /** Connect → the answer's end, ms. */
  ms: number;
  /** The status code; 0 when the connection closed unanswered or was reset; -1 after TIMEOUT_MS. */
  status: number;
  /** When the probe started, epoch ms. */
  at: number;
}

const PROBE_MS = 100;
const TIMEOUT_MS = 10_000;
const [base, key] = [process.argv[2]!, process.argv[3]!];
const { hostname, port } = new URL(base);
const PATHS = [
  ['/health', ''],
  ['/v1/price?symbol=BTC', `x-api-key: ${key}\r\n`],
] as const;

let phase = 'start';
let running = true;
const samples: ProbeSample[] = [];
process.on('message', (m: { phase?: string } | string) => {
  if (m === 'stop') running = false;
  else if (typeof m === 'object' && m.phase) phase = m.phase;
});

function probe(path: string, headers: string): Promise<ProbeSample> {
  const at = Date.now();
  const t0 = performance.now();
  const label = phase;
  return new Promise((resolve) => {
    let got = '';
    let done = false;
    const finish = (status: number) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ phase: label, path, ms: performance.now() - t0, status, at });
    };
    const socket = connect({ host: hostname, port: Number(port), localAddress: '127.0.0.1' }, () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${headers}Connection: close\r\n\r\n`),
    );
    const timer = setTimeout(() => finish(-1), TIMEOUT_MS);
    socket.on('data', (d) => (got += d));
    socket.on('error', () => finish(0));
    socket.on('close', () => finish(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
  });
}

process.send!('ready');
let n = 0;
while (running) {
  const [path, headers] = PATHS[n++ % PATHS.length]!;
  const started = Date.now();
  samples.push(await probe(path, headers));
  await new Promise((r) => setTimeout(r, Math.max(0, PROBE_MS - (Date.now() - started))));
}
process.send!(samples, () => process.exit(0));
