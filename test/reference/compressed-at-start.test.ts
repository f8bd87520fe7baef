// The reference documents' compressed forms are ready before the server listens (src/server.ts): the very first
// request for /openapi.json that takes brotli or gzip, sent the moment the process says it listens, gets it so.
import { describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../db-helpers.ts';
import { OFFLINE_BASE_URLS } from '../helpers.ts';
import { spawnServer } from '../servers/marketgate.ts';

describe('the reference documents at start-up', () => {
  it('the first /openapi.json after "Server listening" is served compressed (br, and gzip)', async () => {
    const proc = spawnServer({ ...OFFLINE_BASE_URLS, DATA_DIR: tempDir() }, {});
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    try {
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        const seen = (d: Buffer) => {
          out += d;
          const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (listening) resolve(listening[1]!);
        };
        proc.stdout.on('data', seen);
        proc.stderr.on('data', seen);
        proc.on('exit', () => reject(new Error(`the server stopped: ${out}`)));
      });
      const [br, gzip] = await Promise.all(['br', 'gzip'].map((encoding) => fetch(`${url}/openapi.json`, { headers: { 'accept-encoding': encoding } })));
      expect(br!.headers.get('content-encoding')).toBe('br');
      expect(gzip!.headers.get('content-encoding')).toBe('gzip');
      expect(((await br!.json()) as { openapi: string }).openapi).toBe('3.0.3');
    } finally {
      proc.kill('SIGTERM');
      await exited;
      removeTempDirs();
    }
  }, 120_000);
});
