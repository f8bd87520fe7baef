// Solana JSON-RPC (`rpc:solana`): a token mint's account, read with getAccountInfo in the node's parsed
// form (encoding jsonParsed), for the token risk check; beside it, in parallel, the mint's 10 largest holders
// and its Metaplex metadata account (solana-mint-extras.ts), whose failures leave their fields null.
// POST {RPC_URL_SOLANA} {"jsonrpc":"2.0","id":1,"method":"getAccountInfo","params":[mint,{"encoding":"jsonParsed","commitment":"confirmed"}]}
// The node parses accounts of the SPL Token and Token-2022 programs (Agave's account-decoder): a mint is
// `data.parsed = { type: "mint", info: { mintAuthority, freezeAuthority, supply, decimals, isInitialized,
// extensions? } }`, each Token-2022 extension `{ extension: "<name>", state?: {...} }` in camelCase.
// Quirk: u64 fields (maximumFee, withheldAmount, rentEpoch) arrive as JSON numbers, which JSON.parse would
// round above 2^53; the body is read as text and such integers are kept as digits.
import { z } from 'zod';
import { env } from '../lib/env.ts';
import { JSON_RPC } from '../upstream/json-rpc.ts';
import type { Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { TOKEN_EVIDENCE_ENV, untilDeadline } from './token-evidence-env.ts';
import { UpstreamError } from '../lib/errors.ts';
import { largestAccountsAnswer, metadataAccountAnswer, metadataAddress, metadataMutable, top10Pct } from './solana-mint-extras.ts';

export const SOLANA_PROGRAMS = {
  'spl-token': 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'spl-token-2022': 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
} as const;
export type TokenProgram = keyof typeof SOLANA_PROGRAMS;

/** The Token-2022 extensions that matter to a holder; on an SPL Token mint (no extensions) each is off. */
export interface MintExtensions {
  /** The extension names the node listed, as it spells them. */
  present: string[];
  /** The transfer fee in basis points from `transfer_fee_epoch` on (newerTransferFee); 0 when the mint has none. */
  transfer_fee_bps: number;
  /** The most one transfer can be charged, in the token's smallest unit; null when the mint has no transfer fee. */
  transfer_fee_max: string | null;
  transfer_fee_epoch: number | null;
  /** The fee before that epoch (olderTransferFee). */
  transfer_fee_older_bps: number | null;
  /** Who can change the fee; null when nobody can (or there is no fee). */
  transfer_fee_authority: string | null;
  /** An address that can move or burn anyone's tokens. */
  permanent_delegate: string | null;
  /** The program every transfer calls. */
  transfer_hook: string | null;
  non_transferable: boolean;
  /** New token accounts start frozen. */
  default_state_frozen: boolean;
  /** Token-2022 pausable: an authority can stop every transfer (or transfers are paused now). */
  pausable: boolean;
}

export interface SolanaMintEvidence {
  /** The slot the mint's account was read at (the answer's context.slot): Solana's block_number. */
  block_number: number;
  mint_authority: string | null;
  freeze_authority: string | null;
  /** In the token's smallest unit. */
  supply: string;
  decimals: number;
  token_program: TokenProgram;
  extensions: MintExtensions;
  /** Percent of supply in the 10 largest token accounts (pools' vaults included); null when it could not be read. */
  top10_pct: number | null;
  /** Whether name and symbol can still change: Metaplex metadata mutable with a live update authority, or a
   * Token-2022 tokenMetadata extension with an update authority; null when no metadata could be read. */
  metadata_mutable: boolean | null;
}

/** A mint's evidence, or why the account read is not one (no account, another kind of account). */
export type MintRead = { mint: SolanaMintEvidence } | { unavailable: string };

/** JSON strings, or integers of 16 digits or more (not part of a fraction or an exponent). */
const STRING_OR_BIG_INTEGER = /"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])\d{16,}(?![\d.eE])/g;

/** Integers of 16 digits or more, outside strings, become strings before parsing (see the top of this file). */
export const keepBigIntegers = (text: string) => text.replace(STRING_OR_BIG_INTEGER, (m) => (m.startsWith('"') ? m : `"${m}"`));

/** The body parsed, or undefined when it is not JSON. */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(keepBigIntegers(text));
  } catch {
    return undefined;
  }
};

