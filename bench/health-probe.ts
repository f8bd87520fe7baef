// /health every 100 ms over a connection of its own, in a process of its own (forked by bench/memory.ts), so what is
// timed is the server's answer, not the event loop of the process that floods it: that one makes hundreds of sockets
// and takes their resets, and a probe sharing its loop would wait for it too. On 'stop' from its parent it sends back
// its latencies (ms) and failures, and exits. It says 'ready' once its connection has had its first answer (that one
// is not counted: it times the connection's setup, not the server's answer).
import { Pool } from 'undici';

const pool = new Pool(process.argv[2]!, { connections: 1 });
const latencies: number[] = [];
let failures = 0;
let running = true;
process.on('message', () => void (running = false));

{
  const res = await pool.request({ method: 'GET', path: '/health', headersTimeout: 10_000, bodyTimeout: 10_000 });
  await res.body.arrayBuffer();
  process.send!('ready');
}
while (running) {
  const t0 = performance.now();
  try {
    const res = await pool.request({ method: 'GET', path: '/health', headersTimeout: 10_000, bodyTimeout: 10_000 });
    await res.body.arrayBuffer();
    if (res.statusCode === 200) latencies.push(performance.now() - t0);
    else failures++;
  } catch {
    failures++;
  }
  await new Promise((r) => setTimeout(r, 100));
}
await pool.close();
process.send!({ latencies, failures }, () => process.exit(0));
