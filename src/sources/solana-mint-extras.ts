// A Solana mint's evidence beyond its account: the share of supply in its 10 largest token accounts
// (getTokenLargestAccounts, solana.com/docs/rpc/http/gettokenlargestaccounts: up to 20 accounts, amounts as
// strings in the smallest unit), and whether its Metaplex metadata can still change (the metadata account at the
// PDA ["metadata", program, mint] of the Token Metadata program, read base64 and decoded as its Borsh layout:
// key, update authority, mint, name, symbol, uri, seller fee, creators, primary sale, is_mutable; developers.
// metaplex.com/token-metadata). A Token-2022 mint's own tokenMetadata extension answers instead when present.
import { z } from 'zod';
import { base58Decode, base58Encode, findProgramAddress } from './solana-address.ts';

export const METAPLEX_TOKEN_METADATA = 'metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s';

export const metadataAddress = (mint: string) => findProgramAddress([Buffer.from('metadata'), base58Decode(METAPLEX_TOKEN_METADATA), base58Decode(mint)], METAPLEX_TOKEN_METADATA);

export const largestAccountsAnswer = z.object({
  jsonrpc: z.literal('2.0'),
  result: z.object({ value: z.array(z.object({ address: z.string(), amount: z.string().regex(/^\d+$/) })) }),
});

export const metadataAccountAnswer = z.object({
  jsonrpc: z.literal('2.0'),
  result: z.object({ value: z.object({ owner: z.string(), data: z.tuple([z.string(), z.literal('base64')]) }).nullable() }),
});

/** Percent (to 0.01) of `supply` held by the 10 largest accounts; null when the supply is 0. */
export function top10Pct(amounts: string[], supply: string): number | null {
  const total = BigInt(supply);
  if (total === 0n) return null;
  const top = amounts
    .map(BigInt)
    .sort((a, b) => (b > a ? 1 : b < a ? -1 : 0))
    .slice(0, 10)
    .reduce((a, v) => a + v, 0n);
  return Math.round(Number((top * 1_000_000n) / total) / 100) / 100;
}

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** A Metaplex metadata account (Borsh, MetadataV1 key 4): its update authority and is_mutable, or null when it is not one. */
export function decodeMetadata(data: Buffer): { updateAuthority: string; isMutable: boolean } | null {
  let at = 0;
  const need = (n: number) => at + n <= data.length;
  if (!need(65) || data[0] !== 4) return null;
  const updateAuthority = base58Encode(data.subarray(1, 33));
  at = 65;
  for (let i = 0; i < 3; i++) {
    if (!need(4)) return null;
    const length = data.readUInt32LE(at);
    at += 4 + length;
  }
  at += 2; // seller_fee_basis_points
  if (!need(1)) return null;
  if (data[at++] === 1) {
    if (!need(4)) return null;
    at += 4 + data.readUInt32LE(at) * 34; // creators: address, verified, share
  }
  at += 1; // primary_sale_happened
  if (!need(1)) return null;
  return { updateAuthority, isMutable: data[at] === 1 };
}

/** Mutable with a live update authority (not the system program's all-zero address). */
export function metadataMutable(value: z.output<typeof metadataAccountAnswer>['result']['value']): boolean | null {
  if (value === null || value.owner !== METAPLEX_TOKEN_METADATA) return null;
  const m = decodeMetadata(Buffer.from(value.data[0], 'base64'));
  if (m === null) return null;
  return m.isMutable && m.updateAuthority !== SYSTEM_PROGRAM;
}