/** JSON-RPC errors and rate limits, read from the text body; a body that is not JSON says what it is instead. */
const SOLANA_PROTOCOL: Protocol = {
  classify(body, status) {
    const text = String(body);
    const parsed = parseJson(text);
    if (parsed === undefined) {
      if (status < 200 || status >= 300) return undefined; // the status says what went wrong
      const head = text.trimStart().slice(0, 15).toLowerCase();
      const html = head.startsWith('<!doctype') || head.startsWith('<html');
      return { kind: 'provider_error', detail: html ? 'returned HTML instead of JSON' : `returned a body that is not valid JSON${text === '' ? ' (empty)' : ''}` };
    }
    return JSON_RPC.classify(parsed, status);
  },
};

const u64 = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]).transform(String);
const address = z.string().min(32).max(44);
const transferFee = z.object({ epoch: u64, maximumFee: u64, transferFeeBasisPoints: z.number().int().min(0).max(10_000) });
const extensionSchema = z.object({ extension: z.string(), state: z.record(z.string(), z.unknown()).optional() });
const mintInfo = z.object({
  mintAuthority: address.nullable(),
  freezeAuthority: address.nullable(),
  supply: z.string().regex(/^\d+$/),
  decimals: z.number().int().min(0).max(255),
  isInitialized: z.boolean(),
  extensions: z.array(extensionSchema).optional(),
});
const parsedData = z.object({ program: z.string(), parsed: z.object({ type: z.string(), info: z.unknown() }) });
const answer = z.object({
  jsonrpc: z.literal('2.0'),
  result: z.object({
    context: z.object({ slot: u64 }),
    value: z.object({ owner: z.string(), data: z.union([parsedData, z.array(z.string()), z.string()]) }).nullable(),
  }),
});

const stateOf = (exts: z.output<typeof extensionSchema>[], name: string) => exts.find((e) => e.extension === name);
const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

function extensionsOf(exts: z.output<typeof extensionSchema>[]): MintExtensions {
  const feeConfig = stateOf(exts, 'transferFeeConfig')?.state;
  const newer = feeConfig ? transferFee.parse(feeConfig.newerTransferFee) : null;
  const older = feeConfig ? transferFee.parse(feeConfig.olderTransferFee) : null;
  return {
    present: exts.map((e) => e.extension),
    transfer_fee_bps: newer?.transferFeeBasisPoints ?? 0,
    transfer_fee_max: newer?.maximumFee ?? null,
    transfer_fee_epoch: newer ? Number(newer.epoch) : null,
    transfer_fee_older_bps: older?.transferFeeBasisPoints ?? null,
    transfer_fee_authority: text(feeConfig?.transferFeeConfigAuthority),
    permanent_delegate: text(stateOf(exts, 'permanentDelegate')?.state?.delegate),
    transfer_hook: text(stateOf(exts, 'transferHook')?.state?.programId),
    non_transferable: stateOf(exts, 'nonTransferable') !== undefined,
    default_state_frozen: stateOf(exts, 'defaultAccountState')?.state?.accountState === 'frozen',
    // Agave's account-decoder: { extension: "pausableConfig", state: { authority, paused } }.
    pausable: (() => {
      const p = stateOf(exts, 'pausableConfig')?.state;
      return p !== undefined && (text(p.authority) !== null || p.paused === true);
    })(),
  };
}

/** The node's answer → the mint's evidence, or what the account is instead. Throws (a schema error) on a malformed mint. */
export function readMint(value: z.output<typeof answer>['result']['value'], slot: string): MintRead {
  if (value === null) return { unavailable: 'the chain has no account at this address' };
  const program = Object.entries(SOLANA_PROGRAMS).find(([, id]) => id === value.owner)?.[0] as TokenProgram | undefined;
  if (typeof value.data !== 'object' || Array.isArray(value.data) || program === undefined || value.data.parsed.type !== 'mint') {
    const what = typeof value.data === 'object' && !Array.isArray(value.data) ? `${value.data.program} '${value.data.parsed.type}' account` : `account of the program ${value.owner}`;
    return { unavailable: `the address is not a token mint (it is a ${what})` };
  }
  const info = mintInfo.parse(value.data.parsed.info);
  return {
    mint: {
      block_number: Number(slot),
      mint_authority: info.mintAuthority,
      freeze_authority: info.freezeAuthority,
      supply: info.supply,
      decimals: info.decimals,
      token_program: program,
      extensions: extensionsOf(info.extensions ?? []),
      top10_pct: null,
      // A Token-2022 mint's own metadata: changeable while it names an update authority.
      metadata_mutable: stateOf(info.extensions ?? [], 'tokenMetadata') ? text(stateOf(info.extensions ?? [], 'tokenMetadata')!.state?.updateAuthority) !== null : null,
    },
  };
}

