// GoPlus Security token security API.
// EVM:    GET {base}/api/v1/token_security/{chain_id}?contract_addresses={address}
// Solana: GET {base}/api/v1/solana/token_security?contract_addresses={mint}
// Quirks: errors come as HTTP 200 with `code` != 1 (4029 = rate limited, 2 = data pending);
// an unknown token is `result: {}`; the result is keyed by the lower-cased EVM address.
import { z } from 'zod';
import { UpstreamError } from '../http/errors.ts';
import { fetchSource, type SourceDeps, type Sourced } from '../http/fetch-source.ts';

export const GOPLUS = 'goplus';

const envelopeSchema = z.object({
  code: z.number(),
  message: z.string().optional(),
  result: z.record(z.string(), z.record(z.string(), z.unknown())).nullish(),
});

export interface GoPlusOptions {
  baseUrl: string;
  accessToken: string | undefined;
  ttlS: number;
}

export interface TokenSecurityQuery {
  /** EVM chain id, or 'solana'. */
  chain: number | 'solana';
  address: string;
}

/** The provider's per-token object, untouched; null when GoPlus has no data for the token. */
export type TokenSecurity = Record<string, unknown> | null;

export function createGoPlus(deps: SourceDeps, options: GoPlusOptions) {
  return {
    async tokenSecurity(q: TokenSecurityQuery): Promise<Sourced<TokenSecurity>> {
      const path = q.chain === 'solana' ? '/api/v1/solana/token_security' : `/api/v1/token_security/${q.chain}`;
      const res = await fetchSource(deps, {
        source: GOPLUS,
        url: `${options.baseUrl}${path}?contract_addresses=${encodeURIComponent(q.address)}`,
        headers: options.accessToken ? { authorization: options.accessToken } : {},
        schema: envelopeSchema,
        providerError: (b) => (b.code === 1 ? undefined : `code ${b.code}${b.message ? ` (${b.message})` : ''}`),
        ttlS: options.ttlS,
      });
      const entries = Object.entries(res.data.result ?? {});
      if (entries.length === 0) return { data: null, meta: res.meta };
      // EVM results are keyed by the lower-cased address; Solana mints are case-sensitive.
      const wanted = q.chain === 'solana' ? q.address : q.address.toLowerCase();
      const hit = entries.find(([k]) => k === wanted || k.toLowerCase() === wanted.toLowerCase());
      if (!hit) throw new UpstreamError(GOPLUS, 'schema', `${GOPLUS} answered for a different address than requested`);
      return { data: hit[1], meta: res.meta };
    },
  };
}

export type GoPlus = ReturnType<typeof createGoPlus>;
