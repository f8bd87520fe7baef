// Pure: the provider's token object and the chain's evidence → flags, score, breakdown and coverage.
// score = 100 × Σ(weight × risk) / Σ(weight) over the scored signals the provider and the chain gave,
// then raised to CRITICAL_FLOOR when a critical signal fires, or to CLOSED_SOURCE_FLOOR for an unverified
// contract that is not on the trust list. Absent signals are left out, never guessed.
import { roundTo } from '../analytics/numbers.ts';
import type { ChainFamily } from './chains.ts';
import type { Onchain } from './onchain.ts';
import { CHAIN_SIGNALS } from './onchain-signals.ts';
import { unknownChecks, UNKNOWN_SELL_FLOOR, type UnknownCheck } from './unknown-checks.ts';
import {
  BLIND_SPOTS,
  CLOSED_SOURCE_FLOOR,
  CRITICAL_FLOOR,
  GROUPS,
  maliciousAddresses,
  SIGNALS,
  type BlindSpot,
  type FlagValue,
  type Group,
  type MaliciousAddress,
} from './signals.ts';

export type Flags = Record<Group, Record<string, FlagValue>>;

export interface BreakdownItem {
  signal: string;
  /** Who gave it: the security provider, or the chain's own evidence (onchain-signals.ts). */
  source: 'provider' | 'chain';
  group: Group;
  value: number | boolean;
  weight: number;
  /** 0 (none) to 1 (maximal). */
  risk: number;
  /** Points this signal adds to the score (they sum to the score before any floor). */
  contribution: number;
}

/** A signal the provider gave that is shown but not scored, and why. */
export interface NotScored {
  signal: string;
  value: number | boolean;
  reason: string;
}

/** Checks the provider documents as impossible in a situation this token is in, and that came back missing. */
export interface ChecksNotMade {
  reason: string;
  signals: string[];
}

export interface Assessment {
  score: number | null;
  score_breakdown: {
    signals: BreakdownItem[];
    not_scored: NotScored[];
    /** Checks that count although neither side could make them (whether the token can be sold), at half risk. */
    unknown: (UnknownCheck & { contribution: number })[];
    weight_total: number;
    critical_floor_applied: boolean;
    closed_source_floor_applied: boolean;
    unknown_sell_floor_applied: boolean;
  };
  coverage: { present: number; total: number; ratio: number };
  flags: Flags;
  checks_not_made: ChecksNotMade[];
  malicious_addresses: MaliciousAddress[] | null;
}

