// What the chain sources reading a token's evidence for the risk check share: how long a token's evidence is
// reused, and the deadline their reads share with the provider's call (the risk route starts both at once).
import { env } from '../lib/env.ts';
import { UpstreamError } from '../lib/errors.ts';

export const TOKEN_EVIDENCE_ENV = {
  CACHE_TTL_TOKEN_ONCHAIN_S: env.ttl(60, "a token's evidence read from its chain (code, proxy, owner, simulated trade; a Solana mint's account)"),
} as const;

/**
 * The time left before `deadlineAt` (epoch ms), for each read of a token's evidence in turn: the reads share
 * one deadline, so a read that starts late gets what is left, and one that would start after it fails as a timeout.
 */
export function untilDeadline(source: string, deadlineAt: number): () => number {
  return () => {
    const left = Math.floor(deadlineAt - Date.now());
    if (left <= 0) throw new UpstreamError(source, 'timeout', `${source} did not answer within the deadline it shares with the provider's call`);
    return left;
  };
}
