// Batched JSON-RPC for the token risk check's chain reads: the calls made in one turn of the event loop
// (the reads of one round, started together, microtasks included) go out as one batch, one HTTP request; the
// answers are matched to the calls by id. A call can ask to go alone (`alone`): a read whose answer may be
// large (eth_getLogs) then cannot fail the batch of the others.
import { UpstreamError } from '../lib/errors.ts';
import type { RpcAnswer, RpcCall } from './evm-abi.ts';

/** One JSON-RPC request body item. */
export interface RpcRequest {
  jsonrpc: '2.0';
  id: number;
  method: string;
  params: unknown[];
}

/** Sends a batch; resolves with the node's answers (in any order, each with its id). */
export type SendBatch = (batch: RpcRequest[]) => Promise<(RpcAnswer & { id?: unknown })[]>;

interface Pending {
  request: RpcRequest;
  resolve: (a: RpcAnswer) => void;
  reject: (e: unknown) => void;
}

/** An RpcCall whose calls of one turn go out together; `batches()` counts the requests sent. */
export function batchingRpc(source: string, send: SendBatch): RpcCall & { batches: () => number } {
  let queue: Pending[] = [];
  let sent = 0;
  let nextId = 1;
  const flush = (items: Pending[]) => {
    sent++;
    send(items.map((p) => p.request)).then(
      (answers) => {
        const byId = new Map(answers.map((a) => [a.id, a]));
        for (const p of items) {
          const a = byId.get(p.request.id);
          if (a === undefined) p.reject(new UpstreamError(source, 'schema', `${source} answered a batch without the answer to ${p.request.method}`));
          else p.resolve(a);
        }
      },
      (err) => items.forEach((p) => p.reject(err)),
    );
  };
  const rpc = ((method: string, params: unknown[], options?: { alone?: boolean }) =>
    new Promise<RpcAnswer>((resolve, reject) => {
      const item = { request: { jsonrpc: '2.0' as const, id: nextId++, method, params }, resolve, reject };
      if (options?.alone) return flush([item]);
      if (queue.length === 0) {
        setImmediate(() => {
          const items = queue;
          queue = [];
          flush(items);
        });
      }
      queue.push(item);
    })) as RpcCall & { batches: () => number };
  rpc.batches = () => sent;
  return rpc;
}
