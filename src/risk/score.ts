// Pure: the provider's token object → flags, score, breakdown and coverage.
// score = 100 × Σ(weight × risk) / Σ(weight) over the scored signals the provider gave,
// raised to CRITICAL_FLOOR when a critical signal fires. Absent signals are left out, never guessed.
import type { ChainFamily } from './chains.ts';
import { CRITICAL_FLOOR, GROUPS, SIGNALS, type FlagValue, type Group } from './signals.ts';

export type Flags = Record<Group, Record<string, FlagValue>>;

export interface BreakdownItem {
  signal: string;
  group: Group;
  value: number | boolean;
  weight: number;
  /** 0 (none) to 1 (maximal). */
  risk: number;
  /** Points this signal adds to the score (they sum to the score before any floor). */
  contribution: number;
}

export interface Assessment {
  score: number | null;
  score_breakdown: { signals: BreakdownItem[]; weight_total: number; critical_floor_applied: boolean };
  coverage: { present: number; total: number; ratio: number };
  flags: Flags;
}

export function assess(family: ChainFamily, raw: Record<string, unknown> | null): Assessment {
  const applicable = SIGNALS.filter((s) => s.read[family]);
  const flags = Object.fromEntries(GROUPS.map((g) => [g, {} as Record<string, FlagValue>])) as Flags;
  const scored: Omit<BreakdownItem, 'contribution'>[] = [];
  let present = 0;
  let critical = false;

  for (const s of applicable) {
    const value = raw ? s.read[family]!(raw) : null;
    flags[s.group][s.name] = value;
    if (value === null) continue;
    present++;
    if (s.weight === 0 || (s.scoredWhen && !s.scoredWhen(value))) continue;
    const risk = s.risk ? s.risk(value) : value === true ? 1 : 0;
    if (s.critical && risk >= 1) critical = true;
    scored.push({ signal: s.name, group: s.group, value, weight: s.weight, risk: round(risk, 4) });
  }

  const weightTotal = scored.reduce((sum, s) => sum + s.weight, 0);
  const signals = scored.map((s) => ({ ...s, contribution: weightTotal ? round((100 * s.weight * s.risk) / weightTotal, 2) : 0 }));
  const weighted = weightTotal > 0 ? Math.round(signals.reduce((sum, s) => sum + (100 * s.weight * s.risk) / weightTotal, 0)) : null;
  const floorApplied = critical && weighted !== null && weighted < CRITICAL_FLOOR;
  const score = floorApplied ? CRITICAL_FLOOR : weighted;

  return {
    score,
    score_breakdown: { signals, weight_total: weightTotal, critical_floor_applied: floorApplied },
    coverage: { present, total: applicable.length, ratio: round(applicable.length ? present / applicable.length : 0, 4) },
    flags,
  };
}

const round = (n: number, dp: number) => Math.round(n * 10 ** dp) / 10 ** dp;
