// The smallest value a JSON Schema accepts, for discovery documents that want an example answer
// where the route has no recorded one: null wherever null is allowed, empty arrays, required fields
// only, the first value of an enum, and type placeholders ("string", 0, false) where a value must
// stand. It shows the shape of an answer and never a market number presented as real.

type Schema = Record<string, unknown>;

/** Placeholders for strings of a known format, each the format's zero value. */
const FORMAT_PLACEHOLDER: Record<string, string> = {
  'date-time': '1970-01-01T00:00:00.000Z',
  date: '1970-01-01',
};

export function minimalExample(schema: Schema): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.includes(null) ? null : schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches) return branches.some(allowsNull) ? null : minimalExample(branches[0]!);
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
  if (types.length === 0 || types.includes('null')) return null;
  switch (types[0]) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, minimalExample(properties[name] ?? {})]));
    }
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => minimalExample((schema.items ?? {}) as Schema));
    case 'string':
      return FORMAT_PLACEHOLDER[String(schema.format)] ?? 'string';
    case 'number':
    case 'integer':
      return clamp(0, schema.minimum, schema.maximum);
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function allowsNull(schema: Schema): boolean {
  const type = schema.type;
  return type === 'null' || (Array.isArray(type) && type.includes('null')) || (Array.isArray(schema.enum) && schema.enum.includes(null));
}

function clamp(value: number, min: unknown, max: unknown): number {
  if (typeof min === 'number' && value < min) return min;
  if (typeof max === 'number' && value > max) return max;
  return value;
}
