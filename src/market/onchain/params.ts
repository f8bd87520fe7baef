// Query parameters of the on-chain endpoints (/v1/chain-*): chain, address (or ENS name), token,
// transaction hash, block. Each zod piece refuses what it cannot read with a message naming what is
// accepted; the parse* functions turn an accepted value into what the handler uses.
import { z } from 'zod';
import type { Address } from 'viem';
import { BadRequestError } from '../../lib/errors.ts';
import type { BlockRef } from '../../sources/evm-lookups.ts';
import { EVM_CHAINS, type EvmChain } from '../../sources/evm-rpc.ts';
import type { Sources } from '../../sources/index.ts';
import { loadViemEns } from '../../sources/viem.ts';
import { addressProblem, checkEvmAddress, EVM_ADDRESS_FORMS } from '../../params/evm-address.ts';

export const ACCEPTED_CHAIN = `one of ${EVM_CHAINS.map((c) => c.name).join(', ')} (case-insensitive) or a chain id (${EVM_CHAINS.map((c) => c.id).join(', ')})`;

export function findEvmChain(input: string): EvmChain | undefined {
  const v = input.trim().toLowerCase();
  return EVM_CHAINS.find((c) => c.name === v || String(c.id) === v);
}

/** The chain's RPC source, by chain name. */
export function rpcOf(sources: Sources, chain: EvmChain) {
  const byName = { ethereum: sources.rpcEthereum, base: sources.rpcBase, arbitrum: sources.rpcArbitrum, optimism: sources.rpcOptimism, polygon: sources.rpcPolygon };
  return byName[chain.name];
}

/** The chains' names and ids, as OpenAPI lists them (names in any case are accepted too: the description says so). */
export const CHAIN_VALUES = [...EVM_CHAINS.map((c) => c.name), ...EVM_CHAINS.map((c) => String(c.id))];

export const chainParam = z
  .string({ error: () => `must be ${ACCEPTED_CHAIN}` })
  .refine((v) => findEvmChain(v) !== undefined, `must be ${ACCEPTED_CHAIN}`)
  .default('ethereum')
  .describe(`Chain: ${ACCEPTED_CHAIN}. Default ethereum.`)
  .meta({ enum: CHAIN_VALUES });

/** The chain of an accepted `chain` value. */
export function parseChain(value: string): EvmChain {
  const chain = findEvmChain(value);
  if (!chain) throw new BadRequestError(`query parameter 'chain' must be ${ACCEPTED_CHAIN}`);
  return chain;
}

// ---- addresses and ENS names ---------------------------------------------------------------

const HEX_ADDRESS_TEXT = 'a 0x address (0x or 0X and 40 hex digits; mixed case must be its EIP-55 checksum)';
export const ACCEPTED_ADDRESS_OR_NAME = `${HEX_ADDRESS_TEXT} or an ENS name (vitalik.eth)`;

export type AddressInput = { kind: 'address'; address: Address } | { kind: 'name'; name: string };

/** viem's ENSIP-15 `normalize`, once loaded (it is not at start-up: see sources/viem.ts). */
let normalize: ((name: string) => string) | undefined;

/** Loads the ENS name normaliser: the `prepare` of every route whose parameters accept a name. */
export async function loadEnsNormalizer(): Promise<void> {
  normalize ??= (await loadViemEns()).normalize;
}

/** ENS names: dot-separated labels, normalized per ENSIP-15 (viem's `normalize`), at most 255 characters. */
function ensName(input: string): string | undefined {
  if (input.length > 255 || !input.includes('.') || input.startsWith('.') || input.endsWith('.') || input.includes('..')) return undefined;
  if (!normalize) throw new Error('an ENS name was checked before loadEnsNormalizer() finished: give the route `prepare: loadEnsNormalizer`');
  try {
    return normalize(input);
  } catch {
    return undefined;
  }
}

/**
 * ENS names as OpenAPI's pattern lists them (without ^ and $): two or more dot-separated labels of lower-case
 * letters, digits and single inner hyphens, which ENSIP-15 normalization keeps as they are. Other names it
 * normalizes (upper case, emoji, other scripts) are accepted too: the descriptions say so.
 */
const ENS_NAME_FORMS = '(?:[a-z0-9]+(?:-[a-z0-9]+)*\\.)+[a-z0-9]+(?:-[a-z0-9]+)*';

type Checked = { ok: true; value: AddressInput } | { ok: false; message: string };

function checkAddressOrName(raw: string, allowName: boolean): Checked {
  const v = raw.trim();
  const accepted = allowName ? ACCEPTED_ADDRESS_OR_NAME : HEX_ADDRESS_TEXT;
  // Anything that starts like an address is read as one (0x1234 is a short address, not a name), unless it has a
  // dot: no address has one, and 0x.eth is a valid ENS name.
  if (!allowName || (/^0[xX]/.test(v) && !v.includes('.'))) {
    const check = checkEvmAddress(v);
    return check.ok ? { ok: true, value: { kind: 'address', address: check.address } } : { ok: false, message: addressProblem(check.reason, accepted) };
  }
  const name = ensName(v);
  return name ? { ok: true, value: { kind: 'name', name } } : { ok: false, message: `must be ${accepted}` };
}

