// Two small rules access-control.ts calls into: key-only routes (access `key`, e.g. /v1/usage: an
// API key is required, nothing is ever charged, no payment is looked at), and the per-key usage
// count (every call on a paid route that a valid key was accepted for, after the rate limit; key-only
// routes are never counted).
import type { FastifyRequest } from 'fastify';
import type { Access } from '../catalog/route.ts';
import type { UsageCounter } from '../db/usage.ts';
import type { AppError } from '../lib/errors.ts';
import { unauthorized } from './challenge.ts';
import { matchedEntry } from './grant.ts';

export const KEY_ONLY = 'an API key is required (x-api-key header)';

/** Routes whose caller is identified: paid ones (a key or a payment) and key-only ones (a key). */
export const needsCredential = (access: Access | undefined) => access === 'paid' || access === 'key';

/** 401 for a key-only route called without a key (an invalid key has its own 401 before this), saying how to get one. */
export function keyOnlyRefusal(req: FastifyRequest, howToGetKey: string): AppError | undefined {
  if (matchedEntry(req)?.access !== 'key' || req.credential?.kind === 'key') return undefined;
  return unauthorized(`${KEY_ONLY}. ${howToGetKey}`, false);
}

/** Counts the call against its key's usage when it is a keyed call on a paid route. */
export function countKeyedCall(req: FastifyRequest, usage: UsageCounter | undefined): void {
  const entry = matchedEntry(req);
  if (usage && entry?.access === 'paid' && req.credential?.kind === 'key') usage.count(req.credential.key.id, entry.url);
}
