// The start command itself: `npm start` runs src/server.ts; it must serve on embedded defaults,
// stop on a bad setting with a message naming it, and shut down cleanly on SIGTERM.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function start(env: Record<string, string>) {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

describe('src/server.ts', () => {
  it('serves on defaults (no database, no Redis, no keys) and exits 0 on SIGTERM', async () => {
    const s = start({ PORT: '0' });
    let url = '';
    for (let i = 0; i < 100 && !url; i++) {
      await new Promise((r) => setTimeout(r, 100));
      url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(s.output())?.[1] ?? '';
    }
    expect(url, s.output()).not.toBe('');
    const health = await fetch(`${url}/risk/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toBeTruthy();
    expect(((await health.json()) as { data: { status: string } }).data.status).toBe('ok');
    expect((await fetch(`${url}/health`)).status).toBe(200);
    s.proc.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(s.output()).toContain('shutting down');
  }, 30_000);

  it('stops at start-up with a message naming a bad variable', async () => {
    const s = start({ PORT: 'eighty' });
    expect(await s.exited).toBe(1);
    expect(s.output()).toContain('PORT="eighty" is invalid: expected a whole number from 0 to 65535');
  }, 30_000);
});