function addressSchema(allowName: boolean, what: string) {
  const accepted = allowName ? ACCEPTED_ADDRESS_OR_NAME : HEX_ADDRESS_TEXT;
  return z
    .string({ error: (iss) => (iss.input === undefined ? `is required: ${accepted}` : `must be ${accepted}`) })
    .superRefine((v, ctx) => {
      const checked = checkAddressOrName(v, allowName);
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
    })
    .describe(what)
    .meta({ pattern: allowName ? `^(?:${EVM_ADDRESS_FORMS}|${ENS_NAME_FORMS})$` : `^${EVM_ADDRESS_FORMS}$`, maxLength: 255 });
}

/** `address`: a 0x address or an ENS name (resolved on Ethereum). */
export const addressOrNameParam = addressSchema(true, `Account: ${ACCEPTED_ADDRESS_OR_NAME}. A name is resolved on Ethereum mainnet (its ETH address record, coin type 60).`);

/** A 0x address only (token contracts, reverse ENS lookups). */
export const hexAddressParam = (what: string) => addressSchema(false, `${what}: ${HEX_ADDRESS_TEXT}.`);

/** What an accepted address parameter holds. */
export function parseAddressOrName(param: string, value: string): AddressInput {
  const checked = checkAddressOrName(value, true);
  if (!checked.ok) throw new BadRequestError(`query parameter '${param}' ${checked.message}`);
  return checked.value;
}

/** An accepted 0x address parameter, checksummed. */
export function parseHexAddress(param: string, value: string): Address {
  const checked = checkAddressOrName(value, false);
  if (!checked.ok || checked.value.kind !== 'address') throw new BadRequestError(`query parameter '${param}' must be ${HEX_ADDRESS_TEXT}`);
  return checked.value.address;
}

const ACCEPTED_NAME = 'an ENS name (vitalik.eth)';

/** `name`: an ENS name only, so a name that starts like an address (0x.eth) is a name like any other. */
export const ensNameParam = z
  .string({ error: () => `must be ${ACCEPTED_NAME}` })
  .refine((v) => ensName(v.trim()) !== undefined, `must be ${ACCEPTED_NAME}`)
  .describe(`ENS name to resolve: ${ACCEPTED_NAME}; normalized per ENSIP-15 (case-insensitive).`)
  .meta({ pattern: `^${ENS_NAME_FORMS}$`, maxLength: 255 });

/** An accepted `name` value, normalized. */
export function parseEnsName(param: string, value: string): string {
  const name = ensName(value.trim());
  if (!name) throw new BadRequestError(`query parameter '${param}' must be ${ACCEPTED_NAME}`);
  return name;
}

// ---- transactions and blocks ---------------------------------------------------------------

const ACCEPTED_HASH = 'a transaction hash (0x and 64 hex digits)';

export const txHashParam = z
  .string({ error: (iss) => (iss.input === undefined ? `is required: ${ACCEPTED_HASH}` : `must be ${ACCEPTED_HASH}`) })
  .trim()
  .regex(/^0[xX][0-9a-fA-F]{64}$/, `must be ${ACCEPTED_HASH}`)
  .transform((v) => `0x${v.slice(2).toLowerCase()}` as `0x${string}`)
  .describe(`Transaction: ${ACCEPTED_HASH}, any case.`);

const BLOCK_TAGS = ['latest', 'safe', 'finalized'] as const;
const ACCEPTED_BLOCK = `${BLOCK_TAGS.join(', ')}, or a block number (plain decimal, 0 to ${Number.MAX_SAFE_INTEGER})`;

export const blockParam = z
  .string({ error: () => `must be ${ACCEPTED_BLOCK}` })
  .trim()
  .toLowerCase()
  .refine((v) => (BLOCK_TAGS as readonly string[]).includes(v) || (/^\d{1,16}$/.test(v) && Number.isSafeInteger(Number(v))), `must be ${ACCEPTED_BLOCK}`)
  .default('latest')
  .describe(`Block: ${ACCEPTED_BLOCK}. latest = the head; safe and finalized = the newest block the consensus layer marked so. Default latest.`)
  // The tags as written (any case is accepted), and numbers of up to 15 digits (all below 2^53).
  .meta({ pattern: `^(?:${BLOCK_TAGS.join('|')}|[0-9]{1,15})$` });

export function parseBlock(value: string): BlockRef {
  return (BLOCK_TAGS as readonly string[]).includes(value) ? (value as BlockRef) : Number(value);
}