export interface SolanaRpcSettings {
  baseUrl: string;
  evidenceTtlS: number;
}

function createSolanaRpc(ctx: SourceContext<SolanaRpcSettings>) {
  const { baseUrl, evidenceTtlS } = ctx.settings;
  // The answer is read into evidence by the schema, so the cache keeps (and serves) the evidence object itself.
  const schema = z
    .string()
    .transform((body) => parseJson(body))
    .pipe(
      answer.transform((a, check) => {
        try {
          return readMint(a.result.value, a.result.context.slot);
        } catch (err) {
          // A mint whose fields are not the documented shape: the answer is malformed, not a mint we guess at.
          const issue = err instanceof z.ZodError ? err.issues[0] : undefined;
          check.addIssue({ code: 'custom', message: 'not the documented mint shape', path: ['result', 'value', 'data', 'parsed', 'info', ...(issue?.path ?? [])] });
          return z.NEVER;
        }
      }),
    );
  return {
    /** A mint's account, read by `deadlineAt` (epoch ms; default: UPSTREAM_DEADLINE_MS from now); cached CACHE_TTL_TOKEN_ONCHAIN_S. */
    async mint(mint: string, deadlineAt?: number): Promise<Sourced<MintRead>> {
      const remaining = deadlineAt === undefined ? () => undefined : untilDeadline(ctx.name, deadlineAt);
      const call = <S extends z.ZodType>(method: string, params: unknown[], answerSchema: S) =>
        ctx
          .fetch({
            url: baseUrl,
            method: 'POST',
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
            idempotent: true,
            format: 'text',
            protocol: SOLANA_PROTOCOL,
            schema: answerSchema,
            ttlS: 0,
            deadlineMs: remaining(),
          })
          .then((r) => r.data as z.output<S>);
      const res = await ctx.compute(
        `mint ${mint}`,
        evidenceTtlS,
        async () => {
          const options = { commitment: 'confirmed' };
          const [read, largest, metadata] = await Promise.all([
            call('getAccountInfo', [mint, { encoding: 'jsonParsed', ...options }], schema),
            optional(call('getTokenLargestAccounts', [mint, options], z.string().transform(parseJson).pipe(largestAccountsAnswer))),
            optional(call('getAccountInfo', [metadataAddress(mint), { encoding: 'base64', ...options }], z.string().transform(parseJson).pipe(metadataAccountAnswer))),
          ]);
          if (!('mint' in read)) return read;
          const top10 = largest === null ? null : top10Pct(largest.result.value.map((a) => a.amount), read.mint.supply);
          return { mint: { ...read.mint, top10_pct: top10, metadata_mutable: read.mint.metadata_mutable ?? (metadata === null ? null : metadataMutable(metadata.result.value)) } };
        },
        remaining(),
      );
      return { data: res.data, meta: res.meta };
    },
  };
}

/** A read beside the mint's own whose failure (the node's error, a timeout) leaves its field null, not the mint's evidence. */
const optional = <T>(p: Promise<T>): Promise<T | null> => p.catch((err: unknown) => (err instanceof UpstreamError ? null : Promise.reject(err)));

export type SolanaRpc = ReturnType<typeof createSolanaRpc>;

export const solanaRpcSource = defineSource({
  key: 'rpcSolana',
  name: 'rpc:solana',
  title: 'Solana JSON-RPC',
  docs: 'https://solana.com/docs/rpc/http/getaccountinfo',
  notes:
    'Default https://api.mainnet-beta.solana.com (solana.com/docs/references/clusters: the public mainnet endpoint, rate limited, not for production); ' +
    "set RPC_URL_SOLANA to your own node or provider. getAccountInfo (jsonParsed) for a mint's authorities, supply and Token-2022 extensions; getTokenLargestAccounts for its 10 largest holders; getAccountInfo (base64) of its Metaplex metadata account for whether that metadata can change.",
  env: {
    RPC_URL_SOLANA: env.url('https://api.mainnet-beta.solana.com', 'JSON-RPC endpoint of Solana mainnet (token mints for the risk check).'),
    ...TOKEN_EVIDENCE_ENV,
  },
  settings: (e) => ({ baseUrl: e.RPC_URL_SOLANA, evidenceTtlS: e.CACHE_TTL_TOKEN_ONCHAIN_S }),
  create: createSolanaRpc,
});
