// One JSON-RPC call as the token risk check's chain reads make it (evm-token-evidence.ts, token-restrictions.ts),
// over the batching transport of rpc-batch.ts.

/** A JSON-RPC answer: a result, or an error the node answered with (a revert is such an answer). */
export type RpcAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/**
 * One JSON-RPC call; throws an UpstreamError when the node could not be read. Calls made together go out as
 * one batch (rpc-batch.ts); `alone` sends one by itself (a read whose answer may be large).
 */
export type RpcCall = (method: string, params: unknown[], options?: { alone?: boolean }) => Promise<RpcAnswer>;
