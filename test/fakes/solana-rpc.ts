// A Solana JSON-RPC node for tests: getAccountInfo answered, by the address asked, with a recorded
// jsonParsed payload (test/fixtures/upstream/solana-rpc__getAccountInfo_*.json, each with its source), sent
// as the recorded text (so u64 numbers reach the client as the node writes them). An unknown address has no
// account (value null). getTokenLargestAccounts and the Metaplex metadata accounts (base64) are served from
// constructed payloads for the mints that have them; another mint's getTokenLargestAccounts, and any other
// method, is the node's "method not found".
import { metadataAddress } from '../../src/sources/solana-mint-extras.ts';
import { recordedText } from '../fixtures.ts';
import type { FakeHandler } from './fake-upstream.ts';

export const SOLANA_MINTS = {
  /** SPL Token mint: live mint authority, no freeze authority. */
  splMint: 'Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr',
  /** Token-2022 mint: transfer fee 690 bps (from epoch 457), live mint and freeze authorities. */
  token2022: 'CKfatsPMUf8SkiURsDXs7eK6GWb4Jsd6UDbs7twMCWxo',
  /** An SPL Token token account, not a mint. */
  tokenAccount: 'AyGCwnwxQMCqaU4ixReHt8h5W4dwmxU7eM3BEQBdWVca',
  /** No account. */
  none: 'Bb39jXh8b1rWHymSqM46kKXYwzA35ChNZAMCZ3wSDAMV',
  /** Token-2022 mint with the pausable extension (constructed from token2022's account). */
  pausable: '2tWC4JAdL4AxEFJySziYJfsAnW2MHKRo98vbAPiRDSk8',
} as const;

const FILES: Record<string, string> = {
  [SOLANA_MINTS.splMint]: 'solana-rpc__getAccountInfo_spl_mint.json',
  [SOLANA_MINTS.token2022]: 'solana-rpc__getAccountInfo_token2022_transfer_fee.json',
  [SOLANA_MINTS.tokenAccount]: 'solana-rpc__getAccountInfo_token_account.json',
  [SOLANA_MINTS.pausable]: 'solana-rpc__getAccountInfo_token2022_pausable.json',
  [metadataAddress(SOLANA_MINTS.splMint)]: 'solana-rpc__getAccountInfo_metadata_spl_mint_mutable.json',
  [metadataAddress(SOLANA_MINTS.token2022)]: 'solana-rpc__getAccountInfo_metadata_token2022_immutable.json',
};
const LARGEST: Record<string, string> = { [SOLANA_MINTS.splMint]: 'solana-rpc__getTokenLargestAccounts_spl_mint.json' };

export const recordedSolanaRpc: FakeHandler = (req) => {
  const call = JSON.parse(req.body) as { id?: unknown; method?: string; params?: unknown[] };
  const largest = call.method === 'getTokenLargestAccounts' ? LARGEST[String(call.params?.[0])] : undefined;
  if (largest) return { body: recordedText(largest), headers: { 'content-type': 'application/json' } };
  if (call.method !== 'getAccountInfo') return { body: { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } } };
  const file = FILES[String(call.params?.[0])] ?? 'solana-rpc__getAccountInfo_null.json';
  return { body: recordedText(file), headers: { 'content-type': 'application/json' } };
};
