// The edge under attack (issue 34): attackers on loopback addresses 127.0.0.2 and up, a probe on 127.0.0.1 in a
// process of its own (bench/edge-probe.ts: a fresh connection every 100 ms, `/health` and a keyed, cached
// `/v1/price` in turn), against the compiled server with its default connection limits and
// PRESSURE_MAX_RSS_MB set as the production checklist asks. Phases, each followed by AFTER_S with the attacker gone:
//
//   idle-rate      one address opens IDLE_RATE (20) connections a second that send nothing, for SECONDS (60);
//   idle-hold      one address opens HOLD (5,000) idle connections as fast as it can and holds what it gets;
//   pipelined      one address keeps PIPELINED (300) connections writing 64 KB chunks of pipelined
//                  `GET /openapi.json` (226 KB answers), never reading, reconnecting when closed;
//   pipelined-wide the same with HOLD connections spread over 100 addresses (50 each).
//
// Per phase: the probe's p50 / p99 / max for each path, its failures (reset or closed unanswered, timeouts, any
// status but 200), the server's RSS growth (all threads, /proc), the connections it refused or closed by reason
// (/metrics), and, once the attacker has left, how long until the last 503 (shedding's end; 0 when none).
// Targets: p99 ≤ 100 ms and no failure; RSS growth ≤ 300 MB; shedding over within 5 s.
// BENCH_EDGE_SECONDS shortens every phase (SECONDS; the holds take half); BENCH_EDGE_HOLD the idle and wide count.
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRecordedWorld } from '../test/fakes/recorded-world.ts';
import { startBenchApp } from './cached-path.ts';
import type { ProbeSample } from './edge-probe.ts';
import { machine, type Spawned } from './lib.ts';

const MB = 1_048_576;
const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const QUIET_S = 5;
const AFTER_S = 8;
const TARGET = { p99Ms: 100, rssMb: 300, shedEndS: 5 };
const REASONS = ['too_many_connections', 'too_many_from_ip', 'too_many_pending_from_ip', 'too_many_new_from_ip', 'first_byte_timeout', 'pipelining', 'write_stalled', 'memory_pressure'];

export interface EdgeBenchOptions {
  seconds: number;
  idleRate: number;
  hold: number;
  pipelined: number;
  pressureMb: number;
}

