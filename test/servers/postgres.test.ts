// The test PostgreSQL server leaves nothing behind: after a pause (SIGSTOP of every process of the server, as
// the tests of a hung database do) and a stop, no process of this test process's is left, stopped or zombie.
// Run as root (CI, this machine) the server once ran under `runuser`, which stopped itself with the paused
// server and was never woken: a stopped runuser and a zombie postgres per paused server.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startPostgres } from './postgres.ts';

/** This process's children: pid, state and command, from ps. */
function children(): { pid: number; state: string; command: string }[] {
  const text = execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,comm=']).toString();
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => Number(f[1]) === process.pid && Number(f[0]) !== 0)
    .map(([pid, , state, command]) => ({ pid: Number(pid), state: state!, command: command! }))
    .filter((c) => c.command !== 'ps');
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('TestPostgres', () => {
  it.each([
    ['paused, resumed, stopped', true],
    ['paused and stopped', false],
  ])('%s: nothing of it is left', async (_name, resume) => {
    const before = children().map((c) => c.pid);
    const pg = await startPostgres();
    const started = children().filter((c) => !before.includes(c.pid));
    expect(started.map((c) => c.command)).toEqual(['postgres']); // the server itself, no wrapper
    pg.pause();
    if (resume) pg.resume();
    await pg.stop();
    expect(children().filter((c) => !before.includes(c.pid))).toEqual([]);
    expect(alive(started[0]!.pid)).toBe(false);
  }, 60_000);
});
