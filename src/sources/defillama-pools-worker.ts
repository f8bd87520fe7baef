// Worker thread: parses DefiLlama's yields document (see defillama-pools.ts) off the event loop.
import { parentPort } from 'node:worker_threads';
import { parsePoolsText } from './defillama-pools.ts';

parentPort!.once('message', (text: string) => parentPort!.postMessage(parsePoolsText(text)));
