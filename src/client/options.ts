// createClient's options, checked once: a bad one throws a `config` MarketgateError naming it.
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { withNativeTypedDataSigning } from './native-signer.ts';
import { MarketgateError } from './errors.ts';
import type { BatchOptions, PaymentAsset } from './payer.ts';
import type { ReceiptKey } from './receipts.ts';
import { solanaWallet, type SolanaSecretKey, type SolanaWallet } from './solana-wallet.ts';

export interface ClientOptions {
  /** Where marketgate serves, e.g. `http://127.0.0.1:3000` or `https://api.example.com`. */
  baseUrl: string;
  /** An API key (`x-api-key`): paid routes are then served on the key, and nothing is paid with x402. */
  apiKey?: string;
  /** A private key (`0x` + 64 hex digits) or a viem local account: pays paid routes with x402. */
  wallet?: `0x${string}` | LocalAccount;
  /**
   * A Solana secret key (64 bytes: seed and public key, in base58 as Solana wallets export it, or the 64 bytes of a
   * solana-keygen file): pays paid routes with x402 `exact` in USDC on Solana. With `wallet` too, `prefer` picks.
   */
  solanaWallet?: SolanaSecretKey;
  /**
   * With both wallets, which network to pay on when the server offers both: `'base'` (the default) or `'solana'`.
   * The other is used when the server offers only it. maxSpendUsd is one limit across both wallets.
   */
  prefer?: 'base' | 'solana';
  /** The most this client pays in all, in US dollars (default 0.10). A call that would pass it fails before signing. */
  maxSpendUsd?: number;
  /**
   * Pay with `batch-settlement` (one deposit, then a signed voucher per call: no transaction, no facilitator, a
   * few milliseconds) when the server offers it. `'auto'` (the default): when maxSpendUsd leaves room for the
   * deposit the server asks (or a channel already holds enough), else `exact`; `true`: whenever offered, the
   * deposit cut to what maxSpendUsd leaves; `false`: always `exact`. An object gives the channel's settings
   * (`rpcUrl`, `storage`, `presign`: sign the next voucher ahead, default true) with `use: 'auto' | true`
   * (default true). `close()` asks for the unused deposit back.
   */
  batch?: 'auto' | boolean | BatchOptions;
  /** Tokens to pay in besides each network's USDC (a test network's token), each taken as $1 a token. */
  assets?: PaymentAsset[];
  /**
   * The networks this client pays on, as CAIP-2 ids (`eip155:8453`); a 402 asking for any other, or for a token
   * on them other than their USDC and the `assets` listed, is refused (a `not-allowed` error, nothing signed).
   * Default: the networks of `assets` when some are listed, else Base (`eip155:8453`), where marketgate is paid,
   * and Solana mainnet (`solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`) when a `solanaWallet` is given.
   */
  networks?: string[];
  /**
   * A JSON-RPC endpoint per network (`{ 'eip155:8453': 'https://…' }`): an authorization the chain shows unused
   * once it has expired is released from maxSpendUsd. Without one, every signed payment stays counted. On a Solana
   * network it is where the payment's transaction is built (latest blockhash, the mint); default: that network's
   * public RPC (api.mainnet-beta.solana.com, api.devnet.solana.com).
   */
  rpcUrls?: Record<string, string>;
  /** Attempts after the first on a dropped connection, a timeout or a 5xx (default 3). */
  retries?: number;
  /** Longest wait for one attempt's answer (ms, default 10,000). */
  attemptTimeoutMs?: number;
  /** Longest a whole call takes, retries and payment included (ms, default 30,000). */
  deadlineMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Verify the signed receipt of every answer paid with x402 (the offer-receipt extension): its signature against
   * the server's key, and that it names this payer, network, route and transaction and binds the digest of the
   * bytes received; a missing or failing receipt is a `receipt` error. `true`: the key the server publishes in
   * its agent card (read once); or the key to expect (its `x402.receipts`, or `{ jwk }`). Default: off (receipts
   * are still read and exposed, unverified; a Content-Digest is always checked).
   */
  verifyReceipts?: boolean | ReceiptKey;
}

export interface ResolvedOptions {
  baseUrl: string;
  apiKey: string | undefined;
  account: LocalAccount | undefined;
  solana: SolanaWallet | undefined;
  prefer: 'base' | 'solana';
  maxSpendUsd: number;
  /** Undefined: exact only. */
  batch: (BatchOptions & { use: 'auto' | true }) | undefined;
  assets: PaymentAsset[];
  networks: string[];
  rpcUrls: Record<string, string>;
  retries: number;
  attemptTimeoutMs: number;
  deadlineMs: number;
  fetch: typeof fetch;
  /** 'published': the agent card's key; a key: that one; undefined: receipts are not verified. */
  verifyReceipts: 'published' | ReceiptKey | undefined;
}

