// The macro calendar's dates: FOMC decisions, CPI and jobs-report releases, each with its official
// source and whether the date was read from it (`verified`). They ship in macro-calendar.json beside
// this file; an operator can point MACRO_CALENDAR_FILE at an updated file of the same schema, validated
// once, at start-up: a bad file stops the start with a message naming the variable. The shipped file is
// part of the release (test/market/macro-calendar.test.ts checks it): it is validated on first use instead,
// which spares every start-up ~20 ms.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isCalendarDate } from '../lib/new-york-time.ts';
import { env } from '../lib/env.ts';
import builtIn from './macro-calendar.json' with { type: 'json' };

export const MACRO_EVENT_TYPES = ['fomc', 'cpi', 'jobs'] as const;
export type MacroEventType = (typeof MACRO_EVENT_TYPES)[number];

const date = z.string().refine(isCalendarDate, 'a real date written YYYY-MM-DD');

const eventSchema = z
  .object({
    type: z.enum(MACRO_EVENT_TYPES),
    name: z.string().min(1),
    date,
    time_et: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a New York time HH:MM'),
    reference_period: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month YYYY-MM').nullable(),
    sep: z.boolean().nullable(),
    source_url: z.url({ protocol: /^https?$/ }),
    verified: z.boolean(),
    note: z.string().nullable(),
    evidence: z.array(z.string()).optional(),
  })
  .strict();

export const macroCalendarSchema = z
  .object({
    schema_version: z.literal(1),
    description: z.string().optional(),
    compiled: z.string().optional(),
    events: z.array(eventSchema).min(1),
  })
  .strict()
  .superRefine((cal, ctx) => {
    const seen = new Set<string>();
    cal.events.forEach((e, i) => {
      const key = `${e.type} ${e.date}`;
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['events', i], message: `a second ${e.type} event on ${e.date}` });
      seen.add(key);
      if (e.type !== 'fomc' && e.sep !== null) ctx.addIssue({ code: 'custom', path: ['events', i, 'sep'], message: 'sep is for FOMC events only (null otherwise)' });
    });
  });

export type MacroCalendar = z.output<typeof macroCalendarSchema>;
export type MacroEvent = MacroCalendar['events'][number];

export interface LoadedMacroCalendar {
  /** MACRO_CALENDAR_FILE as given, or null for the file shipped with the release. */
  file: string | null;
  calendar: MacroCalendar;
}

/** Validates a parsed calendar; the error names the first problem and where it is. */
export function parseMacroCalendar(json: unknown): { calendar: MacroCalendar } | { error: string } {
  const parsed = macroCalendarSchema.safeParse(json);
  if (parsed.success) return { calendar: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { error: `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}` };
}

function loadBuiltIn(): MacroCalendar {
  const got = parseMacroCalendar(builtIn);
  if ('error' in got) throw new Error(`src/data/macro-calendar.json is invalid: ${got.error}`);
  return got.calendar;
}

let builtInCalendar: MacroCalendar | undefined;

/** The calendar shipped with the release, validated the first time it is read. */
export const BUILT_IN_MACRO_CALENDAR: LoadedMacroCalendar = {
  file: null,
  get calendar() {
    return (builtInCalendar ??= loadBuiltIn());
  },
};

/** Reads and validates an operator's calendar file; its failure becomes a ConfigError naming the variable. */
const calendarFile = z.string().transform((path, ctx): LoadedMacroCalendar => {
  const expected = (why: string) => `a readable JSON file in the macro-calendar schema (${why})`;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: expected(err instanceof SyntaxError ? `not JSON: ${err.message}` : ((err as NodeJS.ErrnoException).code ?? 'unreadable')) });
    return z.NEVER;
  }
  const got = parseMacroCalendar(json);
  if ('error' in got) {
    ctx.addIssue({ code: 'custom', message: expected(got.error) });
    return z.NEVER;
  }
  return { file: path, calendar: got.calendar };
});

export const MACRO_CALENDAR_FILE_ENV = env.custom(
  calendarFile,
  undefined,
  'JSON file of macro-calendar dates (the schema of src/data/macro-calendar.json) used instead of the shipped one; checked at start-up.',
  { example: './data/macro-calendar.json' },
);

/** The last dated event of each type: the calendar knows nothing later. */
export function knownThrough(calendar: MacroCalendar): Record<MacroEventType, string | null> {
  const out: Record<MacroEventType, string | null> = { fomc: null, cpi: null, jobs: null };
  for (const e of calendar.events) if (out[e.type] === null || e.date > out[e.type]!) out[e.type] = e.date;
  return out;
}
