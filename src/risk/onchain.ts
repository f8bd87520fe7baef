// The chain's own evidence about a token, beside the provider's: read over the chain's RPC source (an
// EVM chain's `rpc:<chain>`, or `rpc:solana`) within the deadline the provider's call has. A chain that
// cannot be read is not an error of the check: its section is null with the failure named, and its
// `meta.sources` entry says so (`error`).
import { derived, sourceMeta, type SourceMeta } from '../upstream/envelope.ts';
import { stampNow, type Stamp } from '../upstream/cache.ts';
import { UpstreamError } from '../lib/errors.ts';
import { withDeadline } from '../upstream/guard.ts';
import type { EvmTokenEvidence } from '../sources/evm-token-evidence.ts';
import { EVM_RPC_SOURCE_KEYS } from '../sources/evm-rpc.ts';
import type { EvmNetworkName } from '../sources/evm-networks.ts';
import type { Sources } from '../sources/index.ts';
import type { SolanaMintEvidence } from '../sources/solana-rpc.ts';
import type { Chain } from './chains.ts';

export type EvmOnchain = EvmTokenEvidence;
export type SolanaOnchain = SolanaMintEvidence;
export type Onchain = EvmOnchain | SolanaOnchain;

export const isEvmOnchain = (o: Onchain): o is EvmOnchain => 'has_code' in o;

/** The evidence as the answer shows it: its gaps go to `data.data_gaps` (data-gaps.ts), not into `onchain`. */
export function shownOnchain(o: Onchain | null): Onchain | Omit<EvmOnchain, 'gaps'> | null {
  if (o === null || !isEvmOnchain(o)) return o;
  const { gaps: _gaps, ...shown } = o;
  return shown;
}

/** A source entry of `meta.sources` that failed: when it was tried, and why it gave nothing. */
export interface FailedSourceMeta extends SourceMeta {
  error: string;
}

export interface OnchainRead {
  onchain: Onchain | null;
  /** Why `onchain` is null: the read failed (named), or what the address is instead of a token. */
  onchain_unavailable: string | null;
  meta: SourceMeta | FailedSourceMeta;
  /** The cached answer the evidence is, while it is served, or the chain's open breaker (chainDown); null after another failure: what the data derives from. */
  answer: object | null;
}

/** The RPC source a chain's evidence is read from. */
export const onchainSourceName = (chain: Chain) => `rpc:${chain.name}`;

/**
 * The chain's evidence about `address`, its reads bounded by `deadlineAt` (epoch ms, the deadline of the
 * provider's call started at the same moment). Never rejects: a failure is an answer without evidence.
 */
export async function readOnchain(sources: Sources, chain: Chain, address: string, deadlineAt: number): Promise<OnchainRead> {
  const source = onchainSourceName(chain);
  const within = <T>(read: () => Promise<T>) => withDeadline(source, Math.max(1, deadlineAt - Date.now()), read);
  try {
    if (chain.family === 'solana') {
      const { data, meta } = await within(() => sources.rpcSolana.mint(address, deadlineAt));
      // An address that is no mint is an answer about the chain (the RPC answered), not a failure.
      return 'mint' in data
        ? { onchain: data.mint, onchain_unavailable: null, meta, answer: data }
        : { onchain: null, onchain_unavailable: data.unavailable, meta, answer: data };
    }
    const { data, meta } = await within(() => evmRpc(sources, chain).tokenEvidence(address, deadlineAt));
    return { onchain: data, onchain_unavailable: null, meta, answer: data };
  } catch (err) {
    if (err instanceof UpstreamError && err.failure === 'circuit_open') return chainDown(sources, source, err);
    const reason = err instanceof UpstreamError ? err.message : `${source} could not be read (internal error)`;
    return { onchain: null, onchain_unavailable: reason, meta: { ...sourceMeta(source, stampNow(), false), error: reason }, answer: null };
  }
}

/** How long at most the answers without a chain's part are served again while its breaker stays open (ms). */
export const CHAIN_DOWN_REUSE_MS = 10_000;

/** A chain whose breaker is open: when that was found, why, until when it is taken as down, and what answers derive from. */
interface ChainDown {
  answer: object;
  stamp: Stamp;
  reason: string;
  until: number;
}
const chainsDown = new WeakMap<Sources, Map<string, ChainDown>>();

/**
 * The read of a chain whose breaker is open: one answer (an object of its own, with the reason and the time it was
 * found) for as long as the breaker stays open, at most CHAIN_DOWN_REUSE_MS, so the check's data is made once for
 * the provider's answer and served again like any cached answer (answer-memo.ts: its meta says until when), rather
 * than scored, assembled and serialised on every request while the chain is down (issue 34 §5: ten times the CPU of
 * a cached check). Per app (its sources), as the breaker is.
 */
function chainDown(sources: Sources, source: string, err: UpstreamError): OnchainRead {
  let bySource = chainsDown.get(sources);
  if (bySource === undefined) chainsDown.set(sources, (bySource = new Map()));
  const now = Date.now();
  let down = bySource.get(source);
  if (down === undefined || down.until <= now) {
    const until = now + Math.min(CHAIN_DOWN_REUSE_MS, (err.retryAfterS ?? 1) * 1000);
    bySource.set(source, (down = { answer: {}, stamp: stampNow(), reason: err.message, until }));
  }
  const meta = { ...sourceMeta(source, down.stamp, false, now, down.until), error: down.reason };
  return { onchain: null, onchain_unavailable: down.reason, meta, answer: down.answer };
}

function evmRpc(sources: Sources, chain: Chain) {
  return sources[EVM_RPC_SOURCE_KEYS[chain.name as EvmNetworkName]];
}

/** One object per (provider answer, chain answer) pair, alive while both are: what the pair's data derives from. */
const pairs = new WeakMap<object, WeakMap<object, object>>();
function pairOf(provider: object, chainAnswer: object): object {
  let byChain = pairs.get(provider);
  if (byChain === undefined) pairs.set(provider, (byChain = new WeakMap()));
  let pair = byChain.get(chainAnswer);
  if (pair === undefined) byChain.set(chainAnswer, (pair = {}));
  return pair;
}

/**
 * `derived` over two cached answers: the data made once for this provider answer (or its absence) and this
 * chain answer, then the same object while both are served; it goes when either does (nothing accumulates
 * when the provider's answers are not cached).
 */
export function derivedFromBoth<T>(provider: object | null, chainAnswer: object, key: string, build: () => T): T {
  return provider === null ? derived(chainAnswer, `${key} no provider data`, build) : derived(pairOf(provider, chainAnswer), key, build);
}
