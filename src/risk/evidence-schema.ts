// The documented shape (OpenAPI, /docs) of the token evidence read by evm-liquidity.ts, evm-capabilities.ts,
// evm-owner-kind.ts, evm-canonical-tokens.ts and, for Solana, solana-mint-extras.ts: the parts
// token-risk-data.ts adds to `onchain`.
import { z } from 'zod';
import { POWERS } from '../sources/evm-capabilities.ts';

const evmAddress = z.string().describe('0x address, lower-case');

export const ownerKindFields = {
  kind: z
    .enum(['eoa', 'contract', 'safe', 'timelock'])
    .nullable()
    .describe('eoa: no code at the address (a key holder, or a burn address: see renounced); safe: getThreshold() and getOwners() answer; timelock: getMinDelay() answers; contract: any other code. null when its code could not be read'),
  threshold: z.number().int().nullable().describe("A Safe's confirmations needed; null for any other kind"),
  owners: z.number().int().nullable().describe("How many owners a Safe has; null for any other kind"),
  min_delay_s: z.number().int().nullable().describe("A timelock's minimum delay, seconds; null for any other kind"),
};

const liquidity = z.object({
  pair: evmAddress.describe("The token's pair with the wrapped native coin on the simulation's DEX (its factory's getPair)"),
  reserve_native: z.number().nullable().describe("The pair's wrapped native reserve, in coins"),
  reserve_usd: z.number().nullable().describe("That reserve's worth in USD, the wrapped native coin priced by its pair with STABLE_TOKEN_<CHAIN> on the same DEX (the pool's total is about twice); null without such a pair"),
  impact_1k_pct: z.number().nullable().describe('Price impact of selling $1,000 worth of the token into the pair, percent to 0.01 (constant product, the DEX fee left out): 100 × 1000 / (reserve_usd + 1000)'),
  lp_burned_pct: z.number().nullable().describe("Share of the pair's LP supply held by the zero and the 0x…dEaD addresses, percent"),
  lp_locked_pct: z.number().nullable().describe('Share held by the known LP lockers of LP_LOCKERS_<CHAIN>, percent (0 when none are configured)'),
  lp_owner_pct: z.number().nullable().describe("Share held by the token's owner() (0 when renounced; null when there is no owner()), percent. The deployer is not read: no standard RPC names a contract's creator"),
});

export const evmEvidenceFields = {
  liquidity: liquidity.nullable(),
  liquidity_unavailable: z.string().nullable().describe('Why liquidity is null: no router configured, no pair with the wrapped native coin, no code'),
  capabilities: z
    .array(
      z.object({
        power: z.enum(POWERS as [string, ...string[]]),
        selector: z.string().describe('The 4-byte function selector found in the code (docs/using/token-risk.md lists the signatures)'),
      }),
    )
    .nullable()
    .describe("Owner-only powers whose function selectors are in the code (the implementation's, for a proxy), against the published table"),
  capabilities_unavailable: z.string().nullable().describe("Why capabilities is null: no code, or a proxy's implementation that could not be read"),
  impersonation: z
    .object({ of: z.string().describe('USDC, USDT, WBTC, or the native wrapper (WETH, WBNB, …)'), canonical_address: evmAddress })
    .nullable()
    .describe("The canonical token of this chain whose name or symbol this token carries at another address; null when none"),
  impersonation_unavailable: z.string().nullable().describe('Why impersonation could not be judged: neither name() nor symbol() answered, or no code'),
};

export const solanaEvidenceFields = {
  top10_pct: z.number().nullable().describe("Percent of supply in the 10 largest token accounts (getTokenLargestAccounts; pools' vaults included); null when it could not be read"),
  metadata_mutable: z
    .boolean()
    .nullable()
    .describe("Whether the name and symbol can still change: the Metaplex metadata account is mutable with a live update authority (or a Token-2022 tokenMetadata extension names one); null when no metadata could be read"),
};

export const pausableField = z.boolean().describe('Token-2022 pausable extension with an authority (or paused now): every transfer can be stopped');
