// The chain's own signals, and where the chain and the provider disagree. The chain's reading is scored
// only where the provider's word cannot stand in for it: a simulated sell that fails (honeypot evidence
// even when the provider says otherwise, and critical), an upgradeable proxy with a live admin, and a live
// Solana mint or freeze authority read now. Measured taxes and the other facts replace nothing: they are
// shown in `onchain`, and every disagreement with the provider is listed. README "Scoring model" explains it.
import type { ChainFamily } from './chains.ts';
import { isEvmOnchain, type EvmOnchain, type Onchain, type SolanaOnchain } from './onchain.ts';
import { bit, decimal, defaultAccountFrozen, firstBit, nonEmptyList, solanaTransferFee, status, type FlagValue, type Raw } from './provider-readers.ts';
import type { Group } from './signals.ts';
import { isRenounced } from '../sources/evm-token-evidence.ts';
import { SELL_BLOCKED_TAX_PCT, TAX_TOLERANCE } from './onchain-thresholds.ts';
import { cooldownFound, holdersCannotSell, laterSellBlocked, maxTxFound, maxWalletFound, noHolderCanSell, taxRaisedLater, tradingDisabled } from './restriction-signals.ts';
import { EVIDENCE_SIGNALS, ownerGuard } from './evidence-signals.ts';

export interface ChainSignalDef {
  name: string;
  group: Group;
  family: ChainFamily;
  description: string;
  read: (o: Onchain) => FlagValue;
  weight: number;
  /** When it fires (true), the score is at least CRITICAL_FLOOR. */
  critical?: boolean;
  /** With `critical`: only when this also holds of the evidence. */
  criticalWhen?: (o: Onchain) => boolean;
  /** Risk of a value, 0 to 1 (default: true → 1, false → 0); it may look at the whole evidence. */
  risk?: (v: number | boolean, o: Onchain) => number;
  /** The provider signal this one stands in for: scored only when the provider's came back null. */
  standsInFor?: string;
}

const evm = (read: (o: EvmOnchain) => FlagValue) => (o: Onchain) => (isEvmOnchain(o) ? read(o) : null);
const solana = (read: (o: SolanaOnchain) => FlagValue) => (o: Onchain) => (isEvmOnchain(o) ? null : read(o));

export { SELL_BLOCKED_TAX_PCT, TAX_TOLERANCE } from './onchain-thresholds.ts';

/** Did the simulated sell fail (reverted, or returned nothing)? null when no sell could be tried. */
export const simulatedSellBlocked = (o: EvmOnchain): boolean | null => {
  const s = o.simulation;
  if (s === null || s.sell_ok === null) return null;
  return s.sell_ok === false || (s.sell_tax_pct !== null && s.sell_tax_pct >= SELL_BLOCKED_TAX_PCT);
};

/** An upgradeable proxy whose admin (who can upgrade it) is a live address; null when who can upgrade it is unknown. */
export const liveProxyAdmin = (o: EvmOnchain): boolean | null => {
  if (!o.has_code) return null;
  if (o.proxy === null || !o.proxy.upgradeable) return false;
  return o.proxy.admin === null ? null : !isRenounced(o.proxy.admin);
};

