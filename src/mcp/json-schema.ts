// OpenAPI 3.0 schemas as JSON Schema, for the tools' input and output schemas: a `$ref` to the document's
// components is put in place (the tool's schema must stand alone), `nullable` becomes a null type (and a null
// in an enum), and OpenAPI's own words go. The server's document has no recursive schema; a `$ref` met again
// inside itself is left as an open schema rather than followed for ever.

/** OpenAPI 3.0 schema words that JSON Schema does not have. */
const OPENAPI_ONLY = new Set(['nullable', 'example', 'xml', 'externalDocs', 'discriminator', 'readOnly', 'writeOnly', 'deprecated']);

/** Keywords whose value is one schema, a list of schemas, or a map of schemas. */
const ONE = new Set(['items', 'not', 'additionalProperties']);
const LIST = new Set(['anyOf', 'oneOf', 'allOf']);
const MAP = new Set(['properties', 'patternProperties']);

type Schema = Record<string, unknown>;

/** `components.schemas` of the document, where `#/components/schemas/Name` points. */
export type Components = Record<string, Schema> | undefined;

export function toJsonSchema(schema: Schema, components: Components, seen: ReadonlySet<string> = new Set()): Schema {
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
    const target = name === undefined ? undefined : components?.[name];
    if (!name || !target || seen.has(name)) return {};
    return toJsonSchema(target, components, new Set([...seen, name]));
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (OPENAPI_ONLY.has(k) || k.startsWith('x-')) continue;
    if (ONE.has(k) && isSchema(v)) out[k] = toJsonSchema(v, components, seen);
    else if (LIST.has(k) && Array.isArray(v)) out[k] = v.map((s) => (isSchema(s) ? toJsonSchema(s, components, seen) : s));
    else if (MAP.has(k) && isSchema(v)) out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, isSchema(s) ? toJsonSchema(s, components, seen) : s]));
    else out[k] = v;
  }
  if (schema.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  // nullable beside allOf/anyOf/oneOf (no type of its own): the value is one of those, or null.
  return out.type === undefined && (out.allOf || out.anyOf || out.oneOf) ? { anyOf: [out, { type: 'null' }] } : out;
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
