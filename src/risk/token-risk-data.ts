// The `data` of GET /risk/v1/token-risk, as documented (OpenAPI, /docs): the score and its breakdown, the
// provider's flags and raw object, and the chain's own evidence (`onchain`) with the disagreements.
import { z } from 'zod';
import { evmEvidenceFields, ownerKindFields, pausableField, solanaEvidenceFields } from './evidence-schema.ts';
import { CHAIN_SIGNALS, SELL_BLOCKED_TAX_PCT, TAX_TOLERANCE } from './onchain-signals.ts';
import { CLOSED_SOURCE_FLOOR, CRITICAL_FLOOR, GROUPS } from './signals.ts';
import { blockNumber, dataGaps, restrictionFields, unknownChecks } from './restrictions-schema.ts';
import { UNKNOWN_SELL_FLOOR } from './unknown-checks.ts';

const flagValue = z.union([z.boolean(), z.number()]).nullable();
const signalValue = z.union([z.boolean(), z.number()]);
const evmAddress = z.string().describe('0x address, lower-case');
const pct = (what: string) => z.number().nullable().describe(`${what}, in percent to 0.01 (amount expected from the pair's reserves vs amount received); null when not measured`);

const proxy = z
  .object({
    kind: z.enum(['eip1967', 'eip1967_beacon', 'eip1822', 'eip1167']).describe('eip1967: implementation slot set; eip1967_beacon: beacon slot set; eip1822: PROXIABLE slot set; eip1167: minimal proxy (clone) code'),
    implementation: evmAddress.nullable(),
    admin: evmAddress.nullable().describe('Who can upgrade it, read from `admin_source`; null when that cannot be read (or an EIP-1167 clone, which cannot be upgraded)'),
    admin_source: z
      .enum(['eip1967_admin_slot', 'beacon_owner', 'owner'])
      .nullable()
      .describe("eip1967_admin_slot; beacon_owner: the beacon's owner(); owner: the contract's owner() (no admin slot: UUPS/EIP-1822 upgrades are authorised by the implementation, commonly onlyOwner)"),
    beacon: evmAddress.nullable(),
    upgradeable: z.boolean().describe('False for an EIP-1167 clone'),
  });

const simulation = z
  .object({
    router: evmAddress,
    pair: evmAddress.describe('The pair of the token with the wrapped native coin on the router'),
    buy_amount: z.string().describe("Wrapped native coin spent on the simulated buy, in its smallest unit (the smaller of 0.01 coin and a thousandth of the pair's reserve)"),
    buy_tax_pct: pct('Buy tax'),
    transfer_tax_pct: pct('Tax on a transfer between two holders (sent vs arrived)'),
    sell_tax_pct: pct('Sell tax'),
    transfer_ok: z.boolean().nullable().describe('Whether the transfer to a second holder went through; null when nothing was bought'),
    sell_ok: z.boolean().nullable().describe('Whether the simulated sell went through; null when it could not be tried (the buy failed or gave nothing)'),
    failed_step: z.enum(['quote', 'buy', 'transfer', 'sell']).nullable().describe('The step whose revert reason is shown; null when every step went through'),
    revert_reason: z.string().nullable().describe("That step's revert reason (Error(string) message, panic, or custom error selector)"),
  });

const evmOnchain = z
  .object({
    block_number: blockNumber,
    has_code: z.boolean(),
    proxy: proxy.nullable().describe('null: not a proxy (or no code)'),
    owner: z.object({ address: evmAddress, renounced: z.boolean().describe('The zero address or a burn address'), ...ownerKindFields }).nullable(),
    owner_unavailable: z.string().nullable().describe('Why owner is null (no owner() function, no code)'),
    simulation: simulation.extend(restrictionFields).nullable(),
    simulation_unavailable: z.string().nullable().describe('Why simulation is null: no router configured for the chain, no pair with the wrapped native coin, no code, the node refused it'),
    ...evmEvidenceFields,
  });

const solanaOnchain = z
  .object({
    block_number: z.number().int().describe("The slot the mint's account was read at (the answer's context.slot)"),
    mint_authority: z.string().nullable(),
    freeze_authority: z.string().nullable(),
    supply: z.string().describe("In the token's smallest unit"),
    decimals: z.number().int(),
    token_program: z.enum(['spl-token', 'spl-token-2022']),
    extensions: z
      .object({
        present: z.array(z.string()).describe('Every extension the node listed'),
        transfer_fee_bps: z.number().int().describe('Transfer fee from transfer_fee_epoch on (newerTransferFee), basis points; 0 = none'),
        transfer_fee_max: z.string().nullable().describe("Largest fee of one transfer, in the token's smallest unit"),
        transfer_fee_epoch: z.number().int().nullable(),
        transfer_fee_older_bps: z.number().int().nullable().describe('The fee before that epoch (olderTransferFee)'),
        transfer_fee_authority: z.string().nullable().describe('Can change the fee'),
        permanent_delegate: z.string().nullable().describe("Can move or burn anyone's tokens"),
        transfer_hook: z.string().nullable().describe('Program every transfer calls'),
        non_transferable: z.boolean(),
        default_state_frozen: z.boolean().describe('New token accounts start frozen'),
        pausable: pausableField,
      })
      .describe('Token-2022 extensions that matter to a holder (an SPL Token mint has none: all off)'),
    ...solanaEvidenceFields,
  });

