// JSON-RPC 2.0 over HTTP (EVM nodes): errors arrive as HTTP 200 with `error: { code, message }`.
// A revert is an answer about the chain (the caller decodes it), not a failure of the node; a
// node's limits (-32005, "rate limit", HTTP 429) are a rate limit; any other error is the node's.
import { z } from 'zod';
import { isRecord, type Protocol, type Verdict } from './protocol.ts';

const RATE_LIMIT_CODES = new Set([-32005, -32090]);
const REVERT = /revert/i;
const LIMITED = /rate limit|too many requests|exceeded .*limit|capacity/i;

function classifyOne(item: unknown): Verdict | undefined {
  if (!isRecord(item) || !isRecord(item.error)) return undefined;
  const code = typeof item.error.code === 'number' ? item.error.code : undefined;
  const message = typeof item.error.message === 'string' ? item.error.message : 'error';
  if (code === 3 || REVERT.test(message)) return { kind: 'ok' };
  const detail = `JSON-RPC error ${code ?? ''} (${message})`.replace('  ', ' ');
  if ((code !== undefined && RATE_LIMIT_CODES.has(code)) || LIMITED.test(message)) return { kind: 'rate_limited', detail };
  return { kind: 'provider_error', detail };
}

/** A JSON-RPC 2.0 response (or a batch of them): a result or an error. */
const response = z.union([z.object({ jsonrpc: z.literal('2.0'), result: z.unknown() }), z.object({ jsonrpc: z.literal('2.0'), error: z.object({ code: z.number(), message: z.string() }).loose() })]);

export const JSON_RPC: Protocol = {
  envelope: z.union([response, z.array(response)]),
  classify(body) {
    if (Array.isArray(body)) {
      for (const item of body) {
        const v = classifyOne(item);
        if (v && v.kind !== 'ok') return v;
      }
      return undefined;
    }
    return classifyOne(body);
  },
};

/**
 * A batch (an array of calls) whose items are answers each, read by the caller: one item's error (a method the
 * node does not have, a revert) fails that item only. The batch fails as a whole when the node limits us, or
 * answers the batch with one error (a node that takes no batches).
 */
export const JSON_RPC_BATCH: Protocol = {
  envelope: z.union([z.array(response), response]),
  classify(body) {
    if (!Array.isArray(body)) return classifyOne(body) ?? { kind: 'provider_error', detail: 'a single answer to a batch' };
    for (const item of body) {
      const v = classifyOne(item);
      if (v?.kind === 'rate_limited') return v;
    }
    return undefined;
  },
};
