// Runs one pure, CPU-heavy step (parsing a large provider document) on a short-lived worker thread, so
// the event loop keeps serving requests meanwhile. The worker module answers the first message it gets
// and is terminated after answering.
//
// Under tsx (npm run dev, the tests) the worker module is TypeScript: the worker registers tsx's loader
// before importing it. Compiled (npm start, Docker) it is the .js beside this file.
import { Worker } from 'node:worker_threads';

const RUNNING_TYPESCRIPT = import.meta.url.endsWith('.ts');

/** Evaluated in the worker (CommonJS): register tsx, then load the worker module. */
const TYPESCRIPT_BOOT = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(require('node:worker_threads').workerData.entry); });`;

/** The URL of a worker module `name` (no extension) next to `base` (the caller's import.meta.url). */
export function workerModule(name: string, base: string): URL {
  return new URL(`./${name}${RUNNING_TYPESCRIPT ? '.ts' : '.js'}`, base);
}

/** A new worker thread running the module `entry` (TypeScript under tsx, the compiled .js otherwise). */
export function startWorker(entry: URL): Worker {
  return RUNNING_TYPESCRIPT ? new Worker(TYPESCRIPT_BOOT, { eval: true, workerData: { entry: entry.href } }) : new Worker(entry);
}

/** Posts `input` to a new worker running `entry` and resolves with its one answer. */
export function runOffThread<I, O>(entry: URL, input: I): Promise<O> {
  return new Promise<O>((resolve, reject) => {
    const worker = startWorker(entry);
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
      void worker.terminate();
    };
    worker.once('message', (answer: O) => finish(() => resolve(answer)));
    worker.once('error', (err) => finish(() => reject(err)));
    worker.once('exit', (code) => finish(() => reject(new Error(`worker ${entry.pathname} exited (code ${code}) without answering`))));
    worker.postMessage(input);
  });
}
