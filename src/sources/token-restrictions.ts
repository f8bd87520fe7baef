// Trading restrictions and real holders' sells, read by simulation (issue 38), after the buy-transfer-sell
// simulation (evm-token-evidence.ts) and pinned to the block it ran in. Two more rounds of batched reads:
//   round 2: the token's recent Transfer logs (their recipients are the holder candidates, alone in their
//            request: a popular token's logs are large), the taxes again in a later block (eth_simulateV1) and
//            the cooldown check (two later blocks, eth_simulateV1);
//   round 3: the limits (bisection) and the 3 largest holders' sells, the simulator placed at the candidates,
//            as soon as the logs are in; the later taxes by eth_call's block override when the node had no
//            eth_simulateV1, as soon as it said so.
// Every value that could not be read is null, and its reason is a gap ({ signal, reason }).
import { UpstreamError } from '../lib/errors.ts';
import { env } from '../lib/env.ts';
import { callWithBlockParams, readSimulateV1, simulateV1Params, type BlockOverrideMethod, type LaterBlock } from './block-override.ts';
import type { RpcAnswer, RpcCall } from './evm-abi.ts';
import {
  cooldownCalls,
  decodeBool,
  decodeHolderSells,
  decodeLimits,
  decodeSimulateLater,
  holderSellsCall,
  limitsCall,
  restrictionOverrides,
  simulateLaterCall,
  type Limits,
  type Market,
} from './token-restrictions-abi.ts';
import { SIMULATOR, taxPct, type SimulationResult } from './token-simulator.ts';

export const RESTRICTION_ENV = {
  RISK_SIM_LATER_BLOCKS: env.int(1, 1_000_000, 300, 'Blocks the token risk check moves the chain forward (with one hour) to simulate the taxes again: a tax raised after launch shows in `tax_later`.'),
  RISK_HOLDER_LOG_BLOCKS: env.int(1, 100_000, 1000, "Recent blocks whose Transfer logs the token risk check reads to find a token's largest holders (their sells are simulated)."),
} as const;

export interface RestrictionSettings {
  laterBlocks: number;
  logBlocks: number;
}

/** One hour: how far the later block's timestamp moves. */
export const LATER_S = 3600;
/** Holder candidates given to the simulator: the largest recipients in the logs. */
export const HOLDER_CANDIDATES = 12;
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface Gap {
  signal: string;
  reason: string;
}

export interface TaxLater {
  buy_tax_pct: number | null;
  sell_tax_pct: number | null;
  /** Whether the later sell went through; null when it could not be tried. */
  sell_ok: boolean | null;
  after_blocks: number;
  after_s: number;
  /** How the block was moved forward. */
  block_override: BlockOverrideMethod;
}

export interface Restrictions {
  trading_enabled: boolean | null;
  max_tx: { buy_tokens: string | null; sell_tokens: string | null; pct_supply: number | null } | null;
  max_wallet: { tokens: string; pct_supply: number | null } | null;
  cooldown: boolean | null;
  tax_later: TaxLater | null;
  holders_sell_ok: number | null;
  holders_tried: number | null;
  inputs: { router: string; path: string[]; amount_in: string; from: string };
}

export interface RestrictionInput {
  market: Market;
  /** The block the first round ran in, and its timestamp. */
  block: LaterBlock;
  /** The first simulation's figures. */
  first: SimulationResult;
  owner: string | null;
  code: string;
  settings: RestrictionSettings;
}

/** `amount` as a percentage of `supply`, to 0.0001. */
const pctOf = (amount: bigint, supply: bigint) => (supply > 0n ? Math.round(Number((amount * 100_000_000n) / supply) / 100) / 10_000 : null);
const resultOf = (a: RpcAnswer): string | null => ('result' in a && typeof a.result === 'string' ? a.result : null);
const errorOf = (a: RpcAnswer) => ('error' in a ? a.error.message : 'no result');

