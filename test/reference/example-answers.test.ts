// /docs shows real answers: every operation's 200 carries its route's answer to its documented example
// (src/reference/example-answers.json, written by npm run docs:examples against the recorded world), which still
// parses as the route's schema; and no integer carries zod's ±9007199254740991, which Swagger UI showed as the
// value of a 0–100 index.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeSchema } from '../../src/catalog/responses.ts';
import answers from '../../src/reference/example-answers.json' with { type: 'json' };
import { makeApp, type TestApp } from '../helpers.ts';

const EXAMPLES: Record<string, unknown> = answers;
let t: TestApp;
let doc: { paths: Record<string, { get: { responses: Record<string, { content?: Record<string, { example?: unknown; schema: unknown }> }> } }> };
beforeAll(async () => {
  t = await makeApp({ LOG_LEVEL: 'silent' });
  doc = t.app.swagger() as never;
});
afterAll(() => t.app.close());

describe("the operations' example answers", () => {
  it("every route has one, which parses as the route's answer (nothing undocumented in it)", () => {
    const entries = t.app.services.catalog.entries;
    expect(Object.keys(EXAMPLES).sort()).toEqual(entries.map((e) => e.url).sort());
    for (const e of entries) {
      const parsed = envelopeSchema(e.def.data).safeParse(EXAMPLES[e.url]);
      expect(parsed.error?.issues ?? [], e.url).toEqual([]);
      expect(parsed.data, e.url).toEqual(EXAMPLES[e.url]);
    }
  });

  it("is each operation's 200 example in /openapi.json", () => {
    for (const [path, item] of Object.entries(doc.paths)) expect(item.get.responses['200']!.content!['application/json']!.example, path).toEqual(EXAMPLES[path]);
  });

  it('no integer has the safe-integer bounds; an answer\'s integers start at 0, and the 0–100 indexes say so', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/"(minimum|maximum)":-?9007199254740991/);
    const integers: Record<string, unknown>[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== 'object') return;
      if ((node as { type?: unknown }).type === 'integer') integers.push(node as Record<string, unknown>);
      Object.entries(node).forEach(([k, v]) => k !== 'example' && walk(v));
    };
    for (const item of Object.values(doc.paths)) walk(item.get.responses);
    expect(integers.length).toBeGreaterThan(50);
    expect(integers.filter((s) => typeof s.minimum !== 'number' || s.minimum < 0)).toEqual([]);
    const sentiment = doc.paths['/v1/sentiment']!.get.responses['200']!.content!['application/json']!.schema;
    expect(JSON.stringify(sentiment)).toContain('"type":"integer","minimum":0,"maximum":100');
  });
});
