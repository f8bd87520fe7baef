// Environment variables as data: each one is declared once with its parser, default and meaning.
// config.ts parses the core ones and every source descriptor's own; `.env.example`, the configuration
// reference and the providers table are written from the same declarations (npm run docs), so none of
// them can drift. A `.env` file in the working directory fills in what the environment does not set
// (loadEnvFile).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv as parseDotenv } from 'node:util';
import { z } from 'zod';
import { nearestName } from './nearest-name.ts';

export interface EnvVar<T = unknown> {
  /** Parses the trimmed raw value; its error message says what is accepted. */
  schema: z.ZodType<T, string>;
  /** The default, written as a value of the variable; undefined = unset means "not configured". */
  default: string | undefined;
  /** One line on what it does, for .env.example and the configuration reference. */
  doc: string;
  /** A credential: its value is never printed, not even a default. */
  secret?: boolean;
  /** An example value shown (commented out) in .env.example when there is no default. */
  example?: string;
}

export type EnvSpec = Record<string, EnvVar>;

/** The parsed values of a spec: a variable with a default always has a value. */
export type EnvValues<E extends EnvSpec> = {
  [K in keyof E]: E[K] extends EnvVar<infer T> ? (E[K]['default'] extends string ? T : T | undefined) : never;
};

const define = <T, D extends string | undefined>(schema: z.ZodType<T, string>, def: D, doc: string, extra: Partial<EnvVar> = {}) =>
  ({ schema, default: def, doc, ...extra }) as EnvVar<T> & { default: D };

const wholeNumber = (min: number, max: number) => {
  const accepted = `a whole number from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, accepted)
    .transform(Number)
    .pipe(z.number().int().min(min, accepted).max(max, accepted));
};

/** An absolute URL with one of `schemes` (e.g. `['redis:', 'rediss:']`); `accepted` says so in the error. */
export function urlWithScheme(schemes: readonly string[], accepted: string): z.ZodType<string, string> {
  return z.string().refine((v) => {
    try {
      return schemes.includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, accepted);
}

const httpUrlSchema = urlWithScheme(['http:', 'https:'], 'an absolute http(s) URL').transform((v) => v.replace(/\/+$/, ''));

const boolSchema = z
  .string()
  .toLowerCase()
  .refine((v) => ['true', 'false', '1', '0', 'yes', 'no'].includes(v), 'true or false')
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** Builders for the kinds of variable the project uses. */
export const env = {
  int: <D extends number | undefined>(min: number, max: number, def: D, doc: string) =>
    define(wholeNumber(min, max), def === undefined ? undefined : String(def), doc) as EnvVar<number> & { default: D extends number ? string : undefined },
  url: (def: string, doc: string) => define(httpUrlSchema, def, doc),
  optionalUrl: (doc: string, example?: string) => define(httpUrlSchema, undefined, doc, { example }),
  bool: (def: boolean, doc: string) => define(boolSchema, String(def), doc),
  text: (def: string, doc: string, accepted = 'a non-empty value') => define(z.string().min(1, accepted), def, doc),
  optionalText: (doc: string, example?: string) => define(z.string().min(1), undefined, doc, { example }),
  secret: (doc: string) => define(z.string().min(1), undefined, doc, { secret: true }),
  oneOf: <const V extends readonly [string, ...string[]], D extends V[number]>(values: V, def: D, doc: string) =>
    define(z.enum(values, { message: `one of ${values.join(', ')}` }), def, doc) as EnvVar<V[number]> & { default: D },
  custom: <T, D extends string | undefined>(schema: z.ZodType<T, string>, def: D, doc: string, extra: Partial<EnvVar> = {}) => define(schema, def, doc, extra),
  /** Seconds an answer of one kind of data is reused (0 = not cached). */
  ttl: (def: number, what: string) => define(wholeNumber(0, 86_400), String(def), `Seconds ${what} are reused from the cache (0 = not cached).`),
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses every variable of `spec` from `source`. Empty strings count as unset, so `FOO=` in an env
 * file means "use the default". Throws one ConfigError naming every bad variable.
 */
export function parseEnv<E extends EnvSpec>(spec: E, source: NodeJS.ProcessEnv): EnvValues<E> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, v] of Object.entries(spec)) {
    const given = source[name]?.trim();
    const raw = given === undefined || given === '' ? v.default : given;
    if (raw === undefined) {
      out[name] = undefined;
      continue;
    }
    const parsed = v.schema.safeParse(raw);
    if (parsed.success) out[name] = parsed.data;
    else problems.push(`${name}=${JSON.stringify(v.secret ? '[secret]' : (source[name] ?? ''))} is invalid: expected ${parsed.error.issues[0]?.message ?? 'a valid value'}`);
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  return out as EnvValues<E>;
}

/**
 * Merges specs into one. The same name may appear in several (two sources sharing a TTL), but only
 * as the same declaration; two different declarations of one name are a programming error.
 */
export function mergeEnvSpecs(specs: EnvSpec[]): EnvSpec {
  const merged: EnvSpec = {};
  for (const spec of specs) {
    for (const [name, v] of Object.entries(spec)) {
      const seen = merged[name];
      if (seen && (seen.default !== v.default || seen.doc !== v.doc)) throw new Error(`environment variable ${name} is declared twice, differently`);
      merged[name] = v;
    }
  }
  return merged;
}

/** What a `.env` file gave: its absolute path and the variables it set (not those the environment already had). */
export interface EnvFile {
  path: string;
  /** The variables taken from the file (not those the environment already set). */
  names: string[];
  /** Every name the file sets, taken or not. */
  given: string[];
}

/**
 * Reads `.env` in the working directory (or the file ENV_FILE names; ENV_FILE empty: none) when there is
 * one, into `target` below the environment: a variable already set there, even to an empty string, keeps
 * its value. The file is read by Node's own parser (node:util parseEnv: `NAME=value` lines, `#` comments,
 * quoted values); its values are then parsed and checked by parseEnv like every other, so a bad one stops
 * start-up naming it. Undefined when there is no such file; a file that exists but cannot be read is a
 * ConfigError.
 */
