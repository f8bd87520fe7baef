// Writes test/fixtures/upstream/constructed__binance_klines_600.json: 600 candles in Binance's
// documented GET /api/v3/klines row format, built from a seeded random walk (not recorded: the
// project has no recorded series long enough for EMA200 or a 100-candle ATR window). Deterministic:
// running it again writes the same file. Usage: node --import tsx scripts/constructed-klines.ts
import { writeFileSync } from 'node:fs';
import { seededRandom } from './seeded-random.ts';

const ROWS = 600;
const INTERVAL_MS = 4 * 3_600_000;
const START_MS = Date.UTC(2024, 0, 1);

const rand = seededRandom(11);
const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
const decimals = (x: number, dp: number) => x.toFixed(dp).padEnd(x.toFixed(dp).indexOf('.') + 9, '0');

const rows: unknown[] = [];
let close = 42_000;
let drift = 0;
for (let i = 0; i < ROWS; i++) {
  // A slowly wandering drift gives trends and reversals; 1.1 % noise per 4 h bar is BTC-like.
  drift = 0.97 * drift + 0.03 * normal() * 0.004;
  const open = close;
  close = Math.round(open * Math.exp(drift + 0.011 * normal()) * 100) / 100;
  const high = Math.round(Math.max(open, close) * (1 + Math.abs(normal()) * 0.004) * 100) / 100;
  const low = Math.round(Math.min(open, close) * (1 - Math.abs(normal()) * 0.004) * 100) / 100;
  const volume = Math.round((800 + 600 * rand()) * 1e5) / 1e5;
  const quote = volume * ((open + close) / 2);
  const takerBase = volume * (0.4 + 0.2 * rand());
  const openTime = START_MS + i * INTERVAL_MS;
  rows.push([
    openTime,
    decimals(open, 2),
    decimals(high, 2),
    decimals(low, 2),
    decimals(close, 2),
    decimals(volume, 5),
    openTime + INTERVAL_MS - 1,
    decimals(quote, 2),
    20_000 + Math.floor(rand() * 30_000),
    decimals(takerBase, 5),
    decimals(takerBase * ((open + close) / 2), 2),
    '0',
  ]);
}

const out = new URL('../test/fixtures/upstream/constructed__binance_klines_600.json', import.meta.url);
writeFileSync(out, `${JSON.stringify(rows)}\n`);
console.log(`wrote ${out.pathname}`);