export const CHAIN_SIGNALS: readonly ChainSignalDef[] = [
  {
    name: 'chain_sell_blocked',
    group: 'honeypot',
    family: 'evm',
    description: `A simulated sell through the chain's DEX router reverted or returned nothing (a measured sell tax of ${SELL_BLOCKED_TAX_PCT} % or more); a sell that went through scores 0`,
    read: evm(simulatedSellBlocked),
    weight: 10,
    critical: true,
  },
  {
    name: 'chain_proxy_admin_live',
    group: 'authority',
    family: 'evm',
    description:
      'The contract is an upgradeable proxy (EIP-1967, its beacon, or EIP-1822) whose admin is a live address: its code can be replaced (risk halved when the admin is the owner and a timelock of a day or more)',
    read: evm(liveProxyAdmin),
    weight: 3,
    risk: (v, o) => (v !== true ? 0 : isEvmOnchain(o) && o.proxy?.admin != null && o.proxy.admin === o.owner?.address ? ownerGuard(o) : 1),
  },
  // Trading restrictions, simulated (restriction-signals.ts).
  {
    name: 'chain_holders_cannot_sell',
    group: 'honeypot',
    family: 'evm',
    description: "A sell from one of the token's largest real holders (found in its recent Transfer logs) failed; critical when none of two or more could sell",
    read: evm(holdersCannotSell),
    weight: 8,
    critical: true,
    criticalWhen: (o) => isEvmOnchain(o) && noHolderCanSell(o),
  },
  {
    name: 'chain_tax_raised_later',
    group: 'tax',
    family: 'evm',
    description: `With the block moved forward (tax_later), a tax rose by more than ${TAX_TOLERANCE * 100} percentage point or the sell failed; critical when the later sell fails or keeps ${SELL_BLOCKED_TAX_PCT} % or more`,
    read: evm(taxRaisedLater),
    // Above a tax's own weight (4): a tax raised after launch is a trap laid for the buyers of the launch.
    weight: 6,
    critical: true,
    criticalWhen: (o) => isEvmOnchain(o) && laterSellBlocked(o) === true,
  },
  { name: 'chain_trading_disabled', group: 'honeypot', family: 'evm', description: 'No simulated buy went through (trading_enabled false)', read: evm(tradingDisabled), weight: 3 },
  { name: 'chain_cooldown', group: 'honeypot', family: 'evm', description: 'A second sell one block and one second after a first one failed while the first went through', read: evm(cooldownFound), weight: 2 },
  { name: 'chain_max_tx', group: 'honeypot', family: 'evm', description: "A buy or sell below half the pair's token reserve failed where a smaller one went through (max_tx)", read: evm(maxTxFound), weight: 1 },
  { name: 'chain_max_wallet', group: 'honeypot', family: 'evm', description: "Buys into one wallet stopped going through below half the pair's token reserve (max_wallet)", read: evm(maxWalletFound), weight: 1 },
  {
    name: 'chain_mint_authority_live',
    group: 'authority',
    family: 'solana',
    description: "The mint's account names a mint authority: new supply can be minted",
    read: solana((o) => o.mint_authority !== null),
    weight: 4,
  },
  {
    name: 'chain_freeze_authority_live',
    group: 'authority',
    family: 'solana',
    description: "The mint's account names a freeze authority: holders' token accounts can be frozen",
    read: solana((o) => o.freeze_authority !== null),
    weight: 4,
  },
  ...EVIDENCE_SIGNALS,
];

export interface Disagreement {
  signal: string;
  provider: boolean | number | string;
  chain: boolean | number | string;
}


const fraction = (pct: number | null) => (pct === null ? null : Math.round(pct * 100) / 10_000);

/** What the provider said and what the chain shows, for each fact both report. */
function comparisons(raw: Raw, o: Onchain): [signal: string, provider: FlagValue | string, chain: FlagValue | string, tolerance?: number][] {
  if (isEvmOnchain(o)) {
    const s = o.simulation;
    const bought = s !== null && s.failed_step !== 'quote' && s.failed_step !== 'buy';
    const owner = typeof raw.owner_address === 'string' && raw.owner_address !== '' ? raw.owner_address.toLowerCase() : null;
    return [
      ['is_honeypot', bit('is_honeypot')(raw), simulatedSellBlocked(o)],
      ['cannot_buy', bit('cannot_buy')(raw), s === null ? null : !bought],
      ['buy_tax', decimal(raw.buy_tax), fraction(s?.buy_tax_pct ?? null), TAX_TOLERANCE],
      ['sell_tax', decimal(raw.sell_tax), fraction(s?.sell_tax_pct ?? null), TAX_TOLERANCE],
      ['transfer_tax', decimal(raw.transfer_tax), fraction(s?.transfer_tax_pct ?? null), TAX_TOLERANCE],
      ['proxy', bit('is_proxy')(raw), o.has_code ? o.proxy !== null : null],
      ['owner_address', owner, o.owner?.address ?? null],
    ];
  }
  const fee = Math.max(o.extensions.transfer_fee_bps, o.extensions.transfer_fee_older_bps ?? 0) / 10_000;
  return [
    ['mintable', status('mintable')(raw), o.mint_authority !== null],
    ['freezable', status('freezable')(raw), o.freeze_authority !== null],
    ['non_transferable', firstBit('non_transferable', 'none_transferable')(raw), o.extensions.non_transferable],
    ['default_account_frozen', defaultAccountFrozen(raw), o.extensions.default_state_frozen],
    ['transfer_hook', nonEmptyList('transfer_hook')(raw), o.extensions.transfer_hook !== null],
    // GoPlus's balance_mutable_authority: a power over holders' balances, which Token-2022 grants as a permanent delegate.
    ['owner_can_change_balance', status('balance_mutable_authority')(raw), o.extensions.permanent_delegate !== null],
    ['transfer_fee', solanaTransferFee(raw), fee, 1e-6],
  ];
}

/** Every fact the provider and the chain both report and report differently. */
export function disagreements(family: ChainFamily, raw: Raw | null, onchain: Onchain | null): Disagreement[] {
  if (raw === null || onchain === null || isEvmOnchain(onchain) !== (family === 'evm')) return [];
  return comparisons(raw, onchain).flatMap(([signal, provider, chain, tolerance]) => {
    if (provider === null || chain === null) return [];
    const differ = typeof provider === 'number' && typeof chain === 'number' ? Math.abs(provider - chain) > (tolerance ?? 0) : provider !== chain;
    return differ ? [{ signal, provider, chain }] : [];
  });
}
