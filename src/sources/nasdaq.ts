// Nasdaq's earnings calendar (the JSON behind nasdaq.com/market-activity/earnings; undocumented, no key).
//   GET {base}/api/calendar/earnings?date=YYYY-MM-DD      one day per call
//   {data:{asOf, headers, rows[]}, message, status:{rCode, bCodeMessage, developerMessage}}
// Quirks: every row field is a formatted string — marketCap "$47,076,153,012", epsForecast "$3.46" or
// "($0.29)" (parentheses = negative) or "", noOfEsts "10" or "N/A", lastYearRptDt "6/30/2023" or "N/A",
// fiscalQuarterEnding "May/2024", time "time-pre-market" | "time-after-hours" | "time-not-supplied".
// A day without reports (a weekend, a holiday) has rows null or []. Errors: data null with the text in
// status.bCodeMessage[].errorMessage. Akamai-fronted: needs browser-like headers, else it hangs or blocks.
import { z } from 'zod';
import { isCalendarDate } from '../analytics/new-york-time.ts';
import { env } from '../env.ts';
import { isRecord, type Protocol } from '../http/protocol.ts';
import { defineSource, type SourceContext, type Sourced } from './define-source.ts';
import { BROWSER_USER_AGENT } from './yahoo.ts';

export const NASDAQ = 'nasdaq';

/** Nasdaq's error: `data: null` with messages in status.bCodeMessage, or a status.rCode other than 200. */
export const NASDAQ_PROTOCOL: Protocol = {
  classify(body) {
    if (!isRecord(body) || !isRecord(body.status)) return undefined;
    const { rCode, bCodeMessage } = body.status;
    const messages = Array.isArray(bCodeMessage) ? bCodeMessage.map((m) => (isRecord(m) ? String(m.errorMessage ?? m.code ?? '') : String(m))).filter(Boolean) : [];
    if (messages.length > 0 || (typeof rCode === 'number' && rCode !== 200)) {
      return { kind: 'provider_error', detail: messages.join('; ') || `rCode ${String(rCode)}` };
    }
    return undefined;
  },
};

const NOT_GIVEN = new Set(['', 'N/A', '--']);

/** "$47,076,153,012" → 47076153012; "($0.29)" → −0.29; "" or "N/A" → null. Throws on anything else. */
export function parseUsd(s: string): number | null {
  const v = s.trim();
  if (NOT_GIVEN.has(v)) return null;
  const m = /^(\()?(-)?\$(\d{1,3}(?:,\d{3})*|\d+)(\.\d+)?(\))?$/.exec(v);
  if (!m || Boolean(m[1]) !== Boolean(m[5])) throw new Error(`${JSON.stringify(s)} is not a dollar amount`);
  const n = Number(`${m[3]!.replace(/,/g, '')}${m[4] ?? ''}`);
  return m[1] || m[2] ? -n : n;
}

/** "10" → 10; "N/A" or "" → null. */
export function parseCount(s: string): number | null {
  const v = s.trim();
  if (NOT_GIVEN.has(v)) return null;
  if (!/^\d+$/.test(v)) throw new Error(`${JSON.stringify(s)} is not a count`);
  return Number(v);
}