export const DEFAULT_MAX_SPEND_USD = 0.1;
/** Where marketgate is paid: Base. */
export const DEFAULT_NETWORK = 'eip155:8453';
/** Where a Solana wallet pays by default: Solana mainnet (CAIP-2: its genesis hash, first 32 characters). */
export const DEFAULT_SOLANA_NETWORK = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
/** A CAIP-2 chain id: namespace and reference (`eip155:8453`, `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`). */
const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;

function fail(path: string, error: string): never {
  throw new MarketgateError({ kind: 'config', path, error });
}

export function resolveOptions(o: ClientOptions): ResolvedOptions {
  let base: URL | undefined;
  try {
    base = new URL(o.baseUrl);
  } catch {
    /* below */
  }
  if (!base || (base.protocol !== 'http:' && base.protocol !== 'https:')) fail('baseUrl', `must be an http(s) URL, got ${JSON.stringify(o.baseUrl)}`);
  if (o.apiKey !== undefined && (typeof o.apiKey !== 'string' || o.apiKey === '')) fail('apiKey', 'must be a non-empty string');
  const count = (name: string, v: number | undefined, fallback: number, min: number) => {
    if (v === undefined) return fallback;
    if (!Number.isInteger(v) || v < min) fail(name, `must be an integer ≥ ${min}, got ${v}`);
    return v;
  };
  const assets = (o.assets ?? []).map(asset);
  if (o.prefer !== undefined && o.prefer !== 'base' && o.prefer !== 'solana') fail('prefer', `must be 'base' or 'solana', got ${JSON.stringify(o.prefer)}`);
  const solana = o.solanaWallet === undefined ? undefined : solanaWallet(o.solanaWallet);
  return {
    baseUrl: o.baseUrl.replace(/\/+$/, ''),
    apiKey: o.apiKey,
    account: o.wallet === undefined ? undefined : account(o.wallet),
    solana,
    prefer: o.prefer ?? 'base',
    maxSpendUsd: o.maxSpendUsd ?? DEFAULT_MAX_SPEND_USD,
    batch: batch(o.batch),
    assets,
    networks: networks(o.networks, assets, solana !== undefined),
    rpcUrls: rpcUrls(o.rpcUrls),
    retries: count('retries', o.retries, 3, 0),
    attemptTimeoutMs: count('attemptTimeoutMs', o.attemptTimeoutMs, 10_000, 1),
    deadlineMs: count('deadlineMs', o.deadlineMs, 30_000, 1),
    fetch: o.fetch ?? globalThis.fetch,
    verifyReceipts: receiptKey(o.verifyReceipts),
  };
}

