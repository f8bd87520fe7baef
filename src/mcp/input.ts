// A tool's arguments checked against its input schema before anything is sent (so a bad call is never asked to
// pay): the first fault, named as the API's 400 names it — the parameter and what it accepts. The schemas are the
// routes' query parameters, each one scalar (string, integer, number or boolean, with an enum, bounds, a length or
// a pattern); a number or boolean given as text is taken as the query would take it.
import type { InputSchema } from './tools.ts';

type Prop = Record<string, unknown>;

const SCALAR = new Set(['string', 'integer', 'number', 'boolean']);

/** The fault in these arguments, or undefined when there is none. */
export function inputFault(schema: InputSchema, args: Record<string, unknown>): string | undefined {
  const names = Object.keys(schema.properties);
  for (const name of Object.keys(args)) {
    if (!(name in schema.properties)) return `unknown parameter '${name}': this tool takes ${names.length ? names.map((n) => `'${n}'`).join(', ') : 'none'}`;
  }
  for (const name of schema.required ?? []) if (args[name] === undefined || args[name] === null) return `parameter '${name}' is required`;
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    const fault = valueFault(schema.properties[name]!, value);
    if (fault) return `parameter '${name}' ${fault}`;
  }
  return undefined;
}

function valueFault(prop: Prop, value: unknown): string | undefined {
  // A parameter that is not scalar (none today) is the API's to check.
  if (!SCALAR.has(typeName(prop))) return undefined;
  if (typeof value === 'object') return `must be a single ${typeName(prop)}, got ${Array.isArray(value) ? 'a list' : 'an object'}`;
  const text = String(value);
  const type = typeName(prop);
  if (type === 'integer' && !/^-?\d+$/.test(text)) return `must be an integer, got ${JSON.stringify(value)}`;
  if (type === 'number' && (text.trim() === '' || !Number.isFinite(Number(text)))) return `must be a number, got ${JSON.stringify(value)}`;
  if (type === 'boolean' && text !== 'true' && text !== 'false') return `must be true or false, got ${JSON.stringify(value)}`;
  if (Array.isArray(prop.enum)) {
    const allowed = prop.enum.filter((v) => v !== null).map(String);
    return allowed.includes(text) ? undefined : `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`;
  }
  if (type === 'integer' || type === 'number') {
    const n = Number(text);
    if (typeof prop.minimum === 'number' && n < prop.minimum) return `must be at least ${prop.minimum}, got ${text}`;
    if (typeof prop.maximum === 'number' && n > prop.maximum) return `must be at most ${prop.maximum}, got ${text}`;
  }
  if (type === 'string') {
    if (typeof prop.minLength === 'number' && text.length < prop.minLength) return `must be at least ${prop.minLength} characters long`;
    if (typeof prop.maxLength === 'number' && text.length > prop.maxLength) return `must be at most ${prop.maxLength} characters long`;
    if (typeof prop.pattern === 'string' && !matches(prop.pattern, text)) return `must match ${prop.pattern}, got ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** The schema's type, a nullable one's `['string', 'null']` read as `string`. */
function typeName(prop: Prop): string {
  const t = Array.isArray(prop.type) ? prop.type.find((x) => x !== 'null') : prop.type;
  return typeof t === 'string' ? t : 'value';
}

/** A pattern this checker cannot compile is left to the API, which checks it anyway. */
function matches(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return true;
  }
}
