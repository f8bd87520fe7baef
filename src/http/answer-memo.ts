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
import type { CacheRecorder } from './cache.ts';
import { isoNow } from './clock.ts';
import { ageOf, derivedJson, FRESH_UNTIL, type Envelope } from './envelope.ts';

interface Remembered {
  /** `{"data":…,"meta":{"timestamp":"` */
  head: string;
  /** The same as UTF-8 bytes, for a large answer (see BYTES_FROM). */
  headBytes: Buffer | undefined;
  /** Per source: `","sources":[{"provider":…,"fetched_at":…,"cached":true,"age_s":` and its fetch time. */
  sources: { text: string; fetchedMs: number }[];
  /** `}]` + the meta's other fields + `}}` */
  tail: string;
  /** Served until then (epoch ms, exclusive). */
  until: number;
}

/**
 * From this size of data on, an answer is written as bytes: its data's bytes made once, the part written per
 * request appended (measured: for a 7 KB token-risk answer, 2.7 µs against 4.9 µs for building the string,
 * which Fastify then measures and Node encodes).
 */
const BYTES_FROM = 2048;

/** How many answers are kept at most (past it, all are dropped and made again as asked: a bound, not a policy). */
const MAX_ANSWERS = 10_000;

export class AnswerMemo {
  /** Per route, by the request's URL exactly as sent (the same URL, the same query string). */
  private readonly routes = new Map<string, Map<string, Remembered>>();
  private count = 0;

  constructor(private readonly recorder?: CacheRecorder) {}

  /** Keeps the `answer` of `route` to `url` if it can be served again (see the top of this file). */
  remember(route: string, url: string, answer: Envelope<unknown>, now = Date.now()): void {
    const until = freshUntil(answer);
    if (until === undefined || until <= now) return;
    const data = derivedJson(answer.data);
    if (data === undefined) return;
    const { timestamp: _timestamp, sources, ...extra } = answer.meta;
    const extraJson = JSON.stringify(extra);
    let answers = this.routes.get(route);
    if (answers === undefined) this.routes.set(route, (answers = new Map()));
    if (answers.delete(url)) this.count--;
    if (this.count >= MAX_ANSWERS) this.clear();
    this.count++;
    const head = `{"data":${data},"meta":{"timestamp":"`;
    answers.set(url, {
      head,
      headBytes: head.length >= BYTES_FROM ? Buffer.from(head, 'utf8') : undefined,
      sources: sources.map((s, i) => ({
        text: `${i === 0 ? '","sources":[' : '},'}{"provider":${JSON.stringify(s.provider)},"fetched_at":${JSON.stringify(s.fetched_at)},"cached":true,"age_s":`,
        fetchedMs: Date.parse(s.fetched_at),
      })),
      tail: `}]${extraJson === '{}' ? '' : `,${extraJson.slice(1, -1)}`}}}`,
      until,
    });
  }

  /** The JSON of `route`'s answer to `url`, written for now, while it is fresh (as bytes when large); else undefined. */
  serve(route: string, url: string, now = Date.now()): string | Buffer | undefined {
    const answers = this.routes.get(route);
    const a = answers?.get(url);
    if (a === undefined) return undefined;
    if (a.until <= now) {
      answers!.delete(url);
      this.count--;
      return undefined;
    }
    let written = isoNow(now);
    for (const s of a.sources) {
      written += s.text + ageOf(s.fetchedMs, now);
      this.recorder?.hit('l1');
    }
    written += a.tail;
    if (a.headBytes === undefined) return a.head + written;
    const rest = Buffer.from(written, 'utf8');
    return Buffer.concat([a.headBytes, rest], a.headBytes.length + rest.length);
  }

  clear(): void {
    this.routes.clear();
    this.count = 0;
  }

  get size(): number {
    return this.count;
  }
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
