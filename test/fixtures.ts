// Recorded upstream payloads, kept in this repository (test/fixtures/upstream/) so that a clone
// runs its tests with nothing beside it. Each NAME.json has a NAME.source.txt saying where and
// how it was recorded (copied from the project's shared samples, or captured for this repo).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const RECORDED_DIR = fileURLToPath(new URL('./fixtures/upstream/', import.meta.url));

/** A recorded payload, parsed (JSON): a fresh copy each call, so tests can edit it. */
export function recorded<T = any>(name: string): T {
  return JSON.parse(readFileSync(RECORDED_DIR + name, 'utf8')) as T;
}

/** A recorded payload as text (CSV, HTML). */
export function recordedText(name: string): string {
  return readFileSync(RECORDED_DIR + name, 'utf8');
}