/** "6/30/2023" → "2023-06-30"; "N/A" or "" → null. */
export function parseUsDate(s: string): string | null {
  const v = s.trim();
  if (NOT_GIVEN.has(v)) return null;
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(v);
  const iso = m ? `${m[3]}-${m[1]!.padStart(2, '0')}-${m[2]!.padStart(2, '0')}` : '';
  if (!isCalendarDate(iso)) throw new Error(`${JSON.stringify(s)} is not a M/D/YYYY date`);
  return iso;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "May/2024" → "2024-05"; "N/A" or "" → null. */
export function parseFiscalQuarter(s: string): string | null {
  const v = s.trim();
  if (NOT_GIVEN.has(v)) return null;
  const m = /^([A-Z][a-z]{2})\/(\d{4})$/.exec(v);
  const month = m ? MONTHS.indexOf(m[1]!) : -1;
  if (month < 0) throw new Error(`${JSON.stringify(s)} is not a Mon/YYYY fiscal quarter end`);
  return `${m![2]}-${String(month + 1).padStart(2, '0')}`;
}

export type ReportTiming = 'before_open' | 'after_close' | 'not_supplied';

/** Nasdaq's time code; any other value (or none) means Nasdaq did not say. */
export function reportTiming(code: string | null | undefined): ReportTiming {
  if (code === 'time-pre-market') return 'before_open';
  if (code === 'time-after-hours') return 'after_close';
  return 'not_supplied';
}

export interface EarningsRow {
  symbol: string;
  company: string;
  timing: ReportTiming;
  eps_estimate: number | null;
  estimate_count: number | null;
  market_cap_usd: number | null;
  fiscal_quarter_ending: string | null;
  prior_year_eps: number | null;
  prior_year_report_date: string | null;
}

/** A formatted string field parsed by `parse`; a value it refuses is a schema failure at that field. */
const formatted = <T>(parse: (s: string) => T) =>
  z
    .string()
    .nullish()
    .transform((v, ctx) => {
      try {
        return v === null || v === undefined ? null : parse(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });

const rowSchema = z
  .object({
    symbol: z.string().min(1),
    name: z.string().nullish(),
    time: z.string().nullish(),
    marketCap: formatted(parseUsd),
    fiscalQuarterEnding: formatted(parseFiscalQuarter),
    epsForecast: formatted(parseUsd),
    noOfEsts: formatted(parseCount),
    lastYearRptDt: formatted(parseUsDate),
    lastYearEPS: formatted(parseUsd),
  })
  .transform(
    (r): EarningsRow => ({
      symbol: r.symbol,
      company: r.name ?? r.symbol,
      timing: reportTiming(r.time),
      eps_estimate: r.epsForecast,
      estimate_count: r.noOfEsts,
      market_cap_usd: r.marketCap,
      fiscal_quarter_ending: r.fiscalQuarterEnding,
      prior_year_eps: r.lastYearEPS,
      prior_year_report_date: r.lastYearRptDt,
    }),
  );

const calendarSchema = z.object({ data: z.object({ rows: z.array(rowSchema).nullish() }) });

export interface NasdaqSettings {
  baseUrl: string;
  ttlS: number;
}

/** What a browser on nasdaq.com sends; Akamai hangs or blocks requests without it. */
const BROWSER_HEADERS = {
  'user-agent': BROWSER_USER_AGENT,
  accept: 'application/json, text/plain, */*',
  origin: 'https://www.nasdaq.com',
  referer: 'https://www.nasdaq.com/',
};

function createNasdaq(ctx: SourceContext<NasdaqSettings>) {
  const { baseUrl, ttlS } = ctx.settings;
  return {
    /** The earnings reports of one day, as Nasdaq orders them; none on a weekend or holiday. */
    async earnings(date: string): Promise<Sourced<EarningsRow[]>> {
      const res = await ctx.fetch({ url: `${baseUrl}/api/calendar/earnings?date=${date}`, headers: BROWSER_HEADERS, schema: calendarSchema, protocol: NASDAQ_PROTOCOL, ttlS });
      return { data: res.data.data.rows ?? [], meta: res.meta };
    },
  };
}

export type Nasdaq = ReturnType<typeof createNasdaq>;

export const nasdaqSource = defineSource({
  key: 'nasdaq',
  name: NASDAQ,
  title: 'Nasdaq earnings calendar',
  docs: 'https://www.nasdaq.com/market-activity/earnings',
  notes:
    'Undocumented site API, no key, no published limit (heavy use is reported to get an IP blocked). Akamai-fronted: browser-like headers ' +
    'are sent. One call per day; values are formatted strings ("$47,076,153,012", "($0.29)", "N/A") parsed to numbers or null.',
  env: {
    NASDAQ_BASE_URL: env.url('https://api.nasdaq.com', 'Nasdaq site API (earnings calendar).'),
    CACHE_TTL_EARNINGS_S: env.ttl(900, 'Nasdaq earnings-calendar days'),
  },
  settings: (e) => ({ baseUrl: e.NASDAQ_BASE_URL, ttlS: e.CACHE_TTL_EARNINGS_S }),
  create: createNasdaq,
});
