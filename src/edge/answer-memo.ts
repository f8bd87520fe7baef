// Answers made once and served again while every source they were made from is still fresh: the
// cached path without the route's parameter validation, handler and serialisation.
//
// An answer is remembered under its route and its exact URL only when it is a pure function of
// cached provider answers: its data was built with `derived` (envelope.ts: built once per provider
// answer, so the same object for as long as that answer is served), every source it names says until
// when it serves this route (FRESH_UNTIL: fetched + the route's TTL for it), and the handler did not say
// that its data reads the clock (or said until when it holds). The same URL validates the same
// way and the same fresh provider answers give the same data, so until the first of those times the
// answer is the one the handler would make; only the time it is served and the sources' ages change,
// and those are written per request, in the same shape and order the serialiser writes them. The
// validation, the handler and the cache are bypassed, never the access checks or the rate limit: the
// access hooks serve from here only after they have admitted the request (see access-control.ts).
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { CacheRecorder } from '../upstream/cache.ts';
import { isoNow } from '../lib/clock.ts';
import { ageOf, derivedJson, FRESH_UNTIL, type Envelope } from '../upstream/envelope.ts';

interface Remembered {
  /** `{"data":…,"meta":{"timestamp":"` */
  head: string;
  /** The same as UTF-8 bytes, for a large answer (see BYTES_FROM). */
  headBytes: Buffer | undefined;
  /** Per source: `","sources":[{"provider":…,"fetched_at":…,"cached":true,"age_s":` and its fetch time. */
  sources: { text: string; after: string; fetchedMs: number }[];
  /** `}]` + the meta's other fields + `}}` */
  tail: string;
  /** Served until then (epoch ms, exclusive). */
  until: number;
  /** The answer as last written, and the millisecond it was written for: served again within that millisecond. */
  written: RememberedBody | undefined;
  writtenAt: number;
  /** What it holds, estimated: its text, its bytes, and the answer written for one millisecond. */
  bytes: number;
}

/**
 * From this size of data on, an answer's data is also kept as bytes, which each millisecond's answer copies
 * (a 7 KB token-risk answer would otherwise be a 7 KB string built and encoded again).
 */
const BYTES_FROM = 2048;

/**
 * How many answers are kept at most, whatever their size. Past it or past the byte budget, the expired ones are
 * dropped, and if that is not enough, all (made again as asked: a bound, not a policy).
 */
const MAX_ANSWERS = 10_000;

/** The byte budget when none is given: a quarter of CACHE_MAX_BYTES's default. */
const DEFAULT_MAX_BYTES = 16 * 1_048_576;

/** How often the answers past their time are freed, when nothing asks for them (ms). */
export const SWEEP_MS = 1000;

/** Bytes counted per answer beyond its text: the entry, its sources' array and the map's slot. */
const ANSWER_OVERHEAD = 256;

export interface AnswerMemoOptions {
  /** Most bytes the remembered answers hold (estimated: strings counted a byte a character). */
  maxBytes?: number;
}

/** What the remembered answers hold, and what was let go (/v1/status, /metrics). */
export interface AnswerMemoStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  /** Answers dropped to stay within the bounds (all at once, when the expired ones were not enough). */
  evicted: number;
  /** Answers freed when their time was up. */
  expired: number;
}

/**
 * A remembered answer as written for one millisecond: its JSON as UTF-8 bytes, and their length as text for
 * Content-Length (as Fastify sets it: Node checks every header value with a regular expression, which takes a
 * slower path for a number). Never changed once made (several sockets may still be writing it), so it is
 * shared by every request served in that millisecond: under load, most requests to a hot URL cost a lookup
 * and a write.
 */
