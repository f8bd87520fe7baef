// The documented shape (OpenAPI, /docs) of what issue 38 adds to the token risk answer: the trading
// restrictions in `onchain.simulation`, the block the chain was read at, the data gaps, and the checks the score
// counts as unknown. token-risk-data.ts places them.
import { z } from 'zod';
import { SELL_BLOCKED_TAX_PCT } from './onchain-thresholds.ts';
import { UNKNOWN_SELL_FLOOR } from './unknown-checks.ts';

const tokens = (what: string) => z.string().describe(`${what}, in the token's smallest unit`);
const pctSupply = z.number().nullable().describe('As a percentage of the total supply, to 0.0001; null when the supply could not be read');
const pct = (what: string) => z.number().nullable().describe(`${what}, in percent to 0.01; null when not measured`);

export const restrictionFields = {
  trading_enabled: z
    .boolean()
    .nullable()
    .describe("A buy is possible at all: the simulated buy, or the smallest buy of the limits' bisection, went through. null when no buy could be tried"),
  max_tx: z
    .object({
      buy_tokens: tokens('The largest buy that went through').nullable().describe('The largest buy that went through (tokens out of the pair), found by bisection; null when no buy limit was found'),
      sell_tokens: tokens('The largest sell that went through').nullable().describe('The largest sell that went through, found by bisection; null when no sell limit was found (or sells could not be tried: see data_gaps max_tx_sell)'),
      pct_supply: pctSupply.describe('The smaller limit as a percentage of the total supply, to 0.0001'),
    })
    .nullable()
    .describe("null when no buy or sell up to half the pair's token reserve failed where a smaller one went through (or, with a data_gaps entry max_tx, when it could not be tried)"),
  max_wallet: z
    .object({ tokens: tokens('The largest holding buys into one fresh wallet reached'), pct_supply: pctSupply })
    .nullable()
    .describe("null when buys filled one wallet to half the pair's token reserve (or, with a data_gaps entry, when it could not be tried)"),
  cooldown: z
    .boolean()
    .nullable()
    .describe('true when a second sell, one block and one second after a first one that went through, failed (eth_simulateV1 only); null when it could not be tried'),
  tax_later: z
    .object({
      buy_tax_pct: pct('Buy tax in the later block'),
      sell_tax_pct: pct('Sell tax in the later block'),
      sell_ok: z.boolean().nullable().describe(`Whether the later sell went through (a sell tax of ${SELL_BLOCKED_TAX_PCT} % or more counts as failed in scoring)`),
      after_blocks: z.number().int().describe('Blocks the simulation was moved forward (RISK_SIM_LATER_BLOCKS)'),
      after_s: z.number().int().describe('Seconds the timestamp was moved forward (one hour)'),
      block_override: z.enum(['eth_simulateV1', 'eth_call']).describe("How: eth_simulateV1's block overrides, or (fallback) eth_call's block-override parameter"),
    })
    .nullable()
    .describe('The buy-transfer-sell simulated again in a later block: a tax raised after launch shows here. null when the node ran neither method (see data_gaps)'),
  holders_sell_ok: z.number().int().nullable().describe('How many of the holders tried could sell (the fresh buy\'s amount, at most their holding); null when none was tried'),
  holders_tried: z
    .number()
    .int()
    .nullable()
    .describe("The token's largest holders (up to 3) among the recipients of its recent Transfer logs, the pair, the owner and burn addresses left out; null when the logs could not be read"),
  inputs: z
    .object({
      router: z.string(),
      path: z.array(z.string()).describe('[wrapped native coin, token]'),
      amount_in: z.string().describe("Wrapped native coin spent on the first buy, in its smallest unit"),
      from: z.string().describe('The simulator\'s buyer address (its code placed there by a state override)'),
    })
    .describe('What the simulation traded, so that it can be rerun on another node'),
};

export const blockNumber = z.number().int().nullable().describe('The latest block when the reads began; the later reads are pinned to it (null when the node did not give it)');

export const dataGaps = z
  .array(z.object({ signal: z.string(), reason: z.string() }))
  .describe('Every signal neither the provider nor the chain could determine, with why (a provider signal the chain determined is not a gap)');

export const unknownChecks = z
  .array(z.object({ signal: z.string(), weight: z.number(), risk: z.number(), reason: z.string(), contribution: z.number() }))
  .describe(`Checks counted as unknown (risk 0.5) because neither side could make them: "sellable" when no is_honeypot and no simulated sell; the score is then at least ${UNKNOWN_SELL_FLOOR}`);
