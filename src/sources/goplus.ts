// GoPlus Security token security API.
// EVM:    GET {base}/api/v1/token_security/{chain_id}?contract_addresses={address}
// Solana: GET {base}/api/v1/solana/token_security?contract_addresses={mint}
// Quirks: errors come as HTTP 200 with `code` != 1 (4029 = rate limited, 2 = data pending);
// an unknown token is `result: {}`; the result is keyed by the lower-cased EVM address.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { UpstreamError } from '../lib/errors.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';

export const GOPLUS = 'goplus';

/** GoPlus answers HTTP 200 with `code`: 1 is success, 4029 its rate limit, anything else an error (2 = data pending). */
export const GOPLUS_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || typeof body.code !== 'number' || body.code === 1) return undefined;
    const detail = `code ${body.code}${typeof body.message === 'string' && body.message ? ` (${body.message})` : ''}`;
    return body.code === 4029 ? { kind: 'rate_limited', detail } : { kind: 'provider_error', detail };
  },
};

const envelopeSchema = z.object({
  code: z.literal(1),
  message: z.string().optional(),
  result: z.record(z.string(), z.record(z.string(), z.unknown())).nullish(),
});

export interface GoPlusSettings {
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

function createGoPlus(ctx: SourceContext<GoPlusSettings>) {
  const options = ctx.settings;
  return {
    async tokenSecurity(q: TokenSecurityQuery): Promise<Sourced<TokenSecurity>> {
      const path = q.chain === 'solana' ? '/api/v1/solana/token_security' : `/api/v1/token_security/${q.chain}`;
      const res = await ctx.fetch({
        url: `${options.baseUrl}${path}?contract_addresses=${encodeURIComponent(q.address)}`,
        headers: options.accessToken ? { authorization: options.accessToken } : {},
        schema: envelopeSchema,
        protocol: GOPLUS_PROTOCOL,
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

export const goplusSource = defineSource({
  key: 'goplus',
  name: GOPLUS,
  title: 'GoPlus Security',
  docs: 'https://docs.gopluslabs.io/reference/api-overview',
  notes: 'Keyless works with a low limit (about 30 calls/min); errors arrive as HTTP 200 with code != 1 (4029 = rate limited, 2 = data pending).',
  env: {
    GOPLUS_BASE_URL: env.url('https://api.gopluslabs.io', 'GoPlus Security API.'),
    GOPLUS_ACCESS_TOKEN: env.secret('Optional GoPlus access token, sent as the Authorization header (keyless works, with lower limits).'),
    CACHE_TTL_TOKEN_RISK_S: env.ttl(60, 'GoPlus answers for one token'),
  },
  settings: (e) => ({ baseUrl: e.GOPLUS_BASE_URL, accessToken: e.GOPLUS_ACCESS_TOKEN, ttlS: e.CACHE_TTL_TOKEN_RISK_S }),
  create: createGoPlus,
});
