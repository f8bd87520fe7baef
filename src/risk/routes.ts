// Interface A: the free token risk check, mounted under /risk (and at the root of RISK_HOSTNAME).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { freeBucketOf } from '../access/access-control.ts';
import { withHook } from '../edge/route-hooks.ts';
import { sendRemembered } from '../edge/answer-memo.ts';
import { catalogEntryOf } from '../access/grant.ts';
import { afterLimit, RateLimiter } from '../access/rate-limit/rate-limit.ts';
import type { LimitStore } from '../access/rate-limit/store.ts';
import { EVM_ADDRESS_FORMS, evmAddressProblem, looksLikeEvmAddress, normalizeEvmAddress } from '../params/evm-address.ts';
import { describeEndpoint, endpointSchema } from '../catalog/describe.ts';
import { requiredString } from '../params/query.ts';
import { mountRoutes } from '../catalog/mount.ts';
import { defineRoute, type CatalogEntry, type RouteContext, type RouteDef } from '../catalog/route.ts';
import { healthRoute } from '../catalog/health.ts';
import { envelope } from '../upstream/envelope.ts';
import { createErrorHandler } from '../edge/error-handler.ts';
import { NO_QUERY } from '../edge/validator.ts';
import { urlOrigin } from '../upstream/redact-url.ts';
import { BadRequestError } from '../lib/errors.ts';
import { GOPLUS } from '../sources/goplus.ts';
import { INTERFACE_VERSION } from '../lib/version.ts';
import { ACCEPTED_CHAINS, CHAINS, EVM_CHAINS_TEXT, findChain } from './chains.ts';
import { dataGaps } from './data-gaps.ts';
import { derivedFromBoth, readOnchain, shownOnchain } from './onchain.ts';
import { CHAIN_SIGNALS, disagreements } from './onchain-signals.ts';
import { assess } from './score.ts';
import { GROUPS, SIGNALS } from './signals.ts';
import { tokenRiskData } from './token-risk-data.ts';

export const RISK_DISCLAIMER =
  "Automated risk signals from a third-party provider (GoPlus Security) and from the token's chain, combined by a published formula. " +
  'Not financial advice and not an audit: a low score does not mean a token is legitimate, and a high score does not prove fraud. ' +
  'Signals can be missing, stale or wrong; check the raw data and do your own research.';

const SOLANA_MINT = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const ACCEPTED_ADDRESS = 'an EVM contract address (0x + 40 hex characters) or a Solana mint (base58, 32-44 characters)';