export function assess(family: ChainFamily, raw: Record<string, unknown> | null, onchain: Onchain | null = null): Assessment {
  const applicable = SIGNALS.filter((s) => s.read[family]);
  const flags = Object.fromEntries(GROUPS.map((g) => [g, {} as Record<string, FlagValue>])) as Flags;
  const values = new Map<string, FlagValue>();
  const scored: Omit<BreakdownItem, 'contribution'>[] = [];
  const notScored: NotScored[] = [];
  let present = 0;
  let critical = false;

  for (const s of applicable) {
    const value = raw ? s.read[family]!(raw) : null;
    values.set(s.name, value);
    flags[s.group][s.name] = value;
    const details = s.details?.[family];
    if (details) Object.assign(flags[s.group], raw ? details(raw) : nullDetails(details));
    if (value === null) continue;
    present++;
    if (s.weight === 0 || (s.scoredWhen && !s.scoredWhen(value))) continue;
    const explained = s.explainedBy?.(value, raw!);
    if (explained) {
      notScored.push({ signal: s.name, value, reason: explained });
      continue;
    }
    const risk = s.risk ? s.risk(value) : value === true ? 1 : 0;
    if (s.critical && (s.criticalWhen ? s.criticalWhen(value) : risk >= 1)) critical = true;
    scored.push({ signal: s.name, source: 'provider', group: s.group, value, weight: s.weight, risk: roundTo(risk, 4) });
  }
  // The chain's own signals, beside the provider's (booleans: set = risk 1, unless a signal says otherwise);
  // one that stands in for a provider signal counts only when the provider's is missing. Coverage stays the provider's.
  for (const s of CHAIN_SIGNALS) {
    const value = onchain && s.family === family ? s.read(onchain) : null;
    if (value === null || (s.standsInFor !== undefined && values.get(s.standsInFor) != null)) continue;
    if (s.critical && value === true && (s.criticalWhen === undefined || s.criticalWhen(onchain!))) critical = true;
    const risk = s.risk ? s.risk(value, onchain!) : value === true ? 1 : 0;
    scored.push({ signal: s.name, source: 'chain', group: s.group, value, weight: s.weight, risk: roundTo(risk, 4) });
  }

  // A check neither side could make (can the token be sold?) counts as unknown beside what was scored; with
  // nothing scored at all there is no score to raise.
  const unknown = scored.length > 0 ? unknownChecks(family, values, onchain) : [];
  const weightTotal = scored.reduce((sum, s) => sum + s.weight, 0) + unknown.reduce((sum, u) => sum + u.weight, 0);
  const points = (weight: number, risk: number) => (weightTotal ? (100 * weight * risk) / weightTotal : 0);
  const signals = scored.map((s) => ({ ...s, contribution: roundTo(points(s.weight, s.risk), 2) }));
  const unknownItems = unknown.map((u) => ({ ...u, contribution: roundTo(points(u.weight, u.risk), 2) }));
  const weighted = weightTotal > 0 ? Math.round([...scored, ...unknown].reduce((sum, s) => sum + points(s.weight, s.risk), 0)) : null;
  // An unverified contract hides most of what the other checks would find: not a low score unless trusted.
  const closedSource = values.get('closed_source') === true && values.get('trusted') !== true;
  // A token that may not be sellable is not a low risk because the check could not run (unless the provider
  // lists it as trusted, as for the closed-source floor).
  const unknownSell = unknown.length > 0 && values.get('trusted') !== true;
  const floor = critical ? CRITICAL_FLOOR : closedSource || unknownSell ? Math.max(closedSource ? CLOSED_SOURCE_FLOOR : 0, unknownSell ? UNKNOWN_SELL_FLOOR : 0) : null;
  const floorApplied = floor !== null && weighted !== null && weighted < floor;

  return {
    score: floorApplied ? floor : weighted,
    score_breakdown: {
      signals,
      not_scored: notScored,
      unknown: unknownItems,
      weight_total: weightTotal,
      critical_floor_applied: floorApplied && critical,
      closed_source_floor_applied: floorApplied && !critical && closedSource,
      unknown_sell_floor_applied: floorApplied && !critical && unknownSell,
    },
    coverage: { present, total: applicable.length, ratio: roundTo(applicable.length ? present / applicable.length : 0, 4) },
    flags,
    checks_not_made: checksNotMade(applicable, values),
    malicious_addresses: raw && family === 'solana' ? maliciousAddresses(raw) : null,
  };
}

/** For each blind spot this token is in, the applicable checks it voids that indeed came back missing. */
function checksNotMade(applicable: typeof SIGNALS, values: Map<string, FlagValue>): ChecksNotMade[] {
  return (Object.keys(BLIND_SPOTS) as BlindSpot[]).flatMap((spot) => {
    const { signal, value, reason } = BLIND_SPOTS[spot];
    if (values.get(signal) !== value) return [];
    const missing = applicable.filter((s) => s.blindWhen === spot && values.get(s.name) === null).map((s) => s.name);
    return missing.length ? [{ reason, signals: missing }] : [];
  });
}

/** A detail reader's keys with null values (no provider object to read). */
const nullDetails = (details: (raw: Record<string, unknown>) => Record<string, FlagValue>) =>
  Object.fromEntries(Object.keys(details({})).map((k) => [k, null]));