const rssOf = (pid: number | undefined): number => {
  try {
    return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
};

/** The open-file limit of this process (soft, hard), from the shell it was started from. */
function fileLimits(): { soft: number; hard: number } {
  const read = (flag: string) => Number(execFileSync('sh', ['-c', `ulimit ${flag}`], { encoding: 'utf8' }).trim()) || Infinity;
  return { soft: read('-Sn'), hard: read('-Hn') };
}

async function closedByReason(app: Spawned): Promise<Record<string, number>> {
  const text = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text().catch(() => '');
  return Object.fromEntries(REASONS.map((r) => [r, Number(new RegExp(`^marketgate_connections_closed_total\\{reason="${r}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0)]));
}

/** An attacker's connection from `from`: resolves when connected (or failed); `onClose` when it ends. */
function attackerSocket(port: number, from: string, onClose: () => void): Socket {
  const s = connect({ port, host: '127.0.0.1', localAddress: from });
  s.pause(); // never reads
  s.on('error', () => {});
  s.once('close', onClose);
  return s;
}

interface Attack {
  sockets: Set<Socket>;
  stop(): void;
  /** Connections the attacker saw closed by the server while the attack ran. */
  closedEarly: number;
  opened: number;
}

function attack(port: number, run: (a: Attack, open: (from: string, then?: (s: Socket) => void) => Socket | undefined) => void): Attack {
  let running = true;
  const a: Attack = { sockets: new Set(), closedEarly: 0, opened: 0, stop: () => {} };
  const open = (from: string, then?: (s: Socket) => void) => {
    if (!running) return undefined;
    a.opened++;
    const s = attackerSocket(port, from, () => {
      a.sockets.delete(s);
      if (running) a.closedEarly++;
    });
    a.sockets.add(s);
    if (then) s.once('connect', () => then(s));
    return s;
  };
  a.stop = () => {
    running = false;
    for (const s of a.sockets) s.destroy();
  };
  run(a, open);
  return a;
}

const chunkOf = (host: string) => {
  const line = `GET /openapi.json HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  return Buffer.from(line.repeat(Math.floor(65536 / line.length)));
};

/** Writes 64 KB chunks while the socket takes them (never reading); reconnects 50 ms after the server closes it. */
function pipeliningFrom(a: Attack, open: (from: string, then?: (s: Socket) => void) => Socket | undefined, from: string, chunk: Buffer): void {
  const s = open(from, (sock) => {
    const write = () => {
      while (!sock.destroyed && sock.write(chunk));
    };
    sock.on('drain', write);
    write();
  });
  s?.once('close', () => setTimeout(() => pipeliningFrom(a, open, from, chunk), 50).unref());
}

type Phase = { name: string; what: string; start: (port: number, host: string) => Attack; holdS: number };

function phases(o: EdgeBenchOptions): Phase[] {
  const holdS = Math.max(5, Math.round(o.seconds / 2));
  return [
    {
      name: 'idle-rate',
      what: `127.0.0.2 opens ${o.idleRate} idle connections/s for ${o.seconds} s`,
      holdS: o.seconds,
      start: (port) =>
        attack(port, (a, open) => {
          const timer = setInterval(() => open('127.0.0.2'), 1000 / o.idleRate);
          const stop = a.stop;
          a.stop = () => (clearInterval(timer), stop());
        }),
    },
    {
      name: 'idle-hold',
      what: `127.0.0.3 opens ${o.hold} idle connections, held ${holdS} s`,
      holdS,
      start: (port) =>
        attack(port, (_a, open) => {
          let n = 0;
          const batch = () => {
            for (let i = 0; i < 250 && n < o.hold; i++, n++) open('127.0.0.3');
            if (n < o.hold) setTimeout(batch, 20).unref();
          };
          batch();
        }),
    },
    {
      name: 'pipelined',
      what: `127.0.0.4 keeps ${o.pipelined} connections writing 64 KB of pipelined GET /openapi.json, never reading, ${holdS} s`,
      holdS,
      start: (port, host) => attack(port, (a, open) => Array.from({ length: o.pipelined }, () => pipeliningFrom(a, open, '127.0.0.4', chunkOf(host)))),
    },
    {
      name: 'pipelined-wide',
      what: `${o.hold} such connections over 100 addresses (127.0.1.1-100), ${holdS} s`,
      holdS,
      start: (port, host) =>
        attack(port, (a, open) => Array.from({ length: o.hold }, (_, i) => pipeliningFrom(a, open, `127.0.1.${(i % 100) + 1}`, chunkOf(host)))),
    },
  ];
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * p))]! : NaN;
};
const f = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));

function summarize(samples: ProbeSample[], path: string) {
  const mine = samples.filter((s) => s.path.startsWith(path));
  const ok = mine.filter((s) => s.status === 200).map((s) => s.ms);
  const failed = mine.length - ok.length;
  const byStatus: Record<string, number> = {};
  for (const s of mine) {
    if (s.status === 200) continue;
    const kind = s.status === 0 ? 'reset' : s.status === -1 ? 'timeout' : String(s.status);
    byStatus[kind] = (byStatus[kind] ?? 0) + 1;
  }
  return { n: mine.length, p50: pct(ok, 0.5), p99: pct(ok, 0.99), max: pct(ok, 1), failed, byStatus };
}

export async function runEdgeBench(o: EdgeBenchOptions): Promise<void> {
  const limits = fileLimits();
  // This process holds the attacker's sockets (the server holds at most its limits of them): HOLD + PIPELINED + room.
  const need = o.hold + o.pipelined + 512;
  if (limits.soft < need) {
    const scaled = Math.max(100, limits.soft - o.pipelined - 512);
    console.log(`note: ulimit -n is ${limits.soft} (hard ${limits.hard}), under the ${need} descriptors this bench needs: HOLD scaled from ${o.hold} to ${scaled}. Raise it (ulimit -n ${need}) for the full figures.`);
    o = { ...o, hold: scaled };
  }
  console.log(`${machine()}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at the start; ulimit -n ${limits.soft}`);
  const world = await startRecordedWorld();
  const app = await startBenchApp({ ...world.env, METRICS_TOKEN, PRESSURE_MAX_RSS_MB: String(o.pressureMb) }, mkdtempSync(join(tmpdir(), 'mg-bench-data-')), 'warn');
  const { hostname, port } = new URL(app.url);
  const host = `${hostname}:${port}`;
  try {
    // The keyed answer is cached before anything is timed.
    for (let i = 0; i < 3; i++) await (await fetch(`${app.url}/v1/price?symbol=BTC`, { headers: { 'x-api-key': 'bench-key' } })).arrayBuffer();
    const probe = fork(new URL('./edge-probe.ts', import.meta.url), [app.url, 'bench-key'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise((r) => probe.once('message', r)); // 'ready'
    const setPhase = (phase: string) => probe.send({ phase });
    setPhase('quiet');
    await new Promise((r) => setTimeout(r, QUIET_S * 1000));
    const results: string[] = [];
    const rows: Array<{ name: string; rss: number; closed: Record<string, number>; leftAt: number; attack: Attack }> = [];
    for (const ph of phases(o)) {
      console.log(`\n--- ${ph.name}: ${ph.what}`);
      const closedBefore = await closedByReason(app);
      const rssBefore = rssOf(app.proc.pid);
      let rssMax = rssBefore;
      const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssOf(app.proc.pid))), 250);
      setPhase(ph.name);
      const a = ph.start(Number(port), host);
      await new Promise((r) => setTimeout(r, ph.holdS * 1000));
      a.stop();
      const leftAt = Date.now();
      setPhase(`${ph.name}:after`);
      await new Promise((r) => setTimeout(r, AFTER_S * 1000));
      clearInterval(sampler);
      const closedAfter = await closedByReason(app);
      const closed = Object.fromEntries(REASONS.map((r) => [r, closedAfter[r]! - closedBefore[r]!]).filter(([, n]) => n !== 0));
      rows.push({ name: ph.name, rss: (rssMax - rssBefore) / MB, closed, leftAt, attack: a });
      console.log(`    attacker: ${a.opened} connections opened, ${a.closedEarly} closed by the server while it attacked; server: ${JSON.stringify(closed)}; RSS +${f((rssMax - rssBefore) / MB)} MB`);
    }
    probe.send('stop');
    const samples = (await new Promise((r) => probe.once('message', r))) as ProbeSample[];
    const quiet = samples.filter((s) => s.phase === 'quiet');
    const line = (label: string, ss: ProbeSample[]) => {
      const h = summarize(ss, '/health');
      const p = summarize(ss, '/v1/price');
      return `${label.padEnd(16)} /health p50 ${f(h.p50)} p99 ${f(h.p99)} max ${f(h.max)} ms (${h.n}, failed ${h.failed}${h.failed ? ` ${JSON.stringify(h.byStatus)}` : ''}) | /v1/price p50 ${f(p.p50)} p99 ${f(p.p99)} max ${f(p.max)} ms (${p.n}, failed ${p.failed}${p.failed ? ` ${JSON.stringify(p.byStatus)}` : ''})`;
    };
    console.log('\nprobe from 127.0.0.1, a fresh connection each (ms from connect to the answer\'s end):');
    console.log(line('quiet', quiet));
    for (const r of rows) {
      const during = samples.filter((s) => s.phase === r.name);
      const after = samples.filter((s) => s.phase === `${r.name}:after`);
      const last503 = after.filter((s) => s.status === 503).reduce((m, s) => Math.max(m, s.at + s.ms - r.leftAt), 0);
      const h = summarize(during, '/health');
      const p = summarize(during, '/v1/price');
      const met = Math.max(h.p99, p.p99) <= TARGET.p99Ms && h.failed + p.failed === 0;
      console.log(line(r.name, during));
      console.log(line(`  after`, after));
      results.push(
        `${r.name}: probe p99 ${f(h.p99)} / ${f(p.p99)} ms, failures ${h.failed + p.failed} (target p99 ≤ ${TARGET.p99Ms} ms, none: ${met ? 'met' : 'NOT met'}); ` +
          `RSS +${f(r.rss)} MB (target ≤ ${TARGET.rssMb}: ${r.rss <= TARGET.rssMb ? 'met' : 'NOT met'}); shedding over ${(last503 / 1000).toFixed(1)} s after the attacker left (target ≤ ${TARGET.shedEndS} s: ${last503 <= TARGET.shedEndS * 1000 ? 'met' : 'NOT met'})`,
      );
    }
    console.log(`\n${results.join('\n')}`);
    console.log(`load average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    await app.stop();
    await world.stop();
  }
}
