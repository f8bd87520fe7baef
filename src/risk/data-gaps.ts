// data.data_gaps: every signal that neither the provider nor the chain could determine, with why. A provider
// signal missing from GoPlus's answer is a gap unless the chain determined the same fact (a simulated sell
// stands for is_honeypot, say); a chain-only signal is a gap when the chain could not read it (the reason is
// the chain's own: the evidence's gaps, why the simulation did not run, or why the chain could not be read).
import type { ChainFamily } from './chains.ts';
import { isEvmOnchain, type EvmOnchain, type Onchain } from './onchain.ts';
import { simulatedSellBlocked } from './onchain-signals.ts';
import type { FlagValue } from './provider-readers.ts';
import { BLIND_SPOTS, SIGNALS } from './signals.ts';

export interface DataGap {
  signal: string;
  reason: string;
}

/** The chain field that determines the same fact as a provider signal (EVM), and whether it did. */
const EVM_COUNTERPARTS: Record<string, { field: string; known: (o: EvmOnchain) => boolean }> = {
  is_honeypot: { field: 'sell', known: (o) => simulatedSellBlocked(o) !== null },
  cannot_buy: { field: 'trading_enabled', known: (o) => o.simulation?.trading_enabled != null },
  trading_cooldown: { field: 'cooldown', known: (o) => o.simulation?.cooldown != null },
  buy_tax: { field: 'buy_tax', known: (o) => o.simulation?.buy_tax_pct != null },
  sell_tax: { field: 'sell_tax', known: (o) => o.simulation?.sell_tax_pct != null },
  proxy: { field: 'proxy', known: (o) => o.has_code },
};
/** Solana: the mint's account read determines these whenever it was read. */
const SOLANA_COUNTERPARTS = new Set(['mintable', 'freezable', 'non_transferable', 'default_account_frozen', 'transfer_hook', 'transfer_fee']);
/** The chain's own EVM signals, with no provider counterpart. */
const EVM_CHAIN_ONLY = ['max_tx', 'max_tx_sell', 'max_wallet', 'tax_later', 'holders_sell'] as const;

export interface GapInput {
  family: ChainFamily;
  raw: Record<string, unknown> | null;
  /** The provider signals' values as the assessment read them. */
  flags: Record<string, Record<string, FlagValue>>;
  onchain: Onchain | null;
  onchainUnavailable: string | null;
}

export function dataGaps({ family, raw, flags, onchain, onchainUnavailable }: GapInput): DataGap[] {
  const evm = onchain !== null && isEvmOnchain(onchain) ? onchain : null;
  const values = new Map(Object.values(flags).flatMap((g) => Object.entries(g)));
  const chainReason = (field: string): string => {
    if (onchain === null) return onchainUnavailable ?? 'the chain was not read';
    if (evm === null) return 'the chain does not show it';
    const own = evm.gaps.find((g) => g.signal === field);
    if (own) return own.reason;
    if (evm.simulation === null) return evm.simulation_unavailable ?? 'no simulation ran';
    return field === 'sell' ? 'the simulation tried no sell (the buy failed or gave nothing)' : 'the simulation could not determine it';
  };
  const providerReason = (signal: string): string => {
    if (raw === null) return 'GoPlus has no data for this token';
    const blindWhen = SIGNALS.find((s) => s.name === signal)?.blindWhen;
    const spot = blindWhen === undefined ? undefined : BLIND_SPOTS[blindWhen];
    return spot !== undefined && values.get(spot.signal) === spot.value ? `GoPlus gave no value (${spot.reason})` : 'GoPlus gave no value';
  };

  const gaps: DataGap[] = [];
  for (const s of SIGNALS) {
    if (!s.read[family] || s.weight === 0 || s.scoredWhen || values.get(s.name) != null) continue;
    if (family === 'evm') {
      const counterpart = EVM_COUNTERPARTS[s.name];
      if (counterpart && evm !== null && counterpart.known(evm)) continue;
      gaps.push({ signal: s.name, reason: counterpart ? `${providerReason(s.name)}; the chain: ${chainReason(counterpart.field)}` : providerReason(s.name) });
    } else {
      if (SOLANA_COUNTERPARTS.has(s.name) && onchain !== null) continue;
      gaps.push({ signal: s.name, reason: providerReason(s.name) });
    }
  }
  if (family === 'evm') {
    for (const field of EVM_CHAIN_ONLY) {
      const unknown = evm === null || evm.simulation === null || evm.gaps.some((g) => g.signal === field);
      if (unknown) gaps.push({ signal: field, reason: chainReason(field) });
    }
  }
  return gaps;
}
