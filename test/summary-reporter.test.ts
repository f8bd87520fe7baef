// The closing summary line counts a test file that fails to load as a failure.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

async function summaryOf(config: string): Promise<string> {
  const args = ['vitest', 'run', '--config', config, '--reporter', './test/summary-reporter.ts'];
  const out = await run('npx', args, { env: { ...process.env, CI: '1' } }).then(
    (r) => r.stdout,
    (err: { stdout: string }) => err.stdout,
  );
  return /\d+ passed, \d+ failed, \d+ skipped/.exec(out)?.[0] ?? out;
}

describe('summary reporter', () => {
  it('counts a file that fails to load as a failure', async () => {
    expect(await summaryOf('test/fixtures/reporter/vitest.config.ts')).toBe('1 passed, 1 failed, 1 skipped');
  }, 30_000);
});