function batch(given: ClientOptions['batch']): ResolvedOptions['batch'] {
  if (given === undefined || given === 'auto') return { use: 'auto' };
  if (given === true) return { use: true };
  if (given === false) return undefined;
  if (given === null || typeof given !== 'object') fail('batch', `must be 'auto', true, false or { rpcUrl?, storage?, use?, presign? }, got ${JSON.stringify(given)}`);
  if (given.use !== undefined && given.use !== 'auto' && given.use !== true) fail('batch.use', `must be 'auto' or true, got ${JSON.stringify(given.use)}`);
  if (given.rpcUrl !== undefined && !/^https?:\/\//.test(String(given.rpcUrl))) fail('batch.rpcUrl', `must be an http(s) URL, got ${JSON.stringify(given.rpcUrl)}`);
  if (given.presign !== undefined && typeof given.presign !== 'boolean') fail('batch.presign', `must be true or false, got ${JSON.stringify(given.presign)}`);
  return { ...given, use: given.use ?? true };
}

function networks(given: string[] | undefined, assets: PaymentAsset[], solana = false): string[] {
  if (given === undefined) return assets.length ? [...new Set(assets.map((a) => a.network))] : solana ? [DEFAULT_NETWORK, DEFAULT_SOLANA_NETWORK] : [DEFAULT_NETWORK];
  if (!Array.isArray(given) || given.length === 0) fail('networks', 'must be a non-empty list of CAIP-2 networks such as eip155:8453');
  given.forEach((n, i) => {
    if (typeof n !== 'string' || !CAIP2.test(n)) fail(`networks[${i}]`, `must be a CAIP-2 network such as eip155:8453, got ${JSON.stringify(n)}`);
  });
  return [...new Set(given)];
}

function rpcUrls(given: Record<string, string> | undefined): Record<string, string> {
  if (given === undefined) return {};
  if (given === null || typeof given !== 'object') fail('rpcUrls', "must map CAIP-2 networks to JSON-RPC URLs: { 'eip155:8453': 'https://…' }");
  for (const [network, url] of Object.entries(given)) {
    if (!CAIP2.test(network)) fail('rpcUrls', `${JSON.stringify(network)} is not a CAIP-2 network such as eip155:8453`);
    if (!/^https?:\/\//.test(String(url)) || !URL.canParse(String(url))) fail(`rpcUrls.${network}`, `must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  return { ...given };
}

/**
 * Networks written as text, comma-separated CAIP-2 ids (`eip155:8453,eip155:84532`), as an environment variable
 * gives them; checked as the `networks` option is.
 */
export function parseNetworks(text: string): string[] {
  return networks(text.split(',').map((n) => n.trim()).filter((n) => n !== ''), []);
}

function receiptKey(v: ClientOptions['verifyReceipts']): ResolvedOptions['verifyReceipts'] {
  if (v === undefined || v === false) return undefined;
  if (v === true) return 'published';
  const jwk = v?.jwk;
  const jwkOk = jwk === undefined || (jwk?.kty === 'EC' && typeof jwk.crv === 'string' && typeof jwk.x === 'string' && typeof jwk.y === 'string');
  const addressOk = v?.address === undefined || /^0x[0-9a-fA-F]{40}$/.test(v.address);
  if (!jwkOk || !addressOk || (jwk === undefined && v?.address === undefined)) {
    fail('verifyReceipts', "must be true (the key the server's agent card publishes) or the key to expect: { jwk: { kty: 'EC', crv, x, y } } or { address }");
  }
  return { ...(jwk ? { jwk } : {}), ...(v.address ? { address: v.address } : {}) };
}

function account(wallet: `0x${string}` | LocalAccount): LocalAccount {
  if (typeof wallet === 'string') {
    if (!/^0x[0-9a-fA-F]{64}$/.test(wallet)) fail('wallet', 'must be a private key (0x + 64 hex digits) or a viem local account');
    return withNativeTypedDataSigning(privateKeyToAccount(wallet), wallet);
  }
  if (typeof wallet?.address !== 'string' || typeof wallet.signTypedData !== 'function') fail('wallet', 'must be a private key (0x + 64 hex digits) or a viem local account');
  return wallet;
}

/**
 * Tokens written as text, `network:address:decimals` comma-separated (`eip155:84532:0x036C…CF7e:6`), as an
 * environment variable gives them; the network has a colon of its own, so the last two fields are split off.
 */
export function parseAssets(text: string): PaymentAsset[] {
  if (text.trim() === '') return [];
  return text.split(',').map((entry, i) => {
    const parts = entry.trim().split(':');
    const decimals = parts.pop();
    const address = parts.pop();
    if (parts.length < 2 || !address || !decimals || !/^\d+$/.test(decimals)) fail(`assets[${i}]`, `${JSON.stringify(entry.trim())} is not network:address:decimals (e.g. eip155:84532:0x036CbD53842c5426634e7929541eC2318f3dCF7e:6)`);
    return asset({ network: parts.join(':'), asset: address, decimals: Number(decimals) }, i);
  });
}

function asset(a: PaymentAsset, i: number): PaymentAsset {
  if (!/^[a-z0-9-]+:[A-Za-z0-9-]+$/.test(a?.network ?? '')) fail(`assets[${i}].network`, `must be a CAIP-2 network such as eip155:8453, got ${JSON.stringify(a?.network)}`);
  // An EVM token's contract, or on a Solana network a mint's address (base58, 32 to 44 characters).
  const solana = a.network.startsWith('solana:');
  if (!(solana ? /^[1-9A-HJ-NP-Za-km-z]{32,44}$/ : /^0x[0-9a-fA-F]{40}$/).test(a.asset ?? '')) {
    fail(`assets[${i}].asset`, `must be a token address (${solana ? "a mint's base58 address" : '0x + 40 hex digits'}), got ${JSON.stringify(a.asset)}`);
  }
  if (!Number.isInteger(a.decimals) || a.decimals < 0 || a.decimals > 36) fail(`assets[${i}].decimals`, `must be an integer from 0 to 36, got ${a.decimals}`);
  return { network: a.network, asset: a.asset, decimals: a.decimals };
}
