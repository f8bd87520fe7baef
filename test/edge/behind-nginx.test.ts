// Behind a real reverse proxy (Debian's nginx, started here on a free port in front of the server, setting
// X-Forwarded-For with $proxy_add_x_forwarded_for as the docs show): with TRUST_PROXY naming the proxy, two
// clients are counted apart by a per-IP limit, and a client that forges X-Forwarded-For is counted as itself.
// With TRUST_PROXY=1, as the docs recommended before, every client was the proxy (issue 34 §2): a hop count now
// stops start-up (test/config.test.ts). Each client is a distinct loopback address (all of 127/8 is loopback).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.ts';
import { freePort } from '../servers/free-port.ts';

const NGINX = '/usr/sbin/nginx';
const LIMIT = 3;

let t: TestApp;
let nginx: ChildProcess | undefined;
let dir: string;
let proxyPort: number;
let appPort: number;

/** GET `path` through the proxy from `from`, with extra header lines; the status code (0 when closed unanswered). */
function viaProxy(from: string, path: string, extra = ''): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect({ port: proxyPort, host: '127.0.0.1', localAddress: from }, () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: api.example.com\r\n${extra}Connection: close\r\n\r\n`),
    );
    let got = '';
    socket.on('data', (d) => (got += d));
    socket.on('error', () => {});
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
  });
}

/** Resolves once something accepts connections on `port` (nginx has started). */
async function accepting(port: number, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!existsSync(NGINX))(`behind nginx (${existsSync(NGINX) ? NGINX : `skipped: ${NGINX} is not installed (apt-get install nginx; .ci/run installs it)`})`, () => {
  beforeAll(async () => {
    // The proxy's own address, as the docs show for a proxy on the same host. (Not `loopback` here: every test
    // client is a loopback address too, and would then be believed as a proxy itself.)
    t = await makeApp({ TRUST_PROXY: '127.0.0.1', FREE_RATE_LIMIT: String(LIMIT), MAX_CONNECTIONS_PER_IP: '2', MAX_PENDING_CONNECTIONS_PER_IP: '2' });
    appPort = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
    dir = mkdtempSync(join(tmpdir(), 'mg-nginx-'));
    for (const sub of ['logs', 'temp']) mkdirSync(join(dir, sub));
    proxyPort = await freePort();
    const temp = (name: string) => `${name}_temp_path ${join(dir, 'temp', name)};`;
    writeFileSync(
      join(dir, 'nginx.conf'),
      `daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}
  server {
    listen 127.0.0.1:${proxyPort};
    location / {
      proxy_pass http://127.0.0.1:${appPort};
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`,
    );
    nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: 'ignore' });
    await accepting(proxyPort, nginx);
  }, 60_000);

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx!.once('exit', r));
      nginx.kill('SIGTERM');
      await exited;
    }
    await t?.app.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('counts two clients apart by the per-IP limit', async () => {
    const first: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) first.push(await viaProxy('127.0.0.2', '/v1/status'));
    expect(first).toEqual([...Array(LIMIT).fill(200), 429]);
    // Another client behind the same proxy is not the first one's bucket.
    expect(await viaProxy('127.0.0.3', '/v1/status')).toBe(200);
  });

  it("counts a client that forges X-Forwarded-For as itself, never as the address it names", async () => {
    // 127.0.0.2 has used its limit (above); a client naming it in X-Forwarded-For is still 127.0.0.4 to the server.
    expect(await viaProxy('127.0.0.4', '/v1/status', 'X-Forwarded-For: 127.0.0.3\r\n')).toBe(200);
    const forged: number[] = [];
    for (let i = 0; i < LIMIT; i++) forged.push(await viaProxy('127.0.0.5', '/v1/status', 'X-Forwarded-For: 127.0.0.99\r\n'));
    expect(forged).toEqual([200, 200, 200]);
    expect(await viaProxy('127.0.0.5', '/v1/status', 'X-Forwarded-For: 127.0.0.98\r\n')).toBe(429);
    // ... and its forged addresses were never charged: a client that really is 127.0.0.99 has its whole limit.
    expect(await viaProxy('127.0.0.99', '/v1/status')).toBe(200);
  });

  it("counts the proxy's own connections in MAX_CONNECTIONS only, while a client connecting directly is held to MAX_CONNECTIONS_PER_IP (2 here)", async () => {
    // A direct client holding two idle connections: its third is refused.
    const direct = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<{ closed: Promise<void>; destroy: () => void }>((resolve) => {
            const s = connect({ port: appPort, host: '127.0.0.1', localAddress: '127.0.2.1' }, () =>
              resolve({ closed: new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r()))), destroy: () => s.destroy() }),
            );
            s.on('error', () => {});
          }),
      ),
    );
    await Promise.race(direct.map((d) => d.closed));
    // Meanwhile eight clients at once through the proxy, all of whose connections come from 127.0.0.1.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => viaProxy(`127.0.1.${i + 1}`, '/health')));
    expect(answers).toEqual(Array(8).fill(200));
    for (const d of direct) d.destroy();
  });
});
