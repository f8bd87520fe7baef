// Query-parameter rules shared by every route: zod pieces whose messages name what is accepted.
// Pure and below every layer (sources, catalog, routes), so any of them may use the rules.
import { z } from 'zod';
import { BadRequestError } from '../lib/errors.ts';

/**
 * A required string parameter whose error says what it accepts. The error handler prefixes
 * the parameter's name, so messages read "query parameter 'chain' is required: one of …".
 */
export function requiredString(accepted: string) {
  return z.string({ error: (iss) => (iss.input === undefined ? `is required: ${accepted}` : `must be ${accepted}`) });
}

/**
 * An integer parameter written as a plain decimal number (`limit=0x10` and `limit=1e2` are refused,
 * as are signs and fractions), from `min` to `max`, with a default. It shows as an integer with its
 * bounds and default in OpenAPI.
 */
export function boundedInt(min: number, max: number, def: number, description: string) {
  const accepted = `must be a whole number from ${min} to ${max}`;
  return z
    .string({ error: () => accepted })
    .regex(/^\d{1,9}$/, accepted)
    .transform(Number)
    .pipe(z.number().int().min(min, accepted).max(max, accepted))
    .default(def)
    .describe(description)
    // zod documents a transformed parameter by its input (a string); describe it as the integer it is.
    // zod drops `default` from transformed inputs, so it travels as x-default (see documentDefaults).
    .meta({ type: 'integer', minimum: min, maximum: max, pattern: undefined, [X_DEFAULT]: def } as never);
}

export const X_DEFAULT = 'x-default';

/** Moves x-default (see boundedInt) to `default` in a JSON schema's properties, in place. */
export function documentDefaults<T>(schema: T): T {
  const props = (schema as { properties?: Record<string, Record<string, unknown>> } | null)?.properties;
  for (const p of Object.values(props ?? {})) {
    if (X_DEFAULT in p) {
      p.default = p[X_DEFAULT];
      delete p[X_DEFAULT];
    }
  }
  return schema;
}

/**
 * One of a fixed list, any case: `eth`, `Eth` and `ETH` all read as the listed `ETH`, and the handler
 * gets the value as listed. OpenAPI shows the listed values; the 400 lists them. Surrounding spaces
 * are ignored. `refuse` turns away spellings that would fold onto a listed value but mean something
 * else (see timeframeOneOf), with its own message.
 */
export function enumParam<const V extends readonly [string, ...string[]]>(values: V, refuse?: (input: string) => string | undefined) {
  const listed = `must be one of ${values.join(', ')}`;
  const byFold = new Map(values.map((v) => [v.toLowerCase(), v]));
  return z.preprocess(
    (input, ctx) => {
      if (typeof input !== 'string') return input;
      const v = input.trim();
      const refused = refuse?.(v);
      if (refused !== undefined) {
        ctx.addIssue({ code: 'custom', message: `${listed}; ${refused}`, input });
        return z.NEVER;
      }
      return byFold.get(v.toLowerCase()) ?? input;
    },
    z.enum(values, { error: (iss) => (iss.input === undefined ? `is required: one of ${values.join(', ')}` : listed) }),
  );
}

/** {@link enumParam} with a default, which OpenAPI shows (zod drops it from a preprocessed schema; see documentDefaults). */
export function oneOf<const V extends readonly [string, ...string[]]>(values: V, def: V[number], description: string) {
  return withDefault(enumParam(values), def, description);
}

/**
 * Candle and bucket lengths (1m, 4h, 1d, ...): any case like every enum (1H, 4H, 1D, 1W read as 1h,
 * 4h, 1d, 1w), except an upper-case M, which the venues and charting tools read as month (Binance's and
 * TradingView's 1M): 1M is refused with a message rather than read as one minute.
 */
export function timeframeOneOf<const V extends readonly [string, ...string[]]>(values: V, def: V[number], description: string) {
  return withDefault(enumParam(values, refuseMonths), def, description);
}

/** Same as {@link timeframeOneOf}, without a default (for an alias parameter; see pickAlias). */
export function timeframeParam<const V extends readonly [string, ...string[]]>(values: V) {
  return enumParam(values, refuseMonths);
}

function refuseMonths(v: string): string | undefined {
  return /^\d+M$/.test(v) ? `'${v}' reads as months (M), which are not offered; minutes are written with a lower-case m (1m)` : undefined;
}

function withDefault<S extends z.ZodType<string>>(schema: S, def: string, description: string) {
  return schema
    .default(def as never)
    .describe(description)
    .meta({ [X_DEFAULT]: def } as never);
}

/**
 * The value of a parameter that has a documented older name: `canonical` wins, `alias` is read when
 * the canonical one is absent, and both given with different values is a 400 naming both. `def` when
 * neither is given.
 */
export function pickAlias<T>(canonical: { name: string; value: T | undefined }, alias: { name: string; value: T | undefined }, def: T): T {
  if (canonical.value !== undefined && alias.value !== undefined && canonical.value !== alias.value) {
    throw new BadRequestError(
      `query parameters '${canonical.name}' and '${alias.name}' name the same thing (${alias.name} is the older name); give one, or the same value in both`,
    );
  }
  return canonical.value ?? alias.value ?? def;
}
