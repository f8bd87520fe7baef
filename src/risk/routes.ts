// Interface A: the free token risk check, mounted under /risk (and at the root of RISK_HOSTNAME).
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { defineRoute, mountRoutes, type RouteCatalog, type RouteDef } from '../catalog/route.ts';
import { describeEndpoint, requiredString } from '../catalog/params.ts';
import { healthRoute } from '../catalog/status.ts';
import { AppError, BadRequestError } from '../http/errors.ts';
import { envelope } from '../http/envelope.ts';
import type { GoPlus } from '../sources/goplus.ts';
import { VERSION } from '../version.ts';
import { ACCEPTED_CHAINS, CHAINS, findChain, type ChainFamily } from './chains.ts';
import { assess, type Assessment } from './score.ts';
import { GROUPS, SIGNALS } from './signals.ts';

export interface RiskPluginOptions {
  goplus: GoPlus;
  goplusBaseUrl: string;
  catalog: RouteCatalog;
  rateLimitPerMinute: number;
  startedAt: number;
}

export const RISK_DISCLAIMER =
  'Automated risk signals from a third-party provider (GoPlus Security), combined by a published formula. ' +
  'Not financial advice and not an audit: a low score does not mean a token is legitimate, and a high score does not prove fraud. ' +
  'Signals can be missing, stale or wrong; check the raw data and do your own research.';

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SOLANA_MINT = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const ACCEPTED_ADDRESS = 'an EVM contract address (0x + 40 hex characters) or a Solana mint (base58, 32-44 characters)';

const tokenRiskQuery = z.object({
  address: requiredString(ACCEPTED_ADDRESS)
    .trim()
    .refine((v) => EVM_ADDRESS.test(v) || SOLANA_MINT.test(v), `must be ${ACCEPTED_ADDRESS}`)
    .describe(`Token to check: ${ACCEPTED_ADDRESS}. EVM addresses are case-insensitive.`),
  chain: requiredString(ACCEPTED_CHAINS)
    .trim()
    .refine((v) => findChain(v) !== undefined, `must be ${ACCEPTED_CHAINS}`)
    .describe(`Chain: ${ACCEPTED_CHAINS}`),
});

const flagValue = z.union([z.boolean(), z.number()]).nullable();
const tokenRiskData = z.object({
  chain: z.object({ name: z.string(), id: z.number().nullable().describe('EVM chain id; null for Solana') }),
  address: z.string().describe('Normalised address (EVM: lower-case)'),
  score: z.number().min(0).max(100).nullable().describe('0-100, higher = riskier; null when the provider gave no scored signal'),
  score_breakdown: z.object({
    signals: z.array(
      z.object({
        signal: z.string(),
        group: z.enum(GROUPS),
        value: z.union([z.boolean(), z.number()]),
        weight: z.number(),
        risk: z.number().describe('0-1'),
        contribution: z.number().describe('Points added to the score'),
      }),
    ),
    weight_total: z.number(),
    critical_floor_applied: z.boolean(),
  }),
  coverage: z.object({ present: z.number().int(), total: z.number().int(), ratio: z.number() }),
  flags: z.object(Object.fromEntries(GROUPS.map((g) => [g, z.record(z.string(), flagValue)]))),
  token: z.object({ name: z.string().nullable(), symbol: z.string().nullable() }),
  raw: z.record(z.string(), z.unknown()).nullable().describe("The provider's object, untouched; null when it has no data"),
  note: z.string().optional(),
});

export const riskPlugin: FastifyPluginAsync<RiskPluginOptions> = async (app, opts) => {
  await app.register(rateLimit, {
    max: opts.rateLimitPerMinute,
    timeWindow: 60_000,
    errorResponseBuilder: (_req, ctx) =>
      new AppError(429, `rate limit exceeded: ${ctx.max} requests per minute per client; retry in ${Math.ceil(ctx.ttl / 1000)} s`),
  });

  const health = healthRoute('token risk', 'Token risk', opts.startedAt);

  const status = defineRoute({
    path: '/v1/status',
    summary: 'Token risk service catalog',
    description: 'Endpoints with their parameters, supported chains, the upstream provider, the rate limit and the disclaimer.',
    tag: 'Token risk',
    data: z.object({}).loose(),
    handler: async (req) =>
      envelope(
        {
          name: 'marketgate token risk',
          version: VERSION,
          description: 'Free token risk check: one score from a security provider\'s signals, with the raw data beside it.',
          endpoints: opts.catalog.of('risk').map(describeEndpoint),
          chains: CHAINS.map((c) => ({ name: c.name, id: c.id, family: c.family })),
          provider: { name: 'GoPlus Security', id: 'goplus', base_url: opts.goplusBaseUrl },
          signals: SIGNALS.map((s) => ({ name: s.name, group: s.group, weight: s.weight, critical: s.critical ?? false, families: Object.keys(s.read) })),
          rate_limit: { max: opts.rateLimitPerMinute, window_s: 60, scope: 'client IP', on_exceed: '429 with Retry-After' },
          cache_ttl_note: 'Provider answers are cached per token; meta.sources tells their age.',
          disclaimer: RISK_DISCLAIMER,
        },
        [],
        { request_id: req.id },
      ),
  });

  const tokenRisk = defineRoute({
    path: '/v1/token-risk',
    summary: 'Token risk score',
    description:
      'Risk score 0-100 (higher = riskier) for a token contract on 11 EVM chains or a Solana mint, computed only from the signals GoPlus gave, ' +
      'with the weighted breakdown, coverage, grouped flags (null = no data) and the provider\'s raw object.',
    tag: 'Token risk',
    query: tokenRiskQuery,
    data: tokenRiskData,
    example: { chain: 'base', address: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' },
    handler: async (req) => {
      const chain = findChain(req.query.chain)!;
      const isEvmAddress = EVM_ADDRESS.test(req.query.address);
      if (chain.family === 'evm' && !isEvmAddress) {
        throw new BadRequestError(`query parameter 'address' must be an EVM address (0x + 40 hex characters) on chain '${chain.name}'`);
      }
      if (chain.family === 'solana' && isEvmAddress) {
        throw new BadRequestError(`query parameter 'address' must be a Solana mint (base58, 32-44 characters) on chain 'solana'`);
      }
      const address = chain.family === 'evm' ? req.query.address.toLowerCase() : req.query.address;

      const { data: raw, meta } = await opts.goplus.tokenSecurity({ chain: chain.id ?? 'solana', address });
      const result = assessOnce(chain.family, raw);
      return envelope(
        {
          chain: { name: chain.name, id: chain.id },
          address,
          ...result,
          token: { name: text(raw?.token_name ?? metadata(raw)?.name), symbol: text(raw?.token_symbol ?? metadata(raw)?.symbol) },
          raw,
          ...(raw === null ? { note: `GoPlus has no data for this token on ${chain.name}; nothing was scored.` } : {}),
        },
        [meta],
        { disclaimer: RISK_DISCLAIMER },
      );
    },
  });

  mountRoutes(app, opts.catalog, 'risk', [health, status, tokenRisk] as RouteDef[]);
};

// A cached provider answer is the same object on every hit, and assess() is pure: score it once.
const assessed = new WeakMap<object, Assessment>();
function assessOnce(family: ChainFamily, raw: Record<string, unknown> | null): Assessment {
  if (raw === null) return assess(family, raw);
  let result = assessed.get(raw);
  if (!result) assessed.set(raw, (result = assess(family, raw)));
  return result;
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
const metadata = (raw: Record<string, unknown> | null) => (raw?.metadata && typeof raw.metadata === 'object' ? (raw.metadata as Record<string, unknown>) : undefined);
