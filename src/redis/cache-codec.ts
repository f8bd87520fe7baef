// How a response-cache entry is kept in Redis (the shared level, L2). Cached values are parsed upstream
// answers, and not always JSON: bigints (EVM quantities), typed arrays (the DefiLlama pools table), Maps.
// node:v8's structured serialization round-trips all of these; what it would NOT round-trip faithfully
// (a class instance comes back as a plain object, a function or symbol throws) is refused before it is
// written, so a value read back from Redis is always the value that was loaded.
//
// Layout: a 24-byte header (fetchedAt, sentAt, keep: float64 big-endian, ms) read without deserializing
// the value (a too-old entry costs no parse), then v8.serialize(value). v8's format is only guaranteed to
// be read by the same or a newer V8, so the Node major and this layout's version are in the Redis key:
// instances of different versions never read each other's entries (they simply do not share L2).
import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import { KEY_PREFIX } from './client.ts';

/** Bumped when the layout changes. */
const FORMAT = 1;
const NODE_MAJOR = process.versions.node.split('.')[0];
const HEADER = 24;

/** Where entries of this format live: `marketgate:cache:v1:node22:`. */
export const L2_KEY_PREFIX = `${KEY_PREFIX}cache:v${FORMAT}:node${NODE_MAJOR}:`;

/**
 * The id of a cache key in Redis: its SHA-256. A key holds the upstream URL and body, which may carry a
 * provider's API key, so the key itself never leaves the process.
 */
export const cacheKeyId = (key: string): string => createHash('sha256').update(key).digest('base64url');

export interface L2Entry {
  value: unknown;
  /** Epoch ms. */
  fetchedAt: number;
  sentAt: number;
  /** The longest TTL asked of the value, ms. */
  keepMs: number;
}

export type Encoded = { ok: true; bytes: Buffer } | { ok: false; why: 'type' | 'size'; reason: string };

/** The entry as bytes, or why it is not kept in Redis (a value that would not come back the same, or too large). */
export function encodeEntry(entry: L2Entry, maxBytes: number): Encoded {
  const unfit = notRoundTripping(entry.value);
  if (unfit) return { ok: false, why: 'type', reason: `holds ${unfit}, which would not read back the same` };
  let body: Buffer;
  try {
    body = serialize(entry.value);
  } catch (err) {
    return { ok: false, why: 'type', reason: `could not be serialized (${(err as Error).message})` };
  }
  if (HEADER + body.length > maxBytes) return { ok: false, why: 'size', reason: `is ${HEADER + body.length} bytes, over the ${maxBytes}-byte cap` };
  const bytes = Buffer.allocUnsafe(HEADER + body.length);
  bytes.writeDoubleBE(entry.fetchedAt, 0);
  bytes.writeDoubleBE(entry.sentAt, 8);
  bytes.writeDoubleBE(entry.keepMs, 16);
  body.copy(bytes, HEADER);
  return { ok: true, bytes };
}

/** The stamps of stored bytes, without the value (null: not an entry of this format). */
export function entryStamps(bytes: Buffer): Omit<L2Entry, 'value'> | null {
  if (bytes.length <= HEADER) return null;
  return { fetchedAt: bytes.readDoubleBE(0), sentAt: bytes.readDoubleBE(8), keepMs: bytes.readDoubleBE(16) };
}

/** The stored value (throws on bytes that are not a v8 serialization). */
export function decodeValue(bytes: Buffer): unknown {
  return deserialize(bytes.subarray(HEADER));
}

/**
 * What in `value` v8 would not give back as it is (a description), or null when all of it round-trips:
 * primitives but symbols, arrays, plain objects, Map, Set, Date, RegExp, ArrayBuffer and its views.
 * Walked once per load written to Redis (never on a hit).
 */
export function notRoundTripping(value: unknown, seen = new Set<object>()): string | null {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return null;
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
  }
  if (value === null) return null;
  const obj = value as object;
  if (seen.has(obj)) return null; // v8 keeps shared references and cycles
  seen.add(obj);
  if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer || obj instanceof Date || obj instanceof RegExp) return null;
  if (obj instanceof Map) {
    for (const [k, v] of obj) {
      const bad = notRoundTripping(k, seen) ?? notRoundTripping(v, seen);
      if (bad) return bad;
    }
    return null;
  }
  if (obj instanceof Set) {
    for (const v of obj) {
      const bad = notRoundTripping(v, seen);
      if (bad) return bad;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(obj) as object | null;
  if (!Array.isArray(obj) && proto !== Object.prototype && proto !== null) return `an instance of ${obj.constructor?.name ?? 'a class'}`;
  if (Object.getOwnPropertySymbols(obj).length > 0) return 'a symbol-keyed property';
  for (const k in obj) {
    const bad = notRoundTripping((obj as Record<string, unknown>)[k], seen);
    if (bad) return bad;
  }
  return null;
}