const tokenRiskQuery = z.object({
  address: requiredString(ACCEPTED_ADDRESS)
    .trim()
    .superRefine((v, ctx) => {
      if (SOLANA_MINT.test(v)) return;
      // The shared EVM rule (src/params/evm-address.ts): a mixed-case address must match its EIP-55 checksum.
      const problem = looksLikeEvmAddress(v) ? evmAddressProblem(v) : `must be ${ACCEPTED_ADDRESS}`;
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(
      `Token to check: ${ACCEPTED_ADDRESS}. EVM addresses: all lower-case, all upper-case, or EIP-55 mixed case ` +
        '(a mixed-case address with a wrong checksum is a 400: usually a typo). The form follows the chain: an EVM address on an EVM chain, a Solana mint on chain solana.',
    )
    .meta({ pattern: `^(?:${EVM_ADDRESS_FORMS}|${SOLANA_MINT.source.slice(1, -1)})$` }),
  chain: requiredString(ACCEPTED_CHAINS)
    .trim()
    .refine((v) => findChain(v) !== undefined, `must be ${ACCEPTED_CHAINS}`)
    .describe(`Chain: ${ACCEPTED_CHAINS}. An EVM chain takes an EVM address, and a Solana mint on chain solana.`)
    .meta({ enum: [...CHAINS.map((c) => c.name), ...CHAINS.flatMap((c) => (c.id === null ? [] : [String(c.id)]))] }),
});

const riskStatus = defineRoute({
  path: '/v1/status',
  summary: 'Token risk service catalog',
  description: 'Endpoints with their parameters, supported chains, the upstream provider, the rate limit and the disclaimer.',
  tag: 'Token risk',
  access: 'free',
  reference: true,
  data: z.object({
    name: z.string(),
    version: z.string(),
    description: z.string(),
    endpoints: z.array(endpointSchema),
    chains: z.array(z.object({ name: z.string(), id: z.number().nullable(), family: z.enum(['evm', 'solana']) })),
    provider: z.object({ name: z.string(), id: z.string(), base_url: z.string().describe('Origin of the configured base URL; a path, query or login in it is never shown') }),
    signals: z.array(
      z.object({
        name: z.string(),
        source: z.enum(['provider', 'chain']),
        group: z.enum(GROUPS),
        weight: z.number(),
        critical: z.boolean(),
        families: z.array(z.string()).describe('evm, solana'),
      }),
    ),
    rate_limit: z.object({ max: z.number().int(), window_s: z.number().int(), scope: z.string(), on_exceed: z.string() }),
    cache_ttl_note: z.string(),
    disclaimer: z.string(),
  }),
  handler: async (req, ctx) =>
    envelope(
      {
        name: 'marketgate token risk',
        version: INTERFACE_VERSION.risk,
        description: "Free token risk check: one score from a security provider's signals and the chain's own evidence, with the raw data beside it.",
        endpoints: ctx.catalog.of('risk').map(describeEndpoint),
        chains: CHAINS.map((c) => ({ name: c.name, id: c.id, family: c.family })),
        provider: { name: 'GoPlus Security', id: GOPLUS, base_url: urlOrigin(ctx.config.sources.goplus.baseUrl) },
        signals: [
          ...SIGNALS.map((s) => ({ name: s.name, source: 'provider' as const, group: s.group, weight: s.weight, critical: s.critical ?? false, families: Object.keys(s.read) })),
          ...CHAIN_SIGNALS.map((s) => ({ name: s.name, source: 'chain' as const, group: s.group, weight: s.weight, critical: s.critical ?? false, families: [s.family] })),
        ],
        rate_limit: { max: ctx.config.risk.rateLimitPerMinute, window_s: 60, scope: 'client IP', on_exceed: '429 with Retry-After' },
        cache_ttl_note: "Provider answers and the chain's evidence are cached per token; meta.sources tells their age.",
        disclaimer: RISK_DISCLAIMER,
      },
      [],
      { request_id: req.id },
    ),
});

export const tokenRisk = defineRoute({
  path: '/v1/token-risk',
  summary: 'Token risk score',
  description:
    `Risk score 0-100 (higher = riskier) for a token contract on ${EVM_CHAINS_TEXT} or a Solana mint, computed only from the signals GoPlus gave ` +
    "and the evidence read from the token's chain (EVM: code, proxy, owner and a simulated buy, transfer and sell; Solana: the mint's authorities and " +
    "Token-2022 extensions), with the weighted breakdown, coverage, grouped flags (null = no data), the chain's evidence, where the two disagree, and the provider's raw object.",
  tag: 'Token risk',
  access: 'free',
  query: tokenRiskQuery,
  data: tokenRiskData,
  example: { chain: 'base', address: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' },
  handler: async (req, ctx) => {
    const chain = findChain(req.query.chain)!;
    const isEvmAddress = looksLikeEvmAddress(req.query.address);
    if (chain.family === 'evm' && !isEvmAddress) {
      throw new BadRequestError(`query parameter 'address' must be an EVM address (0x + 40 hex characters) on chain '${chain.name}'`);
    }
    if (chain.family === 'solana' && isEvmAddress) {
      throw new BadRequestError(`query parameter 'address' must be a Solana mint (base58, 32-44 characters) on chain 'solana'`);
    }
    const address = chain.family === 'evm' ? normalizeEvmAddress(req.query.address) : req.query.address; // 0X… too

    // The chain's reads start with the provider's call and share its deadline.
    const deadlineAt = Date.now() + ctx.config.upstream.deadlineMs;
    const [{ data: raw, meta }, chainRead] = await Promise.all([
      ctx.sources.goplus.tokenSecurity({ chain: chain.id ?? 'solana', address }),
      readOnchain(ctx.sources, chain, address, deadlineAt),
    ]);
    const { onchain, onchain_unavailable } = chainRead;
    const build = () => {
      const assessment = assess(chain.family, raw, onchain);
      return {
        chain: { name: chain.name, id: chain.id },
        address,
        ...assessment,
        onchain: shownOnchain(onchain),
        data_gaps: dataGaps({ family: chain.family, raw, flags: assessment.flags, onchain, onchainUnavailable: onchain_unavailable }),
        onchain_unavailable,
        disagreements: disagreements(chain.family, raw, onchain),
        token: { name: text(raw?.token_name ?? metadata(raw)?.name), symbol: text(raw?.token_symbol ?? metadata(raw)?.symbol) },
        raw,
        ...(raw === null
          ? { note: `GoPlus has no data for this token on ${chain.name}; ${assessment.score === null ? 'nothing was scored' : "the score rests on the chain's evidence alone"}.` }
          : {}),
      };
    };
    // Cached provider and chain answers are the same objects on every hit, and the build is pure: made once
    // for the pair. A chain whose breaker is open is one answer while it stays open (onchain.ts chainDown); a
    // chain that failed otherwise is not an answer to keep: then the data is made afresh.
    const key = `${chain.name} ${address}`;
    const data = chainRead.answer !== null ? derivedFromBoth(raw, chainRead.answer, key, build) : build();
    return envelope(data, [meta, chainRead.meta], { disclaimer: RISK_DISCLAIMER });
  },
});

export const RISK_ROUTES: readonly RouteDef[] = [healthRoute('token risk', 'Token risk', INTERFACE_VERSION.risk), riskStatus, tokenRisk];

export interface RiskPluginOptions {
  ctx: RouteContext;
  /** Where the limiter counts: this process, or Redis shared by the instances (REDIS_URL). */
  limitStore: LimitStore;
}

export const riskPlugin: FastifyPluginAsync<RiskPluginOptions> = async (app, { ctx, limitStore }) => {
  // Interface A's published contract lists 400, 429 and 502: a provider that is limiting us or paused
  // by its breaker is a 502 here too (with Retry-After), where interface B answers 503.
  app.setErrorHandler(createErrorHandler({ unavailableStatus: 502 }));
  // Per client IP on every route but /risk/health (declared rateLimited: false); the status page in a bucket of its own.
  const limiter = new RateLimiter(limitStore, () => ctx.metrics.rateLimited('risk'));
  const limit = { scope: 'risk', max: ctx.config.risk.rateLimitPerMinute, per: 'per client' };
  // Within its limit, a GET whose answer is remembered and still fresh is answered here (answer-memo.ts).
  // A hook of each route's own, made for its entry when it is registered.
  const serveRemembered = (req: FastifyRequest, reply: FastifyReply): boolean => {
    const remembered = req.method === 'GET' ? ctx.answers.serve(req.catalogEntry!.url, req.url) : undefined;
    if (remembered === undefined) return false;
    sendRemembered(reply, remembered);
    return true;
  };
  const limited = (entry: CatalogEntry) => (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    req.catalogEntry = entry;
    afterLimit(limiter.check(freeBucketOf(req, entry), limit, reply), req, reply, serveRemembered, done);
  };
  app.addHook('onRoute', (route) => {
    const entry = catalogEntryOf(route);
    if (entry && entry.def.rateLimited !== false) route.onRequest = withHook(route.onRequest, limited(entry));
  });
  mountRoutes(app, ctx, 'risk', RISK_ROUTES);
  // GET /risk (and /risk/, and / on RISK_HOSTNAME): interface A's index, as GET / is the whole server's.
  app.get('/', { schema: { hide: true, querystring: NO_QUERY } }, async () => riskIndex());
};

/** Interface A's small index: what it is, and the links to use it. */
function riskIndex() {
  return {
    name: 'marketgate token risk',
    version: INTERFACE_VERSION.risk,
    description: `Free token risk check: one 0-100 risk score for a token contract on ${EVM_CHAINS_TEXT} or a Solana mint, from GoPlus Security's signals, with the raw data and a disclaimer.`,
    links: {
      token_risk: `/risk${tokenRisk.path}?${new URLSearchParams(tokenRisk.example)}`,
      status: '/risk/v1/status',
      health: '/risk/health',
      docs: '/docs',
      openapi: '/openapi.json',
      market_data: '/',
    },
    disclaimer: RISK_DISCLAIMER,
  };
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
const metadata = (raw: Record<string, unknown> | null) => (raw?.metadata && typeof raw.metadata === 'object' ? (raw.metadata as Record<string, unknown>) : undefined);