export interface RememberedBody {
  readonly body: Buffer;
  readonly contentLength: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** What a paid answer changes in the headers the hooks set (settling's PAYMENT-RESPONSE, private Cache-Control). */
export interface HeaderChanges {
  set: Record<string, string>;
  remove: readonly string[];
}

/**
 * Sends a remembered answer: 200, the headers the request's hooks have set (request id, security headers,
 * CORS), with `changes` made to them, and the JSON, written to the socket as it is (Fastify's reply.send would
 * parse the content type and check the payload again; its response listeners — the log line, the metrics —
 * still run when the answer is sent).
 */
export function sendRemembered(reply: FastifyReply, answer: RememberedBody, changes?: HeaderChanges): void {
  reply.hijack();
  const headers = reply.getHeaders();
  if (changes) {
    for (const name of changes.remove) delete headers[name];
    Object.assign(headers, changes.set);
  }
  headers['content-type'] = JSON_TYPE;
  headers['content-length'] = answer.contentLength;
  const res = reply.raw;
  res.writeHead(200, headers as OutgoingHttpHeaders);
  res.end(answer.body);
}

export class AnswerMemo {
  /** Per route, by the request's URL exactly as sent (the same URL, the same query string). */
  private readonly routes = new Map<string, Map<string, Remembered>>();
  private count = 0;
  private bytes = 0;
  private evicted = 0;
  private expired = 0;
  private readonly maxBytes: number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly recorder?: CacheRecorder,
    options: AnswerMemoOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** Keeps the `answer` of `route` to `url` if it can be served again (see the top of this file). */
  remember(route: string, url: string, answer: Envelope<unknown>, now = Date.now()): void {
    const until = freshUntil(answer);
    if (until === undefined || until <= now) return;
    const data = derivedJson(answer.data);
    if (data === undefined) return;
    const { timestamp: _timestamp, sources, ...extra } = answer.meta;
    const extraJson = JSON.stringify(extra);
    const previous = this.routes.get(route)?.get(url);
    if (previous !== undefined) this.forget(this.routes.get(route)!, url, previous);
    const head = `{"data":${data},"meta":{"timestamp":"`;
    const headBytes = head.length >= BYTES_FROM ? Buffer.from(head, 'utf8') : undefined;
    const sourceTexts = sources.map((s, i) => {
      // A source's fields past its age (a failed one's `error`: a chain whose breaker is open), written after it.
      const { provider: _p, fetched_at: _f, cached: _c, age_s: _a, ...rest } = s;
      const restJson = JSON.stringify(rest);
      return {
        text: `${i === 0 ? '","sources":[' : '},'}{"provider":${JSON.stringify(s.provider)},"fetched_at":${JSON.stringify(s.fetched_at)},"cached":true,"age_s":`,
        after: restJson === '{}' ? '' : `,${restJson.slice(1, -1)}`,
        fetchedMs: Date.parse(s.fetched_at),
      };
    });
    const tail = `}]${extraJson === '{}' ? '' : `,${extraJson.slice(1, -1)}`}}}`;
    const text = head.length + tail.length + sourceTexts.reduce((n, s) => n + s.text.length + s.after.length, 0);
    const bytes = ANSWER_OVERHEAD + 2 * text + (headBytes?.length ?? 0);
    if (bytes > this.maxBytes) return;
    if (this.count >= MAX_ANSWERS || this.bytes + bytes > this.maxBytes) this.makeRoom(bytes, now);
    // (After making room, which may have dropped every route's map.)
    let answers = this.routes.get(route);
    if (answers === undefined) this.routes.set(route, (answers = new Map()));
    this.count++;
    this.bytes += bytes;
    answers.set(url, { head, headBytes, sources: sourceTexts, tail, until, written: undefined, writtenAt: -1, bytes });
  }

  /** Room for an answer of `bytes`: the expired answers go, and if that is not enough, all of them. */
  private makeRoom(bytes: number, now: number): void {
    this.sweep(now);
    if (this.count < MAX_ANSWERS && this.bytes + bytes <= this.maxBytes) return;
    this.evicted += this.count;
    this.clear();
  }

  private forget(answers: Map<string, Remembered>, url: string, a: Remembered): void {
    answers.delete(url);
    this.count--;
    this.bytes -= a.bytes;
  }

  /** Frees every answer past its time. */
  sweep(now = Date.now()): void {
    for (const answers of this.routes.values()) {
      for (const [url, a] of answers) {
        if (a.until > now) continue;
        this.forget(answers, url, a);
        this.expired++;
      }
    }
  }

  /** Sweeps every SWEEP_MS until stop(), so answers nobody asks for again are freed too. */
  start(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  stats(): AnswerMemoStats {
    return { entries: this.count, bytes: this.bytes, maxBytes: this.maxBytes, evicted: this.evicted, expired: this.expired };
  }

  /** Whether `route`'s answer to `url` is remembered and fresh (nothing counted: serve() counts what it serves). */
  holds(route: string, url: string, now = Date.now()): boolean {
    const a = this.routes.get(route)?.get(url);
    return a !== undefined && a.until > now;
  }

  /** `route`'s answer to `url`, written for now, while it is fresh; else undefined. */
  serve(route: string, url: string, now = Date.now()): RememberedBody | undefined {
    const answers = this.routes.get(route);
    const a = answers?.get(url);
    if (a === undefined) return undefined;
    if (a.until <= now) {
      this.forget(answers!, url, a);
      this.expired++;
      return undefined;
    }
    if (this.recorder !== undefined) for (let i = 0; i < a.sources.length; i++) this.recorder.hit('l1');
    if (a.writtenAt === now) return a.written!;
    // Only the time served (to the millisecond) and the sources' ages (to the second) move.
    let written = isoNow(now);
    for (const s of a.sources) written += s.text + ageOf(s.fetchedMs, now) + s.after;
    written += a.tail;
    // Always bytes, as the floor of every answer writes them: the socket's write path then takes one kind of
    // chunk whatever the answer (text and bytes alike there cost each answer more than the conversion, made
    // once per millisecond).
    const body = a.headBytes === undefined ? Buffer.from(a.head + written, 'utf8') : bytesOf(a.headBytes, written);
    a.written = { body, contentLength: String(body.length) };
    a.writtenAt = now;
    return a.written;
  }

  clear(): void {
    this.routes.clear();
    this.count = 0;
    this.bytes = 0;
  }

  get size(): number {
    return this.count;
  }
}

/** The large answer's data bytes and `rest`, as one buffer. */
function bytesOf(head: Buffer, rest: string): Buffer {
  const body = Buffer.allocUnsafe(head.length + Buffer.byteLength(rest));
  head.copy(body, 0);
  body.write(rest, head.length, 'utf8');
  return body;
}

/** The first time any part of the answer stops holding; undefined when a part does not say (then it is not kept). */
function freshUntil(answer: Envelope<unknown>): number | undefined {
  const sources = answer.meta.sources;
  if (!Array.isArray(sources) || sources.length === 0) return undefined;
  let until = answer[FRESH_UNTIL] ?? Infinity;
  for (const s of sources) {
    const t = s[FRESH_UNTIL];
    if (t === undefined) return undefined;
    if (t < until) until = t;
  }
  return until;
}