/** The restrictions and the gaps in them. Never rejects for one read's failure: that read's fields are null with the reason. */
export async function readRestrictions(rpc: RpcCall, input: RestrictionInput): Promise<{ restrictions: Restrictions; gaps: Gap[] }> {
  const { market, block, first, owner, code, settings } = input;
  const gaps: Gap[] = [];
  const gap = (signal: string, reason: string) => gaps.push({ signal, reason });
  const overrides = restrictionOverrides(code);
  const later: LaterBlock = { number: block.number + BigInt(settings.laterBlocks), time: block.time + BigInt(LATER_S) };
  const soft = (p: Promise<RpcAnswer>) => p.catch((err: unknown): RpcAnswer => ({ error: { code: 0, message: err instanceof UpstreamError ? err.message : String(err) } }));

  // Round 2: the logs (alone), the later block and the cooldown blocks.
  const fromBlock = block.number >= BigInt(settings.logBlocks) ? block.number - BigInt(settings.logBlocks) + 1n : 0n;
  const logsAnswer = soft(rpc('eth_getLogs', [{ address: market.token, topics: [TRANSFER_TOPIC], fromBlock: hex(fromBlock), toBlock: hex(block.number) }], { alone: true }));
  const laterV1Answer = soft(rpc('eth_simulateV1', simulateV1Params([{ block: later, call: simulateLaterCall(market) }], overrides, block.number)));
  const cooldownAnswer = soft(rpc('eth_simulateV1', simulateV1Params(cooldownBlocks(block, market), overrides, block.number)));

  // Round 3, each part as soon as what it needs is in: the limits and the holders' sells after the logs (the
  // pair, the router, the token and the wrapped coin are no holders to place code at: a swap needs theirs);
  // the later block by eth_call after an eth_simulateV1 that did not run.
  const sellAmount = first.buyReceived;
  const notHolders = new Set([first.pair, market.router, market.token, market.wrappedNative].map((a) => a.toLowerCase()));
  const afterLogs = logsAnswer.then(async (logs) => {
    const candidates = holderCandidates(logs, gap, settings.logBlocks)?.filter((a) => !notHolders.has(a)) ?? null;
    const withCandidates = restrictionOverrides(code, candidates ?? []);
    const [limitsAnswer, holdersAnswer] = await Promise.all([
      soft(rpc('eth_call', [limitsCall(market, candidates ?? []), hex(block.number), withCandidates])),
      candidates !== null && candidates.length > 0 && sellAmount > 0n
        ? soft(rpc('eth_call', [holderSellsCall(market, candidates, owner ?? '0x0000000000000000000000000000000000000000', sellAmount), hex(block.number), withCandidates]))
        : null,
    ]);
    return { candidates, limitsAnswer, holdersAnswer };
  });
  const afterLater = laterV1Answer.then(async (answer) => {
    const v1Later = 'result' in answer ? readSimulateV1(answer.result, 1) : null;
    const callLater = v1Later === null ? await soft(rpc('eth_call', callWithBlockParams(simulateLaterCall(market), overrides, block.number, later))) : null;
    return { v1Later, callLater };
  });
  const [{ candidates, limitsAnswer, holdersAnswer }, { v1Later, callLater }, cooldownV1] = await Promise.all([afterLogs, afterLater, cooldownAnswer]);

  const limits = 'result' in limitsAnswer && typeof limitsAnswer.result === 'string' ? decodeLimits(limitsAnswer.result) : null;
  if (limits === null) for (const signal of ['max_tx', 'max_wallet']) gap(signal, `the limits simulation could not run: ${errorOf(limitsAnswer)}`);
  const bought = first.failedStep !== 'quote' && first.failedStep !== 'buy';
  const tradingEnabled = bought || (limits !== null && limits.maxBuy > 0n) ? true : first.failedStep === 'buy' ? false : null;
  if (tradingEnabled === null) gap('trading_enabled', 'the router could not quote a buy, so none was tried');

  const holders = holdersAnswer === null ? null : resultOf(holdersAnswer) === null ? null : decodeHolderSells(resultOf(holdersAnswer)!);
  if (candidates !== null && holders === null) {
    gap('holders_sell', holdersAnswer === null ? (sellAmount === 0n ? 'no buy went through to size the holders’ sells' : `no Transfer to a holder in the last ${settings.logBlocks} blocks`) : `the holders’ sells could not be simulated: ${errorOf(holdersAnswer)}`);
  }
  if (holders !== null && holders.length === 0) gap('holders_sell', 'no holder in the recent Transfer logs but the pair, the owner and burn addresses');
  const restrictions: Restrictions = {
    trading_enabled: tradingEnabled,
    max_tx: limits === null ? null : maxTx(limits, gap, candidates !== null),
    max_wallet: limits === null ? null : maxWallet(limits, gap),
    cooldown: cooldown(cooldownV1, gap),
    tax_later: taxLater(v1Later, callLater, later, settings, gap),
    holders_sell_ok: holders === null || holders.length === 0 ? null : holders.filter((h) => h.ok).length,
    holders_tried: holders === null ? (candidates !== null && candidates.length === 0 ? 0 : null) : holders.length,
    inputs: { router: market.router.toLowerCase(), path: [market.wrappedNative.toLowerCase(), market.token.toLowerCase()], amount_in: first.buyIn.toString(), from: SIMULATOR.buyer },
  };
  return { restrictions, gaps };
}

