// BENCH_ONLY=client npm run bench — what the typed client (marketgate/client, as built in dist/client) adds to a
// keyed call beyond plain fetch. marketgate runs compiled (`node dist/server.js`) on the recorded world with the
// bench key and hour-long TTLs, so GET /v1/price?symbol=BTC is answered from the cached path. One call at a time:
// plain `fetch` (status checked, body parsed as JSON, as a caller must) and `client.call` alternate, N pairs after
// a warm-up, and the bench prints the median and p99 of each and of the per-pair difference. It also times the
// client alone, over a fetch that returns a ready answer (no network), which is its own CPU per call.
//
// BENCH_CLIENT_CALLS (default 5,000 pairs). Target: the median difference under 1 ms.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startRecordedWorld } from '../test/fakes/recorded-world.ts';
import { startBenchApp } from './cached-path.ts';
import { machine, median } from './lib.ts';

type ClientModule = typeof import('../src/client/index.ts');

const KEY = 'bench-key';
const PATH = '/v1/price';
const QUERY = { symbol: 'BTC' };
const TARGET_MS = 1;

export interface Figures {
  median: number;
  p99: number;
}

export interface ClientBench {
  calls: number;
  fetch: Figures;
  client: Figures;
  /** client − fetch, pair by pair. */
  overhead: Figures;
  /** The client alone, over a fetch answering at once. */
  alone: Figures;
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.99 * xs.length))]!;
const figures = (xs: number[]): Figures => ({ median: median(xs), p99: p99(xs) });

export async function benchClient(calls: number): Promise<ClientBench> {
  const { createClient } = (await import(pathToFileURL(join(process.cwd(), 'dist/client/index.js')).href)) as ClientModule;
  const world = await startRecordedWorld();
  const app = await startBenchApp(world.env, mkdtempSync(join(tmpdir(), 'mg-bench-client-')), 'warn');
  try {
    const url = `${app.url}${PATH}?symbol=BTC`;
    const headers = { accept: 'application/json', 'x-api-key': KEY };
    const plain = async () => {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`plain fetch: HTTP ${res.status}`);
      return (await res.json()) as unknown;
    };
    const client = createClient({ baseUrl: app.url, apiKey: KEY });
    const viaClient = () => client.call(PATH, QUERY);

    for (let i = 0; i < Math.min(1000, calls); i++) {
      await plain();
      await viaClient();
    }
    const f: number[] = [];
    const c: number[] = [];
    const d: number[] = [];
    for (let i = 0; i < calls; i++) {
      // Alternate which goes first, so neither always follows the other's idle gap.
      const first = i % 2 === 0;
      const t0 = performance.now();
      await (first ? plain() : viaClient());
      const t1 = performance.now();
      await (first ? viaClient() : plain());
      const t2 = performance.now();
      const [tf, tc] = first ? [t1 - t0, t2 - t1] : [t2 - t1, t1 - t0];
      f.push(tf);
      c.push(tc);
      d.push(tc - tf);
    }

    // The client's own work: a fetch that hands back the same answer without a network.
    const body = await (await fetch(url, { headers })).text();
    const ready: typeof fetch = async () => new Response(body, { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'bench' } });
    const offline = createClient({ baseUrl: app.url, apiKey: KEY, fetch: ready });
    const plainOffline = async () => (await ready(url, { headers })).json();
    const a: number[] = [];
    for (let i = 0; i < calls + 1000; i++) {
      const t0 = performance.now();
      await offline.call(PATH, QUERY);
      const t1 = performance.now();
      await plainOffline();
      const t2 = performance.now();
      if (i >= 1000) a.push(t1 - t0 - (t2 - t1));
    }
    return { calls, fetch: figures(f), client: figures(c), overhead: figures(d), alone: figures(a) };
  } finally {
    await app.stop();
    await world.stop();
  }
}

export function printClient(r: ClientBench): void {
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  console.log(`${machine()}; ${r.calls} keyed calls of GET ${PATH}?symbol=BTC (cached path), one at a time, alternating`);
  console.log(`  plain fetch + JSON        median ${ms(r.fetch.median)}  p99 ${ms(r.fetch.p99)}`);
  console.log(`  client.call               median ${ms(r.client.median)}  p99 ${ms(r.client.p99)}`);
  console.log(`  client overhead per call  median ${ms(r.overhead.median)}  p99 ${ms(r.overhead.p99)}  (client − fetch, pair by pair)`);
  console.log(`  client alone (no network) median ${ms(r.alone.median)}  p99 ${ms(r.alone.p99)}  (beyond parsing the same answer)`);
  console.log(`  target: overhead under ${TARGET_MS} ms per call — ${r.overhead.median < TARGET_MS ? 'met' : 'NOT met'}`);
}
