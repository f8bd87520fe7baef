// Answers made once and served again while every source they were made from is still fresh: the
// cached path without the route's parameter validation, handler and serialisation.
//
// An answer is remembered under its route and its exact query string only when it is a pure function of
// cached provider answers: its data was built with `derived` (envelope.ts: built once per provider
// answer, so the same object for as long as that answer is served), every source it names says until
// when it serves this route (FRESH_UNTIL: fetched + the route's TTL for it), and the handler did not say
// that its data reads the clock (or said until when it holds). The same query string validates the same
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
  /** Per source: `","sources":[{"provider":…,"fetched_at":…,"cached":true,"age_s":` and its fetch time. */
  sources: { text: string; fetchedMs: number }[];
  /** `}]` + the meta's other fields + `}}` */
  tail: string;
  /** Served until then (epoch ms, exclusive). */
  until: number;
}

/** How many answers are kept at most (least recently made dropped first). */
const MAX_ANSWERS = 10_000;

export class AnswerMemo {
  private readonly answers = new Map<string, Remembered>();

  constructor(private readonly recorder?: CacheRecorder) {}

  /** The key of a request: its route and its query string exactly as sent (`?` and all after it, or ''). */
  static keyOf(route: string, url: string): string {
    const q = url.indexOf('?');
    return q === -1 ? route : route + url.slice(q);
  }

  /** Keeps `answer` for `key` if it can be served again (see the top of this file). */
  remember(key: string, answer: Envelope<unknown>, now = Date.now()): void {
    const until = freshUntil(answer);
    if (until === undefined || until <= now) return;
    const data = derivedJson(answer.data);
    if (data === undefined) return;
    const { timestamp: _timestamp, sources, ...extra } = answer.meta;
    const extraJson = JSON.stringify(extra);
    this.answers.delete(key);
    this.answers.set(key, {
      head: `{"data":${data},"meta":{"timestamp":"`,
      sources: sources.map((s, i) => ({
        text: `${i === 0 ? '","sources":[' : '},'}{"provider":${JSON.stringify(s.provider)},"fetched_at":${JSON.stringify(s.fetched_at)},"cached":true,"age_s":`,
        fetchedMs: Date.parse(s.fetched_at),
      })),
      tail: `}]${extraJson === '{}' ? '' : `,${extraJson.slice(1, -1)}`}}}`,
      until,
    });
    if (this.answers.size > MAX_ANSWERS) this.answers.delete(this.answers.keys().next().value as string);
  }

  /** The answer's JSON for `key`, written for now, while it is fresh; else undefined. */
  serve(key: string, now = Date.now()): string | undefined {
    const a = this.answers.get(key);
    if (a === undefined) return undefined;
    if (a.until <= now) {
      this.answers.delete(key);
      return undefined;
    }
    let json = a.head + isoNow(now);
    for (const s of a.sources) {
      json += s.text + ageOf(s.fetchedMs, now);
      this.recorder?.hit('l1');
    }
    return json + a.tail;
  }

  clear(): void {
    this.answers.clear();
  }

  get size(): number {
    return this.answers.size;
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