const disagreement = z.object({
  signal: z.string().describe('The provider signal (or field) both report'),
  provider: z.union([z.boolean(), z.number(), z.string()]).describe("The provider's value (taxes as fractions)"),
  chain: z.union([z.boolean(), z.number(), z.string()]).describe("The chain's (taxes as fractions)"),
});

export const tokenRiskData = z.object({
  chain: z.object({ name: z.string(), id: z.number().nullable().describe('EVM chain id; null for Solana') }),
  address: z.string().describe('Normalised address (EVM: lower-case)'),
  score: z.number().min(0).max(100).nullable().describe('0-100, higher = riskier; null when neither the provider nor the chain gave a scored signal'),
  score_breakdown: z.object({
    signals: z.array(
      z.object({
        signal: z.string(),
        source: z.enum(['provider', 'chain']).describe(`provider: GoPlus's signal; chain: read from the chain (${CHAIN_SIGNALS.map((s) => s.name).join(', ')})`),
        group: z.enum(GROUPS),
        value: z.union([z.boolean(), z.number()]),
        weight: z.number(),
        risk: z.number().describe('0-1'),
        contribution: z.number().describe('Points added to the score'),
      }),
    ),
    not_scored: z
      .array(z.object({ signal: z.string(), value: signalValue, reason: z.string() }))
      .describe('Signals the provider gave that are shown in flags but not scored, each with why (e.g. a simulated tax of 1 caused by cannot_buy)'),
    unknown: unknownChecks,
    weight_total: z.number(),
    critical_floor_applied: z
      .boolean()
      .describe(`A critical signal fired (is_honeypot, sell_tax 1, non_transferable, or a simulated sell that failed: chain_sell_blocked): score raised to at least ${CRITICAL_FLOOR}`),
    closed_source_floor_applied: z
      .boolean()
      .describe(`The contract source is not verified and the token is not on the trust list: score raised to at least ${CLOSED_SOURCE_FLOOR}`),
    unknown_sell_floor_applied: z.boolean().describe(`Whether the token can be sold is unknown (score_breakdown.unknown): score raised to at least ${UNKNOWN_SELL_FLOOR}`),
  }),
  coverage: z.object({ present: z.number().int(), total: z.number().int(), ratio: z.number() }).describe("Of the provider's applicable signals, how many it gave"),
  flags: z
    .object(Object.fromEntries(GROUPS.map((g) => [g, z.record(z.string(), flagValue)])))
    .describe('Every applicable provider signal by group (null = no data), with details shown beside some (transfer_fee_current/_scheduled/_scheduled_epoch, honeypot_with_same_creator_count)'),
  checks_not_made: z
    .array(z.object({ reason: z.string(), signals: z.array(z.string()) }))
    .describe('Checks the provider documents it cannot make in a situation this token is in (unverified source, not traded on a DEX) and that came back missing'),
  malicious_addresses: z
    .array(
      z.object({
        address: z.string(),
        role: z.string().describe('GoPlus field it is listed under: a power (mintable, freezable, …), transfer_hook or creators'),
        live: z.boolean().describe('The power is live (status "1"; a set transfer hook); a creator holds no power'),
      }),
    )
    .nullable()
    .describe('Solana: addresses GoPlus marks malicious_address 1; null when the answer carries no such marks (every EVM answer)'),
  onchain: z
    .union([evmOnchain, solanaOnchain])
    .nullable()
    .describe(
      "The chain's own evidence, read over the chain's RPC (meta.sources names it): for EVM the contract's code, proxy, owner and a simulated buy, transfer and sell " +
        `(an eth_call with state overrides: nothing is sent); for Solana the mint's account. null when it could not be read (see onchain_unavailable). A sell tax of ${SELL_BLOCKED_TAX_PCT} % or more counts as a failed sell.`,
    ),
  data_gaps: dataGaps,
  onchain_unavailable: z.string().nullable().describe("Why onchain is null: the chain's RPC failed or timed out (named), or the address is not a token there"),
  disagreements: z
    .array(disagreement)
    .describe(`Every fact the provider and the chain both report and report differently (taxes: more than ${TAX_TOLERANCE * 100} percentage point apart)`),
  token: z.object({ name: z.string().nullable(), symbol: z.string().nullable() }),
  raw: z.record(z.string(), z.unknown()).nullable().describe("The provider's object, untouched; null when it has no data"),
  note: z.string().optional(),
});