export function loadEnvFile(path?: string, target: NodeJS.ProcessEnv = process.env): EnvFile | undefined {
  const file = path ?? target.ENV_FILE ?? '.env';
  if (file === '') return undefined;
  const absolute = resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError(`invalid configuration:\n  ${absolute} cannot be read (${code ?? (err as Error).message})`);
  }
  const names: string[] = [];
  const parsed = parseDotenv(text);
  for (const [name, value] of Object.entries(parsed)) {
    if (target[name] !== undefined || value === undefined) continue;
    target[name] = value;
    names.push(name);
  }
  return { path: absolute, names: names.sort(), given: Object.keys(parsed).sort() };
}

/** Names a `.env` may hold that are no setting of the server's: Node's and the process's own. */
const NOT_SETTINGS = new Set(['ENV_FILE', 'NODE_ENV', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'TZ', 'UV_THREADPOOL_SIZE', 'DEBUG', 'HOME', 'PATH']);

/**
 * The start-up warning for names in `.env` that no setting declares (a misspelt `PROT=3999` would otherwise be
 * ignored without a word), each with the nearest setting when one is near; undefined when every name is known.
 */
export function unknownEnvFileNames(file: EnvFile, spec: EnvSpec): string | undefined {
  const settings = Object.keys(spec);
  const unknown = file.given.filter((name) => !(name in spec) && !NOT_SETTINGS.has(name));
  if (unknown.length === 0) return undefined;
  const named = unknown.map((name) => {
    const nearest = nearestName(name, settings, 3);
    return nearest === undefined ? name : `${name} (did you mean ${nearest}?)`;
  });
  return `${file.path} sets ${named.join(', ')}, which no setting of this server declares: ignored. Every setting: docs/operating/configuration.md`;
}

/** A ConfigError's message, saying which of the variables it names came from the `.env` file. */
export function explainConfigError(err: ConfigError, file: EnvFile | undefined): string {
  const named = file?.names.filter((name) => err.message.includes(`${name}=`)) ?? [];
  return named.length ? `${err.message}\n  (${named.join(', ')} set in ${file!.path}; the environment overrides it)` : err.message;
}
