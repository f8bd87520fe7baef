// Worker thread: parses DefiLlama's yields document (see defillama-pools.ts) off the event loop and
// moves the table's buffers back rather than copying them.
import { parentPort } from 'node:worker_threads';
import { parsePoolsText, transferables } from './defillama-pools.ts';

parentPort!.once('message', (text: string) => {
  const outcome = parsePoolsText(text);
  parentPort!.postMessage(outcome, outcome.ok ? transferables(outcome.table) : []);
});
