// Nasdaq's earnings calendar (the JSON behind nasdaq.com/market-activity/earnings; undocumented, no key).
//   GET {base}/api/calendar/earnings?date=YYYY-MM-DD      one day per call
//   {data:{asOf, headers, rows[]}, message, status:{rCode, bCodeMessage, developerMessage}}
// Quirks: every row field is a formatted string — marketCap "$47,076,153,012", epsForecast "$3.46" or
// "($0.29)" (parentheses = negative) or "", noOfEsts "10" or "N/A", lastYearRptDt "6/30/2023" or "N/A",
// fiscalQuarterEnding "May/2024", time "time-pre-market" | "time-after-hours" | "time-not-supplied".
// data.asOf ("Wed, Jul 3, 2024") names the day the rows are for; it is checked against the date asked.
// A day without reports (a weekend, a holiday) has rows null or []. Errors: data null with the text in
// status.bCodeMessage[].errorMessage. Akamai-fronted: needs browser-like headers, else it hangs or blocks.
import { z } from 'zod';
import { isCalendarDate } from '../lib/new-york-time.ts';
import { env } from '../lib/env.ts';
import { UpstreamError } from '../lib/errors.ts';
import { isRecord, type Protocol } from '../upstream/protocol.ts';
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

// A plain amount: digits with or without thousands commas (well placed), and optional decimals.
const AMOUNT = String.raw`(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?`;
/** "($0.29)": negative in parentheses, Nasdaq's usual form. */
const IN_PARENS = new RegExp(String.raw`^\(\$?${AMOUNT}\)$`);
/** "$3.46", "-$0.05", "$-0.22", "1234": one sign at most, before or after the dollar sign. */
const SIGNED = new RegExp(String.raw`^([-+]?)\$?([-+]?)${AMOUNT}$`);

const amount = (int: string, frac: string | undefined) => Number(`${int.replace(/,/g, '')}${frac ?? ''}`);

/**
 * A USD cell: a JSON number as is; "$47,076,153,012" → 47076153012; "($0.29)", "-$0.22" and "$-0.22" → −0.29 / −0.22;
 * "", "N/A", "--" → null. Anything else — ambiguous ("(-$0.29)" says negative twice), abbreviated ("$47.1B"), or
 * not an amount — is null too: one odd cell is never guessed, and never fails the rest of the answer.
 */
export function parseUsd(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  const s = v.trim();
  if (NOT_GIVEN.has(s)) return null;
  const paren = IN_PARENS.exec(s);
  if (paren) return -amount(paren[1]!, paren[2]);
  const signed = SIGNED.exec(s);
  if (!signed || (signed[1] && signed[2])) return null;
  const n = amount(signed[3]!, signed[4]);
  return signed[1] === '-' || signed[2] === '-' ? -n : n;
}

/** "10" (or the JSON number 10) → 10; "N/A", "" or anything that is not a whole number → null. */
export function parseCount(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : null;
  if (typeof v !== 'string') return null;
  const s = v.trim();
  return /^\d+$/.test(s) ? Number(s) : null;
}

/** "6/30/2023" → "2023-06-30"; "N/A", "" or anything that is not a real M/D/YYYY date → null. */
export function parseUsDate(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(v.trim());
  const iso = m ? `${m[3]}-${m[1]!.padStart(2, '0')}-${m[2]!.padStart(2, '0')}` : '';
  return isCalendarDate(iso) ? iso : null;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "May/2024" → "2024-05"; "N/A", "" or any other form → null. */
export function parseFiscalQuarter(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const m = /^([A-Z][a-z]{2})\/(\d{4})$/.exec(v.trim());
  const month = m ? MONTHS.indexOf(m[1]!) : -1;
  return month < 0 ? null : `${m![2]}-${String(month + 1).padStart(2, '0')}`;
}

/** Nasdaq's `data.asOf`, the day its rows are for: "Wed, Jul 3, 2024" (weekday optional) → "2024-07-03"; else null. */
export function parseAsOf(s: string): string | null {
  const m = /^(?:[A-Z][a-z]{2}, )?([A-Z][a-z]{2}) (\d{1,2}), (\d{4})$/.exec(s.trim());
  const month = m ? MONTHS.indexOf(m[1]!) : -1;
  if (month < 0) return null;
  const iso = `${m![3]}-${String(month + 1).padStart(2, '0')}-${m![2]!.padStart(2, '0')}`;
  return isCalendarDate(iso) ? iso : null;
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

/** A formatted cell read by `parse`, which gives null for what it cannot read: a cell never fails its row or its day. */
const cell = <T>(parse: (v: unknown) => T | null) => z.unknown().transform((v) => parse(v));

const rowSchema = z
  .object({
    symbol: z.string().min(1),
    name: z.string().nullish(),
    time: z.string().nullish(),
    marketCap: cell(parseUsd),
    fiscalQuarterEnding: cell(parseFiscalQuarter),
    epsForecast: cell(parseUsd),
    noOfEsts: cell(parseCount),
    lastYearRptDt: cell(parseUsDate),
    lastYearEPS: cell(parseUsd),
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

const calendarSchema = z.object({ data: z.object({ asOf: z.string().nullish(), rows: z.array(rowSchema).nullish() }) });

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
    /**
     * The earnings reports of one day, as Nasdaq orders them; none on a weekend or holiday. Nasdaq's `asOf` must name
     * that day: rows it answered for another day (or without saying which) are not served as this one's (a 502).
     */
    async earnings(date: string): Promise<Sourced<EarningsRow[]>> {
      const res = await ctx.fetch({ url: `${baseUrl}/api/calendar/earnings?date=${date}`, headers: BROWSER_HEADERS, schema: calendarSchema, protocol: NASDAQ_PROTOCOL, ttlS });
      const { asOf, rows } = res.data.data;
      const answered = asOf ? parseAsOf(asOf) : null;
      if (answered === null) throw new UpstreamError(NASDAQ, 'schema', `${NASDAQ} did not say which day it answered for (asOf ${JSON.stringify(asOf ?? null)}), asked for ${date}`);
      if (answered !== date) throw new UpstreamError(NASDAQ, 'schema', `${NASDAQ} answered for ${answered} (asOf ${JSON.stringify(asOf)}), not for ${date}`);
      return { data: rows ?? [], meta: res.meta };
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
