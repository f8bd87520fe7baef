// Measures what the ATR warm-up buys (docs/using/analytics.md, "Warm-up"): over random candle series whose
// volatility wanders (a seeded log-normal walk of the per-candle volatility, so the seed's mean of the
// first TRs can be far from the later level), the ATR report of /v1/atr against one converged over
// 3,000 more candles, and the two spans /v1/atr and /v1/momentum-score used before the warm-up.
// Deterministic. Usage: node --import tsx scripts/atr-warmup.ts
import { atrCandlesNeeded, atrRegime, atrReport, percentileRank, wilderAtr } from '../src/analytics/atr.ts';
import type { Candle } from '../src/analytics/candles.ts';
import { seededRandom } from './seeded-random.ts';

function series(length: number, volOfVol: number, rnd: () => number): Candle[] {
  const gauss = () => Math.sqrt(-2 * Math.log(rnd() || 1e-12)) * Math.cos(2 * Math.PI * rnd());
  let price = 100;
  let vol = 0.02;
  return Array.from({ length }, (_, i) => {
    vol = Math.min(0.08, Math.max(0.003, vol * Math.exp(volOfVol * gauss())));
    const open = price;
    const close = open * Math.exp(vol * gauss());
    const high = Math.max(open, close) * (1 + Math.abs(vol * gauss()) / 2);
    const low = Math.min(open, close) * (1 - Math.abs(vol * gauss()) / 2);
    price = close;
    return { time: new Date(i * 3_600_000).toISOString(), open, high, low, close, volume: 1 };
  });
}

const rnd = seededRandom(16);

// Before: /v1/atr seeded ATR(14) 100 candles before its window (114 candles), /v1/momentum-score 386 (500).
{
  const runs = 1000;
  let percentiles = 0;
  let regimes = 0;
  let gap = 0;
  for (let s = 0; s < runs; s++) {
    const c = series(500, 0.15, rnd);
    const atr = atrReport(c.slice(-114), 14, 100, 0)!;
    const momentum = atrReport(c, 14, 100, 386)!;
    if (atr.percentile !== momentum.percentile) percentiles++;
    if (atr.regime !== momentum.regime) regimes++;
    gap = Math.max(gap, Math.abs(atr.percentile - momentum.percentile));
  }
  console.log(`before: ATR(14) percentiles of /v1/atr and /v1/momentum-score differ on ${percentiles}/${runs} series (up to ${gap.toFixed(1)} points), regimes on ${regimes}/${runs}`);
}

// Now: the report over atrCandlesNeeded(period) candles against an ATR converged over 3,000 more.
for (const volOfVol of [0.05, 0.15]) {
  for (const period of [14, 50, 100, 114]) {
    const runs = 300;
    let worst = 0;
    let percentiles = 0;
    let regimes = 0;
    let gap = 0;
    for (let s = 0; s < runs; s++) {
      const c = series(atrCandlesNeeded(period) + 3000, volOfVol, rnd);
      const converged = wilderAtr(c, period);
      const report = atrReport(c, period)!;
      worst = Math.max(worst, Math.abs(report.atr / converged.at(-1)! - 1));
      const pct = converged.slice(-100).map((a, k) => (a / c[c.length - 100 + k]!.close) * 100);
      const p = percentileRank(pct.at(-1)!, pct.slice(0, -1))!;
      if (p !== report.percentile) percentiles++;
      if (atrRegime(p) !== report.regime) regimes++;
      gap = Math.max(gap, Math.abs(p - report.percentile));
    }
    console.log(
      `now (vol of vol ${volOfVol}): ATR(${period}) over ${atrCandlesNeeded(period)} candles: today's ATR within ${(worst * 100).toFixed(4)} % of converged; ` +
        `percentile differs on ${percentiles}/${runs} (up to ${gap.toFixed(2)} points), regime on ${regimes}/${runs}`,
    );
  }
}