const hex = (n: bigint) => `0x${n.toString(16)}`;

/** The restrictions when they could not be simulated at all: every field null, each signal a gap with `reason`. */
export function noRestrictions(market: Market, first: SimulationResult, reason: string): { restrictions: Restrictions; gaps: Gap[] } {
  const bought = first.failedStep !== 'quote' && first.failedStep !== 'buy';
  return {
    restrictions: {
      trading_enabled: bought ? true : first.failedStep === 'buy' ? false : null,
      max_tx: null,
      max_wallet: null,
      cooldown: null,
      tax_later: null,
      holders_sell_ok: null,
      holders_tried: null,
      inputs: { router: market.router.toLowerCase(), path: [market.wrappedNative.toLowerCase(), market.token.toLowerCase()], amount_in: first.buyIn.toString(), from: SIMULATOR.buyer },
    },
    gaps: ['max_tx', 'max_wallet', 'cooldown', 'tax_later', 'holders_sell'].map((signal) => ({ signal, reason })),
  };
}

/** The cooldown check's two blocks: one block and one second after the latest, then one more of each. */
function cooldownBlocks(block: LaterBlock, market: Market) {
  const [firstSell, secondSell] = cooldownCalls(market);
  return [
    { block: { number: block.number + 1n, time: block.time + 1n }, call: firstSell },
    { block: { number: block.number + 2n, time: block.time + 2n }, call: secondSell },
  ];
}

/** The recipients of the logs' transfers, the largest received first (the zero address left out); null when the logs could not be read. */
function holderCandidates(logs: RpcAnswer, gap: (s: string, r: string) => void, logBlocks: number): string[] | null {
  if (!('result' in logs) || !Array.isArray(logs.result)) {
    gap('holders_sell', `the token's Transfer logs of the last ${logBlocks} blocks could not be read: ${errorOf(logs)}`);
    return null;
  }
  const received = new Map<string, bigint>();
  for (const log of logs.result as { topics?: unknown; data?: unknown }[]) {
    const topics = Array.isArray(log?.topics) ? (log.topics as unknown[]) : [];
    const to = typeof topics[2] === 'string' && /^0x0{24}[0-9a-fA-F]{40}$/.test(topics[2]) ? `0x${topics[2].slice(26).toLowerCase()}` : null;
    if (to === null || /^0x0{40}$/.test(to)) continue;
    const value = typeof log.data === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(log.data) ? BigInt(log.data) : 0n;
    received.set(to, (received.get(to) ?? 0n) + value);
  }
  return [...received.entries()].sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0)).slice(0, HOLDER_CANDIDATES).map(([a]) => a);
}

