// Worker thread: creates a new PGlite cluster (Postgres's initdb, compiled to WebAssembly) in the
// directory it is sent, then closes it. initdb runs for seconds of CPU and would hold the server's
// event loop that long (measured: stalls of 1 to 4 s on a busy 2-core machine); here it holds only
// this thread, so /health and every other request keep answering while the first start prepares the
// database.
import { parentPort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

parentPort!.once('message', async ({ dir }: { dir: string }) => {
  try {
    const pg = await PGlite.create(dir);
    await pg.close();
    parentPort!.postMessage({ ok: true });
  } catch (err) {
    parentPort!.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
