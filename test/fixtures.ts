// Recorded upstream payloads from ../shared/upstream-samples (with their provenance beside them).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SAMPLES_DIR = fileURLToPath(new URL('../../shared/upstream-samples/', import.meta.url));
const LOCAL_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** A shared recorded sample, parsed (JSON) — a fresh copy each call so tests can vary it. */
export function sample<T = any>(name: string): T {
  return JSON.parse(readFileSync(SAMPLES_DIR + name, 'utf8')) as T;
}

export function sampleText(name: string): string {
  return readFileSync(SAMPLES_DIR + name, 'utf8');
}

/** A fixture of this repo (test/fixtures/). */
export function fixture<T = any>(name: string): T {
  return JSON.parse(readFileSync(LOCAL_DIR + name, 'utf8')) as T;
}