function maxTx(l: Limits, gap: (s: string, r: string) => void, logsRead: boolean): Restrictions['max_tx'] {
  if (l.depth === 0n) {
    gap('max_tx', 'the pair holds too little of the token to try trades of different sizes');
    return null;
  }
  const buy = l.maxBuy > 0n && l.maxBuy < l.depth ? l.maxBuy : null;
  let sell: bigint | null = null;
  if (l.sellCeiling === 0n) gap('max_tx_sell', logsRead ? 'no holder found in the recent Transfer logs to fund sells of different sizes' : 'the Transfer logs could not be read: no holder to fund sells of different sizes');
  else if (l.sellUnfunded) gap('max_tx_sell', 'the largest holder could not move tokens to the seller (a transfer limit or a wallet limit): sells of every size could not be tried');
  else if (l.maxSell > 0n && l.maxSell < l.sellCeiling) sell = l.maxSell;
  if (buy === null && sell === null) return null;
  const binding = buy === null ? sell! : sell === null ? buy : buy < sell ? buy : sell;
  return { buy_tokens: buy?.toString() ?? null, sell_tokens: sell?.toString() ?? null, pct_supply: pctOf(binding, l.supply) };
}

function maxWallet(l: Limits, gap: (s: string, r: string) => void): Restrictions['max_wallet'] {
  if (l.maxBuy === 0n) {
    if (l.depth > 0n) gap('max_wallet', 'no buy went through, so no holding could be built');
    return null;
  }
  return l.walletLimited ? { tokens: l.maxWallet.toString(), pct_supply: pctOf(l.maxWallet, l.supply) } : null;
}

function cooldown(answer: RpcAnswer, gap: (s: string, r: string) => void): boolean | null {
  const calls = 'result' in answer ? readSimulateV1(answer.result, 2) : null;
  if (calls === null) {
    gap('cooldown', `a sell in a later block needs eth_simulateV1, which the node did not run (${errorOf(answer)})`);
    return null;
  }
  const firstOk = calls[0]!.ok ? decodeBool(calls[0]!.returnData) : false;
  if (firstOk !== true) {
    gap('cooldown', 'the first sell did not go through, so a second one says nothing');
    return null;
  }
  const secondOk = calls[1]!.ok ? decodeBool(calls[1]!.returnData) : false;
  return secondOk === null ? null : !secondOk;
}

function taxLater(
  v1: ReturnType<typeof readSimulateV1>,
  callAnswer: RpcAnswer | null,
  later: LaterBlock,
  settings: RestrictionSettings,
  gap: (s: string, r: string) => void,
): TaxLater | null {
  const method: BlockOverrideMethod = v1 !== null ? 'eth_simulateV1' : 'eth_call';
  const data = v1 !== null ? (v1[0]!.ok ? v1[0]!.returnData : null) : callAnswer !== null ? resultOf(callAnswer) : null;
  const decoded = data === null ? null : decodeSimulateLater(data);
  if (decoded === null) {
    gap('tax_later', `the node ran neither eth_simulateV1 nor eth_call with a block override${callAnswer !== null ? ` (${errorOf(callAnswer)})` : ''}`);
    return null;
  }
  if (decoded.number !== later.number || decoded.time !== later.time) {
    gap('tax_later', `the node ignored ${method}'s block override (the call ran in block ${decoded.number}, not ${later.number})`);
    return null;
  }
  const r = decoded.result;
  const bought = r.failedStep !== 'quote' && r.failedStep !== 'buy' && r.buyIn > 0n;
  return {
    buy_tax_pct: bought ? taxPct(r.buyExpected, r.buyReceived) : null,
    sell_tax_pct: r.sellOk ? taxPct(r.sellExpected, r.sellReceived) : null,
    sell_ok: bought && r.sellIn > 0n ? r.sellOk : null,
    after_blocks: settings.laterBlocks,
    after_s: LATER_S,
    block_override: method,
  };
}
