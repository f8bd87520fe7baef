// Query-parameter rules shared by every route: zod pieces whose messages name what is accepted.
// Pure and below every layer (sources, catalog, routes), so any of them may use the rules.
import { z } from 'zod';

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

/** One of a fixed list, case-sensitive as listed, with a default; the 400 lists them. */
export function oneOf<const V extends readonly [string, ...string[]]>(values: V, def: V[number], description: string) {
  return z
    .enum(values, { error: () => `must be one of ${values.join(', ')}` })
    .default(def)
    .describe(description);
}
