// US Treasury daily par yield curve rates, one CSV file per year (no key).
//   GET {base}/resource-center/data-chart-center/interest-rates/daily-treasury-rates.csv/{YYYY}/all
//       ?type=daily_treasury_yield_curve&field_tdr_date_value={YYYY}&page&_format=csv
// Layout: a header `Date,"1 Mo","1.5 Month","2 Mo",…,"30 Yr"` then one row per business day, NEWEST
// FIRST; Date is MM/DD/YYYY; yields are percent with 2 decimals. Quirks: columns are mapped by name
// (older years have fewer; "1.5 Month" exists from 2025-02-18, blank before); a blank cell (or a
// historic "N/A") means no value; early in January the current year's file can hold no rows yet.
// The site is slow (about 20 s has been reported), hence its own deadline, TREASURY_DEADLINE_MS.
import { z } from 'zod';
import { isCalendarDate } from '../lib/new-york-time.ts';
import { TENORS, type Curve, type CurveDay, type Tenor } from '../analytics/yield-curve.ts';
import { env } from '../lib/env.ts';
import type { Protocol } from '../upstream/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';

export const TREASURY = 'treasury';

/** Treasury's column names → tenors. "1.5 Mo" is how its HTML table spells the CSV's "1.5 Month". */
const COLUMNS: Record<string, Tenor> = {
  '1 Mo': '1M', '1.5 Month': '1.5M', '1.5 Mo': '1.5M', '2 Mo': '2M', '3 Mo': '3M', '4 Mo': '4M', '6 Mo': '6M',
  '1 Yr': '1Y', '2 Yr': '2Y', '3 Yr': '3Y', '5 Yr': '5Y', '7 Yr': '7Y', '10 Yr': '10Y', '20 Yr': '20Y', '30 Yr': '30Y',
};

/** An HTML page where CSV was asked for (an error or maintenance page served with 200) is a failure. */
export const TREASURY_PROTOCOL: Protocol = {
  classify(body, status) {
    if (status < 200 || status >= 300 || typeof body !== 'string') return undefined;
    const head = body.trimStart().slice(0, 15).toLowerCase();
    return head.startsWith('<!doctype') || head.startsWith('<html') ? { kind: 'provider_error', detail: 'returned HTML instead of CSV' } : undefined;
  },
};

const cell = (v: string) => v.trim().replace(/^"(.*)"$/, '$1').trim();

/**
 * Parses a yield-curve CSV into days, newest first. An empty file, or a header alone, has no days.
 * Throws on anything else that is not the documented layout: an unknown column, a row of the wrong
 * width, a date that is not MM/DD/YYYY, a value that is neither a number nor blank/N/A.
 */
export function parseYieldCurveCsv(text: string): CurveDay[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) return [];
  const header = lines[0]!.split(',').map(cell);
  if (header[0] !== 'Date') throw new Error('the first column is not Date');
  const tenors = header.slice(1).map((name) => {
    const tenor = COLUMNS[name];
    if (!tenor) throw new Error(`unknown column ${JSON.stringify(name)}`);
    return tenor;
  });
  return lines
    .slice(1)
    .map((line, i) => {
      const cells = line.split(',').map(cell);
      if (cells.length !== header.length) throw new Error(`row ${i + 1} has ${cells.length} cells, the header ${header.length}`);
      const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(cells[0]!);
      if (!m || !isCalendarDate(`${m[3]}-${m[1]}-${m[2]}`)) throw new Error(`row ${i + 1}: date ${JSON.stringify(cells[0])} is not MM/DD/YYYY`);
      const curve = Object.fromEntries(TENORS.map((t) => [t, null])) as Curve;
      tenors.forEach((tenor, j) => {
        const v = cells[j + 1]!;
        if (v === '' || v === 'N/A') return;
        if (!/^-?\d+(\.\d+)?$/.test(v)) throw new Error(`row ${i + 1}: ${JSON.stringify(v)} is not a yield`);
        curve[tenor] = Number(v);
      });
      return { date: `${m[3]}-${m[1]}-${m[2]}`, curve };
    })
    .sort((a, b) => b.date.localeCompare(a.date));
}

const csvSchema = z.string().transform((text, ctx) => {
  try {
    return parseYieldCurveCsv(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

export interface TreasurySettings {
  baseUrl: string;
  ttlS: number;
  deadlineMs: number;
}

function createTreasury(ctx: SourceContext<TreasurySettings>) {
  const { baseUrl, ttlS, deadlineMs } = ctx.settings;
  return {
    /** Every day of a year's file, newest first (none early in January). */
    async yieldCurve(year: number): Promise<Sourced<CurveDay[]>> {
      const url =
        `${baseUrl}/resource-center/data-chart-center/interest-rates/daily-treasury-rates.csv/${year}/all` +
        `?type=daily_treasury_yield_curve&field_tdr_date_value=${year}&page&_format=csv`;
      return ctx.fetch({ url, format: 'text', schema: csvSchema, protocol: TREASURY_PROTOCOL, ttlS, deadlineMs });
    },
  };
}

export type Treasury = ReturnType<typeof createTreasury>;

export const treasurySource = defineSource({
  key: 'treasury',
  name: TREASURY,
  title: 'US Treasury daily par yield curve',
  docs: 'https://home.treasury.gov/resource-center/data-chart-center/interest-rates/TextView?type=daily_treasury_yield_curve',
  notes:
    'No key, no documented limit. One CSV per year, newest row first, published each business day in the afternoon (ET); slow to answer ' +
    '(about 20 s reported), hence TREASURY_DEADLINE_MS. Early in January the current year has no rows yet: the previous year is read.',
  env: {
    TREASURY_BASE_URL: env.url('https://home.treasury.gov', 'US Treasury site serving the daily par yield curve CSV.'),
    TREASURY_DEADLINE_MS: env.int(100, 120_000, 30_000, 'Total deadline of one Treasury call (ms); the site is slow, so it has its own.'),
    CACHE_TTL_RATES_S: env.ttl(900, 'Treasury yield-curve files'),
  },
  settings: (e) => ({ baseUrl: e.TREASURY_BASE_URL, ttlS: e.CACHE_TTL_RATES_S, deadlineMs: e.TREASURY_DEADLINE_MS }),
  create: createTreasury,
});
